//! The detectors a broken variant can be killed by, one column each in the kill matrix.

use super::Broken;
use crate::runner::Sim;
use node::kv::ReadMode;
use node::MutationSet;
use runspec::{RunSpec, SimStorage, Workload};

/// The kinds of detector, one column each in the kill matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Column {
    /// Continuous invariants (and liveness bounds) in a targeted scenario or chaos.
    Invariants,
    /// Linearizability of the key-value workload's history.
    Linearizability,
    /// A loom model.
    Loom,
    /// A shuttle exploration.
    Shuttle,
    /// The chaos workload on the deterministic engine (`interleave chaos` itself).
    Chaos,
}

impl Column {
    /// Every column, in order.
    pub const ALL: [Column; 5] = [
        Column::Invariants,
        Column::Linearizability,
        Column::Loom,
        Column::Shuttle,
        Column::Chaos,
    ];

    /// The column's heading.
    pub fn title(self) -> &'static str {
        match self {
            Column::Invariants => "invariants (sim)",
            Column::Linearizability => "linearizability (KV)",
            Column::Loom => "loom model",
            Column::Shuttle => "shuttle schedules",
            Column::Chaos => "chaos (deterministic)",
        }
    }
}

/// A scenario run in simulated time with a variant's mutations.
pub type ScenarioFn = fn(&Sim, &MutationSet);

/// One detector.
#[derive(Clone, Copy, Debug)]
pub enum Detector {
    /// A scenario (or chaos) on seeds 1..=`seeds`; any failure kills.
    Scenario {
        /// Its name in the matrix.
        name: &'static str,
        /// The scenario.
        run: ScenarioFn,
        /// Seeds to try.
        seeds: u64,
    },
    /// The key-value workload on seeds 1..=`seeds`; a non-linearizable history kills.
    Kv {
        /// How gets are served.
        read_mode: ReadMode,
        /// Seeds to try.
        seeds: u64,
    },
    /// The key-value workload shaped to hunt lease bugs
    /// ([`crate::KvWorkloadConfig::lease_hunt`]: lease reads, clocks drifting within the bound)
    /// on seeds 1..=`seeds`; a non-linearizable history kills.
    LeaseHunt {
        /// Seeds to try.
        seeds: u64,
    },
    /// The key-value workload with sessions that keep expiring
    /// ([`crate::KvWorkloadConfig::session_churn`]) on seeds 1..=`seeds`; a non-linearizable
    /// history kills.
    SessionChurn {
        /// Seeds to try.
        seeds: u64,
    },
    /// The key-value workload's clients running list-append transactions on seeds
    /// 1..=`seeds`; a history that is not strictly serializable kills.
    Transactions {
        /// Seeds to try.
        seeds: u64,
    },
    /// A loom test that passes only if loom rejects the variant.
    Loom {
        /// The test binary (`loom-tests/tests/NAME.rs`).
        binary: &'static str,
        /// The test.
        test: &'static str,
    },
    /// A shuttle test that passes only if shuttle finds the variant.
    Shuttle {
        /// The test.
        test: &'static str,
    },
    /// `interleave chaos` on seeds 1..=`seeds` with the default engine; any failure kills. Run
    /// by the `interleave` binary, which has the deterministic engine. Every variant gets one:
    /// `kills` says whether chaos must find it, or only its targeted detectors can.
    Chaos {
        /// Which workload.
        workload: ChaosWorkload,
        /// Seeds to try.
        seeds: u64,
        /// Whether chaos must kill the variant within `seeds`.
        kills: bool,
    },
}

impl Detector {
    /// Whether this detector must kill its variant (every detector but a chaos run that the
    /// catalogue says misses it).
    pub fn must_kill(&self) -> bool {
        !matches!(self, Detector::Chaos { kills: false, .. })
    }
}

/// The workload a [`Detector::Chaos`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChaosWorkload {
    /// Commands offered to every node, continuous invariants.
    Raft,
    /// The key-value store with gets served this way, and its history checked.
    Kv(ReadMode),
    /// [`ChaosWorkload::Raft`] with snapshots every [`CHAOS_SNAPSHOT_THRESHOLD`] bytes of log.
    RaftSnapshots,
    /// [`ChaosWorkload::Kv`] with snapshots every [`CHAOS_SNAPSHOT_THRESHOLD`] bytes of log.
    KvSnapshots(ReadMode),
    /// [`ChaosWorkload::Raft`] in liveness mode: a minority fails for good at the end, and the
    /// rest must commit.
    RaftLiveness,
    /// [`ChaosWorkload::Raft`] whose crashes are power losses: a crashed node's disk loses what
    /// it had not synced.
    RaftPowerLoss,
    /// [`ChaosWorkload::RaftPowerLoss`] on the server's write-ahead log (`--storage log`), with
    /// snapshots: the log rolls its segments over, compacts and loses what was not synced.
    RaftLogPowerLoss,
    /// [`ChaosWorkload::Raft`] with latent read errors: a crashed node's disk fails its next
    /// read.
    RaftReadErrors,
    /// [`ChaosWorkload::Raft`] with torn writes: half of the crashes tear the node's next save.
    RaftTornWrites,
    /// [`ChaosWorkload::Raft`] with corruption at rest: half of the restarts are put off by a
    /// bit flipped in one copy of a crashed node's state.
    RaftCorruption,
    /// [`ChaosWorkload::Raft`] with misdirected writes: half of the crashes come right after a
    /// save that wrote one copy over the other.
    RaftMisdirectedWrites,
    /// The key-value store's list-append transactions, checked for strict serializability.
    ListAppend,
    /// [`ChaosWorkload::Raft`] with membership changes: three voters at first, and learners
    /// added, promoted, demoted and removed while the other faults go on.
    RaftMembership,
}

/// The snapshot threshold of the chaos workloads with snapshots: small, so that compaction,
/// installs and restores happen many times a seed.
pub const CHAOS_SNAPSHOT_THRESHOLD: u64 = 1024;

impl ChaosWorkload {
    /// The read mode of a key-value workload.
    pub fn read_mode(self) -> Option<ReadMode> {
        match self {
            ChaosWorkload::Raft
            | ChaosWorkload::RaftSnapshots
            | ChaosWorkload::RaftLiveness
            | ChaosWorkload::RaftPowerLoss
            | ChaosWorkload::RaftLogPowerLoss
            | ChaosWorkload::RaftReadErrors
            | ChaosWorkload::RaftTornWrites
            | ChaosWorkload::RaftCorruption
            | ChaosWorkload::RaftMisdirectedWrites
            | ChaosWorkload::RaftMembership
            | ChaosWorkload::ListAppend => None,
            ChaosWorkload::Kv(read_mode) | ChaosWorkload::KvSnapshots(read_mode) => Some(read_mode),
        }
    }

    /// Whether its nodes take snapshots.
    pub fn snapshots(self) -> bool {
        matches!(
            self,
            ChaosWorkload::RaftSnapshots
                | ChaosWorkload::KvSnapshots(_)
                | ChaosWorkload::RaftLogPowerLoss
        )
    }

    /// How the kill matrix and the benchmarks name it (`raft`, `kv, lease, snapshots`).
    pub fn describe(self) -> String {
        let mut text = match self.read_mode() {
            None if self == ChaosWorkload::ListAppend => "list-append".to_string(),
            None => "raft".to_string(),
            Some(read_mode) => format!("kv, {read_mode}"),
        };
        if self.snapshots() {
            text.push_str(", snapshots");
        }
        if self == ChaosWorkload::RaftLiveness {
            text.push_str(", liveness");
        }
        if self == ChaosWorkload::RaftPowerLoss {
            text.push_str(", power loss");
        }
        if self == ChaosWorkload::RaftLogPowerLoss {
            text.push_str(", the log, power loss");
        }
        if self == ChaosWorkload::RaftReadErrors {
            text.push_str(", read errors");
        }
        if self == ChaosWorkload::RaftTornWrites {
            text.push_str(", torn writes");
        }
        if self == ChaosWorkload::RaftCorruption {
            text.push_str(", corruption");
        }
        if self == ChaosWorkload::RaftMisdirectedWrites {
            text.push_str(", misdirected writes");
        }
        if self == ChaosWorkload::RaftMembership {
            text.push_str(", membership");
        }
        text
    }

    /// The run (seed 0, the random scheduler) this workload makes with `broken` switched on
    /// (none: the correct build, which serves the unsafe mode's reads by ReadIndex).
    pub fn spec(self, broken: Option<Broken>) -> RunSpec {
        let mut spec = RunSpec::default();
        if let Some(read_mode) = self.read_mode() {
            spec.workload = Workload::Kv;
            spec.read_mode = match (broken, read_mode) {
                (None, ReadMode::UnsafeLocal) => ReadMode::ReadIndex,
                (Some(Broken::UnsafeLocalReads), _) => ReadMode::UnsafeLocal,
                _ => read_mode,
            };
        }
        if self == ChaosWorkload::ListAppend {
            spec.workload = Workload::ListAppend;
        }
        if self.snapshots() {
            spec.snapshot_threshold = Some(CHAOS_SNAPSHOT_THRESHOLD);
        }
        spec.faults.liveness = self == ChaosWorkload::RaftLiveness;
        spec.faults.power_loss = matches!(
            self,
            ChaosWorkload::RaftPowerLoss | ChaosWorkload::RaftLogPowerLoss
        );
        if self == ChaosWorkload::RaftLogPowerLoss {
            spec.storage = SimStorage::Log;
        }
        spec.faults.read_errors = self == ChaosWorkload::RaftReadErrors;
        spec.faults.torn_writes = self == ChaosWorkload::RaftTornWrites;
        spec.faults.corruption = self == ChaosWorkload::RaftCorruption;
        spec.faults.misdirected_writes = self == ChaosWorkload::RaftMisdirectedWrites;
        spec.faults.membership = self == ChaosWorkload::RaftMembership;
        if let Some(Broken::Node(mutation)) = broken {
            spec.mutations = vec![mutation];
        }
        spec
    }
}

/// Seeds the chaos column tries on the raft workload (a seed takes ~50 ms).
pub const CHAOS_RAFT_SEEDS: u64 = 100;
/// Seeds the chaos column tries on the key-value workload (a seed takes ~1 s).
pub const CHAOS_KV_SEEDS: u64 = 20;
/// Raft chaos, which must find the variant.
pub(super) const CHAOS_RAFT: Detector = Detector::Chaos {
    workload: ChaosWorkload::Raft,
    seeds: CHAOS_RAFT_SEEDS,
    kills: true,
};
/// Raft chaos, which does not find the variant: its targeted detector does.
pub(super) const CHAOS_RAFT_MISSES: Detector = Detector::Chaos {
    workload: ChaosWorkload::Raft,
    seeds: CHAOS_RAFT_SEEDS,
    kills: false,
};
/// Raft chaos in liveness mode, which must find the variant.
pub(super) const CHAOS_RAFT_LIVENESS: Detector = Detector::Chaos {
    workload: ChaosWorkload::RaftLiveness,
    seeds: CHAOS_RAFT_SEEDS,
    kills: true,
};
/// Raft chaos whose crashes are power losses, which must find the variant.
pub(super) const CHAOS_RAFT_POWER_LOSS: Detector = Detector::Chaos {
    workload: ChaosWorkload::RaftPowerLoss,
    seeds: CHAOS_RAFT_SEEDS,
    kills: true,
};
/// Raft chaos on the server's log whose crashes are power losses, which must find the variant.
pub(super) const CHAOS_RAFT_LOG_POWER_LOSS: Detector = Detector::Chaos {
    workload: ChaosWorkload::RaftLogPowerLoss,
    seeds: CHAOS_RAFT_SEEDS,
    kills: true,
};
/// Raft chaos with latent read errors, which must find the variant.
pub(super) const CHAOS_RAFT_READ_ERRORS: Detector = Detector::Chaos {
    workload: ChaosWorkload::RaftReadErrors,
    seeds: CHAOS_RAFT_SEEDS,
    kills: true,
};
/// Raft chaos with torn writes, which must find the variant.
pub(super) const CHAOS_RAFT_TORN_WRITES: Detector = Detector::Chaos {
    workload: ChaosWorkload::RaftTornWrites,
    seeds: CHAOS_RAFT_SEEDS,
    kills: true,
};
/// Raft chaos with corruption at rest, which must find the variant.
pub(super) const CHAOS_RAFT_CORRUPTION: Detector = Detector::Chaos {
    workload: ChaosWorkload::RaftCorruption,
    seeds: CHAOS_RAFT_SEEDS,
    kills: true,
};
/// Raft chaos with misdirected writes, which must find the variant.
pub(super) const CHAOS_RAFT_MISDIRECTED_WRITES: Detector = Detector::Chaos {
    workload: ChaosWorkload::RaftMisdirectedWrites,
    seeds: CHAOS_RAFT_SEEDS,
    kills: true,
};
/// Key-value chaos with gets served by `read_mode`, which does not find the variant: its
/// targeted detector does.
pub(super) const fn chaos_kv_misses(read_mode: ReadMode) -> Detector {
    Detector::Chaos {
        workload: ChaosWorkload::Kv(read_mode),
        seeds: CHAOS_KV_SEEDS,
        kills: false,
    }
}
/// Raft chaos with snapshots, which does not find the variant: its targeted detector does.
pub(super) const CHAOS_RAFT_SNAPSHOTS_MISSES: Detector = Detector::Chaos {
    workload: ChaosWorkload::RaftSnapshots,
    seeds: CHAOS_RAFT_SEEDS,
    kills: false,
};
/// Key-value chaos with snapshots and gets served by `read_mode`, which must find the variant.
pub(super) const fn chaos_kv_snapshots(read_mode: ReadMode) -> Detector {
    Detector::Chaos {
        workload: ChaosWorkload::KvSnapshots(read_mode),
        seeds: CHAOS_KV_SEEDS,
        kills: true,
    }
}
/// Raft chaos with membership changes, which must find the variant.
pub(super) const CHAOS_RAFT_MEMBERSHIP: Detector = Detector::Chaos {
    workload: ChaosWorkload::RaftMembership,
    seeds: CHAOS_RAFT_SEEDS,
    kills: true,
};
/// List-append chaos, which must find the variant.
pub(super) const CHAOS_LIST_APPEND: Detector = Detector::Chaos {
    workload: ChaosWorkload::ListAppend,
    seeds: CHAOS_KV_SEEDS,
    kills: true,
};
pub(super) const fn chaos_kv(read_mode: ReadMode) -> Detector {
    Detector::Chaos {
        workload: ChaosWorkload::Kv(read_mode),
        seeds: CHAOS_KV_SEEDS,
        kills: true,
    }
}

impl Detector {
    /// Its column.
    pub fn column(&self) -> Column {
        match self {
            Detector::Scenario { .. } => Column::Invariants,
            Detector::Kv { .. }
            | Detector::LeaseHunt { .. }
            | Detector::SessionChurn { .. }
            | Detector::Transactions { .. } => Column::Linearizability,
            Detector::Loom { .. } => Column::Loom,
            Detector::Shuttle { .. } => Column::Shuttle,
            Detector::Chaos { .. } => Column::Chaos,
        }
    }
}
