//! A run's recorded schedule is the run: following it (with the seed) reproduces the run
//! exactly, on both workloads, failing or not.
#![cfg(not(any(loom, shuttle)))]

use interleave::engines::{run_seed, run_seed_following, Watchdog};
use node::kv::ReadMode;
use sim::mutants::ChaosWorkload;

#[test]
fn following_a_runs_recorded_schedule_reproduces_the_run() {
    for workload in [ChaosWorkload::Raft, ChaosWorkload::Kv(ReadMode::ReadIndex)] {
        let args = workload.spec(None);
        for seed in 1..=3 {
            let generated = run_seed(&args.with_seed(seed), Watchdog::default());
            let followed = run_seed_following(
                &args.with_seed(seed),
                Watchdog::default(),
                Some(&generated.schedule_events),
            );
            assert_eq!(
                generated.fingerprint(),
                followed.fingerprint(),
                "{workload:?} seed {seed}"
            );
        }
    }
}
