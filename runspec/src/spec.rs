//! What a run is: one seed of a workload on a cluster, with a fault mix, maybe broken variants,
//! and a scheduler. Everything a replay needs and nothing else: a run with the same
//! [`RunSpec`] on the same build is the same run.

use crate::{ClockSkew, FaultMix, Mutation, ReadMode, SchedulerKind, SimStorage};
use std::time::Duration;

/// What runs on the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// Commands offered to every node, round after round; continuous invariants.
    Raft,
    /// 30 clerks against the key-value store; continuous invariants and the client history
    /// checked for linearizability.
    Kv,
    /// 30 clerks running list-append transactions against the key-value store (Elle's
    /// workload); continuous invariants and the transactions checked for strict
    /// serializability.
    ListAppend,
}

impl Workload {
    /// Every workload, in the order `--help` lists them.
    pub const ALL: [Workload; 3] = [Workload::Raft, Workload::Kv, Workload::ListAppend];

    /// The value as typed on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Raft => "raft",
            Workload::Kv => "kv",
            Workload::ListAppend => "list-append",
        }
    }

    /// Whether its clients run against the key-value service (its clerks, sessions and
    /// servers), not the bare node.
    pub fn uses_kv_service(self) -> bool {
        matches!(self, Workload::Kv | Workload::ListAppend)
    }

    /// The workload named `name`.
    pub fn from_name(name: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

/// The bounds of every setting, which the command line and the text form both enforce.
pub mod bounds {
    use std::ops::RangeInclusive;

    /// Nodes in the cluster (in an even one, half is not a majority).
    pub const NODES: RangeInclusive<u32> = 2..=9;
    /// Fault rounds per seed (raft workload).
    pub const ROUNDS: RangeInclusive<u32> = 1..=100_000;
    /// Simulated seconds per seed.
    pub const DURATION_SECONDS: RangeInclusive<f64> = 0.1..=86_400.0;
    /// Log bytes past which a service snapshots (256 B to 1 GiB).
    pub const SNAPSHOT_THRESHOLD: RangeInclusive<u64> = 256..=(1 << 30);
    /// PCT's bug depth.
    pub const PCT_DEPTH: RangeInclusive<u64> = 1..=20;
    /// Thread switches with neither simulated time nor the trace moving past which a
    /// deterministic run is a livelock (at most the scheduling steps it may take in all).
    pub const LIVELOCK_SWITCHES: RangeInclusive<u64> = 1_000..=100_000_000;
    /// The default of [`LIVELOCK_SWITCHES`]: about 500 times the most any correct seed was
    /// seen to make (4,041; docs/limits.md has the measurement).
    pub const DEFAULT_LIVELOCK_SWITCHES: u64 = 2_000_000;
}

/// One run: replayed exactly by any build of the same code, on a deterministic scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    /// The seed: every random choice of the run (events, thread switches) comes from it.
    pub seed: u64,
    /// What runs on the cluster.
    pub workload: Workload,
    /// Nodes in the cluster ([`bounds::NODES`]).
    pub nodes: u32,
    /// Fault rounds (raft workload; each 50-500 ms of simulated time).
    pub rounds: u32,
    /// Simulated time (raft: the rounds stop early once it has passed; kv: the clients' run
    /// time, 27 s when `None`).
    pub duration: Option<Duration>,
    /// No message loss (delays and partitions still happen).
    pub reliable: bool,
    /// The kinds of fault injected.
    pub faults: FaultMix,
    /// How gets are served (key-value workload).
    pub read_mode: ReadMode,
    /// Every service snapshots once the log in its stored state takes more than this many
    /// bytes (`None`: never).
    pub snapshot_threshold: Option<u64>,
    /// The node's deliberately broken behaviours switched on (none: the correct node).
    pub mutations: Vec<Mutation>,
    /// Who decides every thread switch.
    pub scheduler: SchedulerKind,
    /// PCT's bug depth (with [`SchedulerKind::Pct`]).
    pub pct_depth: u64,
    /// On a deterministic scheduler, thread switches with neither simulated time nor the trace
    /// moving past which the run stops as a livelock ([`bounds::LIVELOCK_SWITCHES`]).
    pub livelock_switches: u64,
    /// With membership changes, the Configuration overlap invariant is off: the run goes on past
    /// two configurations whose majorities share no node, to show what that leads to (two
    /// leaders of one term, lost commits). Never on by default, never drawn by the swarm.
    pub overlap_unchecked: bool,
    /// Where each node keeps its state: the simulation's two-copy disk, or the server's
    /// write-ahead log over a disk in memory.
    pub storage: SimStorage,
}

impl Default for RunSpec {
    /// Seed 0 of the default chaos run: the raft workload on 5 nodes, 200 rounds, every fault,
    /// clocks within their bound, no snapshots, the random scheduler.
    fn default() -> RunSpec {
        RunSpec {
            seed: 0,
            workload: Workload::Raft,
            nodes: 5,
            rounds: 200,
            duration: None,
            reliable: false,
            faults: FaultMix::DEFAULT,
            read_mode: ReadMode::ReadIndex,
            snapshot_threshold: None,
            mutations: Vec::new(),
            scheduler: SchedulerKind::Random,
            pct_depth: 3,
            livelock_switches: bounds::DEFAULT_LIVELOCK_SWITCHES,
            overlap_unchecked: false,
            storage: SimStorage::Copies,
        }
    }
}

impl RunSpec {
    /// This run with another seed.
    pub fn with_seed(&self, seed: u64) -> RunSpec {
        RunSpec {
            seed,
            ..self.clone()
        }
    }

    /// Whether the run asks for a deliberately broken behaviour (a mutation, or the unsafe-local
    /// read mode of the key-value workload), which only a build with broken variants runs.
    pub fn asks_for_broken(&self) -> bool {
        !self.mutations.is_empty()
            || (self.workload == Workload::Kv && self.read_mode.is_deliberately_broken())
    }

    /// Whether the clock skew is the default one (within the nodes' bound).
    pub(crate) fn default_skew(&self) -> bool {
        self.faults.skew == ClockSkew::WithinBound
    }

    /// Checks every setting against its bound and the rules between them.
    pub fn check(&self) -> Result<(), String> {
        let within = |name: &str, ok: bool, range: String| {
            if ok {
                Ok(())
            } else {
                Err(format!("{name} is outside {range}"))
            }
        };
        within(
            "--nodes",
            bounds::NODES.contains(&self.nodes),
            format!("{:?}", bounds::NODES),
        )?;
        within(
            "--rounds",
            bounds::ROUNDS.contains(&self.rounds),
            format!("{:?}", bounds::ROUNDS),
        )?;
        within(
            "--pct-depth",
            bounds::PCT_DEPTH.contains(&self.pct_depth),
            format!("{:?}", bounds::PCT_DEPTH),
        )?;
        within(
            "--livelock-switches",
            bounds::LIVELOCK_SWITCHES.contains(&self.livelock_switches),
            format!("{:?}", bounds::LIVELOCK_SWITCHES),
        )?;
        if let Some(bytes) = self.snapshot_threshold {
            within(
                "--snapshot-threshold",
                bounds::SNAPSHOT_THRESHOLD.contains(&bytes),
                format!("{:?}", bounds::SNAPSHOT_THRESHOLD),
            )?;
        }
        if let Some(duration) = self.duration {
            within(
                "--duration",
                bounds::DURATION_SECONDS.contains(&duration.as_secs_f64()),
                format!("{:?} s", bounds::DURATION_SECONDS),
            )?;
        }
        if self.faults.liveness && self.workload != Workload::Raft {
            return Err(
                "--liveness is the raft workload's (the key-value workload's clients \
                        need every node back at the end)"
                    .into(),
            );
        }
        if self.faults.torn_writes && self.workload != Workload::Raft {
            return Err(
                "--torn-writes is the raft workload's (the key-value workload's crashes \
                        come between saves)"
                    .into(),
            );
        }
        if self.faults.corruption && self.workload != Workload::Raft {
            return Err(
                "--corruption is the raft workload's (the key-value workload's crashes \
                        leave the disk as it was)"
                    .into(),
            );
        }
        if self.faults.misdirected_writes && self.workload != Workload::Raft {
            return Err(
                "--misdirected-writes is the raft workload's (the key-value workload's \
                        crashes come between saves)"
                    .into(),
            );
        }
        if self.faults.membership && self.faults.liveness {
            return Err(
                "--membership and --liveness do not go together yet: liveness mode fails a \
                 minority of every node for good, which may be a majority of the voters"
                    .into(),
            );
        }
        if self.overlap_unchecked && !self.faults.membership {
            return Err(
                "--without-overlap-check goes with --membership (the invariant it turns off \
                 checks configurations)"
                    .into(),
            );
        }
        if self.faults.session_churn && !self.workload.uses_kv_service() {
            return Err(
                "--session-churn is the key-value workload's (its clients have sessions)".into(),
            );
        }
        if self.storage == SimStorage::Log {
            let copies_only = [
                (self.faults.torn_writes, "--torn-writes"),
                (self.faults.corruption, "--corruption"),
                (self.faults.misdirected_writes, "--misdirected-writes"),
                (self.faults.read_errors, "--read-errors"),
            ];
            if let Some((_, flag)) = copies_only.iter().find(|(on, _)| *on) {
                return Err(format!(
                    "{flag} is the two-copy disk's (--storage copies); the log's disk has \
                     crashes and power cuts (--power-loss), which tear what was not synced"
                ));
            }
        }
        if self.scheduler == SchedulerKind::RandomOneStream {
            return Err("the random-one-stream scheduler is the benchmarks' only".into());
        }
        Ok(())
    }
}
