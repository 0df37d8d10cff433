//! Whole-cluster scenarios under shuttle's random and PCT schedulers: the correct node must pass
//! every schedule; each broken variant must be found, with a schedule that replays it.
//!
//! Schedules per scenario: `INTERLEAVE_SHUTTLE_ITERATIONS` (default below); a failure prints the
//! command that replays its schedule (`INTERLEAVE_SHUTTLE_SCHEDULE=FILE`).
#![cfg(shuttle)]

use node::MutationSet;
use shuttle_tests::detectors::{detector, DETECTORS};
use shuttle_tests::scenarios::{
    coinciding_timers, elections_and_replication, kv_snapshots, kv_workload, membership_changes,
    snapshots,
};
use shuttle_tests::{explore, iterations, Found, Schedules};
use std::time::Instant;

const ITERATIONS: &str = "INTERLEAVE_SHUTTLE_ITERATIONS";

fn must_pass<F: Fn() + Send + Sync + 'static>(
    test: &str,
    schedules: Schedules,
    default: usize,
    scenario: F,
) {
    let started = Instant::now();
    match explore(test, schedules, iterations(ITERATIONS, default), scenario) {
        Ok(count) => eprintln!(
            "{test}: {count} schedules passed in {:?} ({:.1} schedules/s)",
            started.elapsed(),
            count as f64 / started.elapsed().as_secs_f64()
        ),
        Err(found) => panic!(
            "{test} failed on schedule {}:\n{}\nreplay: {}",
            found.schedules, found.message, found.replay
        ),
    }
}

fn must_find<F: Fn() + Send + Sync + 'static>(
    test: &str,
    schedules: Schedules,
    budget: usize,
    scenario: F,
) -> Found {
    let started = Instant::now();
    match explore(test, schedules, budget, scenario) {
        Ok(count) => panic!("{test}: the broken variant survived {count} schedules"),
        Err(found) => {
            eprintln!(
                "{test}: found on schedule {} in {:?}: {}\nreplay: {}",
                found.schedules,
                started.elapsed(),
                found.message.lines().next().unwrap_or_default(),
                found.replay
            );
            found
        }
    }
}

/// Replays the failing schedule in-process and requires the same failure.
fn assert_replays(found: &Found, scenario: impl Fn() + Send + Sync + 'static) {
    let file = found.schedule_file.clone().expect("a schedule was written");
    let replayed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        shuttle::replay_from_file(scenario, &file)
    }));
    let message = match replayed {
        Ok(()) => panic!("replaying {} did not fail", file.display()),
        Err(panic) => panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    };
    assert_eq!(
        message.lines().next(),
        found.message.lines().next(),
        "the replay failed differently"
    );
}

#[test]
fn three_nodes_random() {
    must_pass("three_nodes_random", Schedules::Random, 100, || {
        elections_and_replication(3, MutationSet::default())
    });
}

#[test]
fn three_nodes_pct() {
    must_pass("three_nodes_pct", Schedules::Pct { depth: 3 }, 100, || {
        elections_and_replication(3, MutationSet::default())
    });
}

#[test]
fn five_nodes_random() {
    must_pass("five_nodes_random", Schedules::Random, 50, || {
        elections_and_replication(5, MutationSet::default())
    });
}

#[test]
fn five_nodes_pct() {
    must_pass("five_nodes_pct", Schedules::Pct { depth: 3 }, 50, || {
        elections_and_replication(5, MutationSet::default())
    });
}

/// The correct node gets the same schedules the broken ticker fails on (and more).
#[test]
fn coinciding_timers_random() {
    must_pass("coinciding_timers_random", Schedules::Random, 500, || {
        coinciding_timers(MutationSet::default())
    });
}

#[test]
fn coinciding_timers_pct() {
    must_pass(
        "coinciding_timers_pct",
        Schedules::Pct { depth: 3 },
        500,
        || coinciding_timers(MutationSet::default()),
    );
}

#[test]
fn kv_random() {
    must_pass("kv_random", Schedules::Random, 200, || {
        kv_workload(MutationSet::default(), 64)
    });
}

#[test]
fn kv_pct() {
    must_pass("kv_pct", Schedules::Pct { depth: 3 }, 60, || {
        kv_workload(MutationSet::default(), 64)
    });
}

#[test]
fn snapshots_random() {
    must_pass("snapshots_random", Schedules::Random, 100, || {
        snapshots(MutationSet::default())
    });
}

#[test]
fn snapshots_pct() {
    must_pass("snapshots_pct", Schedules::Pct { depth: 3 }, 100, || {
        snapshots(MutationSet::default())
    });
}

#[test]
fn kv_snapshots_random() {
    must_pass("kv_snapshots_random", Schedules::Random, 100, || {
        kv_snapshots(MutationSet::default())
    });
}

#[test]
fn kv_snapshots_pct() {
    must_pass("kv_snapshots_pct", Schedules::Pct { depth: 3 }, 40, || {
        kv_snapshots(MutationSet::default())
    });
}

#[test]
fn membership_random() {
    must_pass("membership_random", Schedules::Random, 300, || {
        membership_changes(MutationSet::default())
    });
}

#[test]
fn membership_pct() {
    must_pass("membership_pct", Schedules::Pct { depth: 3 }, 300, || {
        membership_changes(MutationSet::default())
    });
}

/// Every run is a function of its schedule: shuttle reruns schedules and checks that each makes
/// the same choices (no wall-clock time, no unseeded randomness, no hash-order behaviour).
#[test]
fn a_cluster_run_has_no_uncontrolled_nondeterminism() {
    shuttle::check_uncontrolled_nondeterminism(
        || elections_and_replication(3, MutationSet::default()),
        iterations(ITERATIONS, 20),
    );
}

/// Runs the detector named `test` (see [`DETECTORS`](shuttle_tests::detectors::DETECTORS)):
/// it must fail within its budget with the message it expects, and its schedule must replay.
fn detector_finds_its_bug(test: &str) -> Found {
    let detector = detector(test);
    let found = must_find(test, detector.schedules, detector.budget, detector.scenario);
    assert!(
        found.message.contains(detector.expected),
        "{} was found by a different failure: {}",
        detector.mutation,
        found.message
    );
    assert_replays(&found, detector.scenario);
    found
}

#[test]
fn sleeping_in_persist_with_the_lock_held_is_a_deadlock_naming_the_threads() {
    let found = detector_finds_its_bug(
        "sleeping_in_persist_with_the_lock_held_is_a_deadlock_naming_the_threads",
    );
    assert!(found.message.contains("n0-ticker"), "{}", found.message);
}

#[test]
fn an_applier_blocked_on_the_service_with_the_node_lock_held_deadlocks_the_kv_store() {
    detector_finds_its_bug(
        "an_applier_blocked_on_the_service_with_the_node_lock_held_deadlocks_the_kv_store",
    );
}

#[test]
fn a_ticker_that_checks_then_acts_is_found() {
    detector_finds_its_bug("a_ticker_that_checks_then_acts_is_found");
}

/// The shuttle detectors here are exactly those the catalogue (`sim::mutants::catalogue`) names,
/// each for the variant the catalogue gives it.
#[test]
fn the_shuttle_detectors_are_the_catalogues() {
    use sim::mutants::{catalogue, Broken, Detector};
    let mut catalogued = Vec::new();
    for variant in catalogue() {
        for detector in &variant.detectors {
            if let (Detector::Shuttle { test }, Broken::Node(mutation)) = (detector, variant.broken)
            {
                catalogued.push((*test, mutation));
            }
        }
    }
    let mut here: Vec<_> = DETECTORS.iter().map(|d| (d.test, d.mutation)).collect();
    catalogued.sort();
    here.sort();
    assert_eq!(
        here, catalogued,
        "shuttle-tests/src/detectors.rs differs from the catalogue"
    );
}

#[test]
fn every_detector_has_a_test() {
    let source = include_str!("cluster.rs");
    for detector in &DETECTORS {
        assert!(
            source.contains(&format!("fn {}()", detector.test)),
            "no test runs the detector {}",
            detector.test
        );
    }
}
