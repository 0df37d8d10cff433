//! Swarm testing (Groce et al., "Swarm Testing", ISSTA 2012; TigerBeetle's simulator draws its
//! own fault mix per seed too): every seed draws its own configuration from the seed, so one
//! range of seeds covers cluster sizes, fault mixes and snapshot settings that no fixed mix
//! reaches. A fault left out of a run is as useful as one put in: a crash-free seed lets a
//! partition bug build up, a reliable network lets a long log grow.
//!
//! The draw is a concrete [`RunSpec`]: its replay line and schedule notes name every drawn
//! setting, so a swarm seed replays without knowing it was drawn.

use crate::{ClockSkew, FaultMix, ReadMode, RunSpec, SimStorage, Workload};
use std::ops::RangeInclusive;

/// Cluster sizes a swarm seed draws among (even ones included: half is not a majority).
pub const SWARM_NODES: RangeInclusive<u32> = 3..=7;

/// Snapshot thresholds a swarm seed draws among when it snapshots (small ones compact, install
/// and restore many times a run; large ones let a follower fall far behind first).
pub const SWARM_SNAPSHOT_THRESHOLDS: [u64; 4] = [512, 1024, 4096, 65_536];

/// Read modes a swarm seed of the key-value workload draws among (every correct one).
pub const SWARM_READ_MODES: [ReadMode; 3] = [ReadMode::Log, ReadMode::ReadIndex, ReadMode::Lease];

/// Mixed into the seed so that the swarm's draws are not the simulation's first numbers.
const SWARM_SALT: u64 = 0x5741_524d_5f53_4545; // "WARM_SEE"

impl RunSpec {
    /// This run's seed with the configuration the seed draws: the cluster size
    /// ([`SWARM_NODES`]), message loss, the key-value workload's read mode
    /// ([`SWARM_READ_MODES`]; a deliberately broken one is kept), which kinds of fault are on
    /// (each one half the time, crashes as power losses too; the key-value workload's session
    /// churn one time in three; membership changes half the time outside liveness mode, under
    /// every workload's clients), the clock skew, snapshots ([`SWARM_SNAPSHOT_THRESHOLDS`],
    /// half the time), and, last, the storage: the write-ahead log that ships half the time
    /// (then without the two-copy disk's own faults). The workload, broken variants, scheduler,
    /// rounds and duration stay as they are. Clocks beyond their bound are drawn only where nothing depends on them (not
    /// for lease reads, which are deliberately unsafe then).
    pub fn swarmed(&self) -> RunSpec {
        let mut draws = Draws::new(self.seed);
        let nodes = SWARM_NODES.start() + draws.below(SWARM_NODES.count() as u64) as u32;
        let reliable = draws.one_in(3);
        let read_mode = match self.workload {
            Workload::Kv if !self.read_mode.is_deliberately_broken() => {
                SWARM_READ_MODES[draws.below(SWARM_READ_MODES.len() as u64) as usize]
            }
            _ => self.read_mode,
        };
        let leases = self.workload == Workload::Kv && read_mode == ReadMode::Lease;
        let skews: &[ClockSkew] = if leases {
            &[ClockSkew::Off, ClockSkew::WithinBound]
        } else {
            &ClockSkew::ALL
        };
        let faults = FaultMix {
            crashes: draws.one_in(2),
            partitions: draws.one_in(2),
            one_way: draws.one_in(2),
            skew: skews[draws.below(skews.len() as u64) as usize],
            pauses: draws.one_in(2),
            fault_points: draws.one_in(2),
            // Liveness mode is the raft workload's end (drawn either way, so the draws after
            // it do not depend on the workload).
            liveness: draws.one_in(2) && self.workload == Workload::Raft,
            power_loss: false,
            read_errors: false,
            torn_writes: false,
            corruption: false,
            misdirected_writes: false,
            session_churn: false,
            membership: false,
        };
        let snapshot_threshold = draws.one_in(2).then(|| {
            SWARM_SNAPSHOT_THRESHOLDS[draws.below(SWARM_SNAPSHOT_THRESHOLDS.len() as u64) as usize]
        });
        // Drawn last, so every draw before them is what it was before power losses and read
        // errors were drawn.
        let faults = FaultMix {
            power_loss: draws.one_in(2),
            ..faults
        };
        let faults = FaultMix {
            read_errors: draws.one_in(2),
            ..faults
        };
        // The raft workload's, like liveness mode.
        let faults = FaultMix {
            torn_writes: draws.one_in(2) && self.workload == Workload::Raft,
            ..faults
        };
        // The key-value workload's, one time in three: most of its operations stay known.
        let faults = FaultMix {
            session_churn: draws.one_in(3) && self.workload.uses_kv_service(),
            ..faults
        };
        // The raft workload's storage faults of one copy, drawn after every other draw.
        let faults = FaultMix {
            corruption: draws.one_in(2) && self.workload == Workload::Raft,
            ..faults
        };
        let faults = FaultMix {
            misdirected_writes: draws.one_in(2) && self.workload == Workload::Raft,
            ..faults
        };
        // Membership changes, drawn after every other draw (and not with liveness mode, whose
        // minority failed for good could be a majority of the voters): under the raft
        // workload's commands and under the key-value and list-append clients alike.
        let faults = FaultMix {
            membership: draws.one_in(2) && !faults.liveness,
            ..faults
        };
        // The storage engine that ships, half the time, drawn after every other draw: a seed
        // that draws it leaves out the two-copy disk's own faults (torn, corrupted and
        // misdirected copies, read errors), which the log's disk does not have. A seed that
        // keeps the two-copy disk draws what it drew before the log joined the draws.
        let storage = if self.storage == SimStorage::Copies && draws.one_in(2) {
            SimStorage::Log
        } else {
            self.storage
        };
        let mut drawn = RunSpec {
            nodes,
            reliable,
            read_mode,
            faults,
            snapshot_threshold,
            storage,
            ..self.clone()
        };
        drawn.fit_faults_to_storage();
        debug_assert!(drawn.check().is_ok(), "a swarm draw is a valid run");
        drawn
    }
}

impl RunSpec {
    /// On the write-ahead log, leaves out the two-copy disk's own faults (torn, corrupted and
    /// misdirected copies, read errors), which the log's disk does not have: what a drawn or
    /// recombined run does so that it is a run [`RunSpec::check`] accepts.
    pub fn fit_faults_to_storage(&mut self) {
        if self.storage == SimStorage::Log {
            self.faults = FaultMix {
                torn_writes: false,
                corruption: false,
                misdirected_writes: false,
                read_errors: false,
                ..self.faults
            };
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a small, well-mixed stream from one number, here so
/// that the vocabulary depends on no random-number crate.
struct Draws {
    state: u64,
}

impl Draws {
    fn new(seed: u64) -> Draws {
        Draws {
            state: seed ^ SWARM_SALT,
        }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` small: the bias of the remainder is below 2^-58).
    fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "a draw among no choices");
        self.next() % n
    }

    /// True one time in `n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn drawn(base: &RunSpec, seeds: RangeInclusive<u64>) -> Vec<RunSpec> {
        seeds.map(|seed| base.with_seed(seed).swarmed()).collect()
    }

    #[test]
    fn a_seed_draws_the_same_configuration_every_time() {
        let base = RunSpec::default();
        assert_eq!(drawn(&base, 1..=50), drawn(&base, 1..=50));
    }

    #[test]
    fn a_range_of_seeds_covers_every_size_and_every_fault_both_ways() {
        let runs = drawn(&RunSpec::default(), 1..=200);
        let sizes: BTreeSet<u32> = runs.iter().map(|run| run.nodes).collect();
        assert_eq!(sizes, SWARM_NODES.collect());
        let skews: BTreeSet<ClockSkew> = runs.iter().map(|run| run.faults.skew).collect();
        assert_eq!(skews.len(), ClockSkew::ALL.len());
        for (name, on) in [
            (
                "crashes",
                runs.iter().filter(|run| run.faults.crashes).count(),
            ),
            (
                "pauses",
                runs.iter().filter(|run| run.faults.pauses).count(),
            ),
            ("reliable", runs.iter().filter(|run| run.reliable).count()),
            (
                "power losses",
                runs.iter().filter(|run| run.faults.power_loss).count(),
            ),
            (
                "read errors",
                runs.iter().filter(|run| run.faults.read_errors).count(),
            ),
            (
                "torn writes",
                runs.iter().filter(|run| run.faults.torn_writes).count(),
            ),
            (
                "corruption",
                runs.iter().filter(|run| run.faults.corruption).count(),
            ),
            (
                "misdirected writes",
                runs.iter()
                    .filter(|run| run.faults.misdirected_writes)
                    .count(),
            ),
            (
                "membership changes",
                runs.iter().filter(|run| run.faults.membership).count(),
            ),
            (
                "the write-ahead log",
                runs.iter()
                    .filter(|run| run.storage == SimStorage::Log)
                    .count(),
            ),
            (
                "snapshots",
                runs.iter()
                    .filter(|run| run.snapshot_threshold.is_some())
                    .count(),
            ),
        ] {
            assert!((40..=160).contains(&on), "{name} on in {on} of 200 seeds");
        }
    }

    #[test]
    fn what_the_run_is_about_is_not_drawn() {
        let base = RunSpec {
            workload: Workload::Kv,
            mutations: vec![crate::Mutation::ForgetVote],
            rounds: 17,
            ..RunSpec::default()
        };
        let runs = drawn(&base, 1..=100);
        for run in &runs {
            assert_eq!(
                (run.workload, &run.mutations, run.rounds),
                (base.workload, &base.mutations, base.rounds)
            );
            if run.read_mode == ReadMode::Lease {
                assert_ne!(
                    run.faults.skew,
                    ClockSkew::BeyondBound,
                    "lease reads are deliberately unsafe beyond the bound"
                );
            }
        }
        let changing = runs.iter().filter(|run| run.faults.membership).count();
        assert!(
            (25..=75).contains(&changing),
            "the configuration changes under the clients in {changing} of 100"
        );
        let churning = runs.iter().filter(|run| run.faults.session_churn).count();
        assert!(
            (15..=60).contains(&churning),
            "session churn in {churning} of 100"
        );
        let modes: BTreeSet<ReadMode> = runs.iter().map(|run| run.read_mode).collect();
        assert_eq!(modes, SWARM_READ_MODES.into_iter().collect());
        let broken = RunSpec {
            read_mode: ReadMode::UnsafeLocal,
            ..base
        };
        assert!(drawn(&broken, 1..=20)
            .iter()
            .all(|run| run.read_mode == ReadMode::UnsafeLocal));
    }

    #[test]
    fn a_drawn_run_reads_back_from_its_replay_flags() {
        for run in drawn(&RunSpec::default(), 1..=100) {
            assert_eq!(RunSpec::parse_flags(run.seed, &run.flags()), Ok(run));
        }
    }
}
