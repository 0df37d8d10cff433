//! The server's write-ahead log as the simulated nodes' storage (`--storage log`): the chaos
//! run with every crash a power loss must keep every invariant on the log that ships, rolling
//! its 1 KiB segments over and losing what was not synced, and a node that does not sync
//! (`skip-fsync`) must be caught there.

use node::{Mutation, MutationSet};
use sim::ClusterSettings;
use sim::{run_chaos, run_seeds, simulate, ChaosConfig, FaultMix, RunFigures, SimStorage};
use std::sync::{Arc, Mutex};

fn on_the_log(mutations: MutationSet) -> ChaosConfig {
    ChaosConfig {
        cluster: ClusterSettings {
            faults: FaultMix {
                power_loss: true,
                ..FaultMix::DEFAULT
            },
            snapshot_threshold: Some(1024),
            storage: SimStorage::Log,
            mutations,
            ..ClusterSettings::default()
        },
        ..ChaosConfig::default()
    }
}

#[test]
fn the_log_keeps_every_invariant_through_power_losses() {
    let totals = Arc::new(Mutex::new(RunFigures::default()));
    let seen = totals.clone();
    run_seeds(
        "log_storage::the_log_keeps_every_invariant_through_power_losses",
        &[101, 102, 103, 104, 105],
        move |sim| {
            let report = run_chaos(sim, &on_the_log(MutationSet::default()));
            eprintln!("seed {}: {report:?}", sim.seed());
            assert!(report.highest_applied >= 20, "{report:?}");
            *seen.lock().unwrap() += &report;
        },
    );
    // Vacuity: the logs were written, rolled over and compacted, and power losses took back
    // what was not synced.
    let totals = totals.lock().unwrap();
    assert!(totals.log_power_losses >= 50, "{totals:?}");
    assert!(totals.log_bytes_lost > 0, "{totals:?}");
    assert!(totals.log_roll_overs >= 20, "{totals:?}");
    assert!(totals.snapshots_taken > 0, "{totals:?}");
}

#[test]
fn a_node_that_skips_its_fsync_is_caught_on_the_log() {
    let skip_fsync = MutationSet::only(Mutation::SkipFsync);
    let caught = (1..=5).find_map(|seed| {
        let config = on_the_log(skip_fsync.clone());
        simulate(seed, move |sim| run_chaos(sim, &config)).err()
    });
    let failure = caught.expect("skip-fsync caught within 5 seeds");
    eprintln!("seed {}: {}", failure.seed, failure.message);
    assert!(
        failure.message.contains("invariant violated"),
        "{}",
        failure.message
    );
}
