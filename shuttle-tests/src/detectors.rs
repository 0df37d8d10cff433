//! [`ShuttleDetector`]: a broken variant of the node that a shuttle scenario must find, with the
//! scheduler and the budget of schedules it gets. The tests in `tests/cluster.rs` run each one
//! once with the default scheduler seed; the `detector_strength` benchmark runs each over many
//! seeds, to show how many schedules it needs and how likely its budget is to miss.

use crate::scenarios::{coinciding_timers, elections_and_replication, kv_workload};
use crate::Schedules;
use node::{Mutation, MutationSet};

/// One broken variant and the scenario that must expose it.
pub struct ShuttleDetector {
    /// The test that runs it (also names its schedule folder).
    pub test: &'static str,
    /// The broken behaviour switched on.
    pub mutation: Mutation,
    /// The scheduler that explores the scenario.
    pub schedules: Schedules,
    /// Schedules the test allows before it declares the variant a survivor. Chosen from the
    /// `detector_strength` benchmark: far above the worst seed seen, so a change that merely
    /// reorders schedules cannot make the detector miss.
    pub budget: usize,
    /// Text the failure message must contain (the detector found this bug, not another).
    pub expected: &'static str,
    /// The scenario, with the mutation on.
    pub scenario: fn(),
}

/// Every shuttle detector.
pub const DETECTORS: [ShuttleDetector; 3] = [
    ShuttleDetector {
        test: "sleeping_in_persist_with_the_lock_held_is_a_deadlock_naming_the_threads",
        mutation: Mutation::SleepInPersist,
        schedules: Schedules::Random,
        budget: 100,
        expected: "deadlock",
        scenario: || elections_and_replication(3, MutationSet::only(Mutation::SleepInPersist)),
    },
    ShuttleDetector {
        test: "an_applier_blocked_on_the_service_with_the_node_lock_held_deadlocks_the_kv_store",
        mutation: Mutation::ApplyWithLockHeld,
        schedules: Schedules::Random,
        budget: 100,
        expected: "deadlock",
        scenario: || kv_workload(MutationSet::only(Mutation::ApplyWithLockHeld), 1),
    },
    ShuttleDetector {
        test: "a_ticker_that_checks_then_acts_is_found",
        mutation: Mutation::TickerCheckThenAct,
        schedules: Schedules::Random,
        budget: 100,
        expected: "pushed the deadline",
        scenario: || coinciding_timers(MutationSet::only(Mutation::TickerCheckThenAct)),
    },
];

/// The detector run by `test`.
pub fn detector(test: &str) -> &'static ShuttleDetector {
    DETECTORS
        .iter()
        .find(|detector| detector.test == test)
        .unwrap_or_else(|| panic!("no detector named {test}"))
}
