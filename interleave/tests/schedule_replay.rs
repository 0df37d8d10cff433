//! A run's recorded schedule is the run: following it (with the seed) reproduces the run
//! exactly, on both workloads, failing or not.
#![cfg(not(any(loom, shuttle)))]

use interleave::engines::{run_seed, run_seed_following};
use interleave::mutants::chaos_workload;
use interleave::run_spec::{EngineChoice, SchedulerKind};
use node::kv::ReadMode;
use sim::mutants::ChaosWorkload;
use std::time::Duration;

fn engine() -> EngineChoice {
    EngineChoice {
        scheduler: SchedulerKind::Random,
        pct_depth: 3,
        watchdog: Duration::from_secs(60),
    }
}

#[test]
fn following_a_runs_recorded_schedule_reproduces_the_run() {
    for workload in [ChaosWorkload::Raft, ChaosWorkload::Kv(ReadMode::ReadIndex)] {
        let args = chaos_workload(workload, None);
        for seed in 1..=3 {
            let generated = run_seed(&engine(), &args, seed);
            let followed =
                run_seed_following(&engine(), &args, seed, Some(&generated.schedule_events));
            assert_eq!(
                generated.fingerprint(),
                followed.fingerprint(),
                "{workload:?} seed {seed}"
            );
        }
    }
}
