//! The faults that make nodes disagree, each on the correct node, in simulated time.

use crate::support::SEEDS;
use node::MutationSet;
use sim::scenarios;
use sim::scenarios::availability::{unavailable_after, unavailable_on, LeaderFault};
use sim::{run_seeds, seeds, simulate};

fn correct() -> MutationSet {
    MutationSet::default()
}

#[test]
fn figure8_reliable() {
    run_seeds("faults::figure8_reliable", SEEDS, |sim| {
        scenarios::figure8(sim, false, 200, &correct())
    });
}

#[test]
fn figure8_constructed_step_by_step() {
    run_seeds("faults::figure8_constructed_step_by_step", SEEDS, |sim| {
        scenarios::figure8_constructed(sim, &correct())
    });
}

#[test]
fn figure8_unreliable() {
    run_seeds("faults::figure8_unreliable", SEEDS, |sim| {
        scenarios::figure8(sim, true, 200, &correct())
    });
}

#[test]
fn long_reordering() {
    run_seeds("faults::long_reordering", SEEDS, |sim| {
        scenarios::long_reordering(sim, &correct())
    });
}

#[test]
fn unreliable_agreement() {
    run_seeds("faults::unreliable_agreement", SEEDS, |sim| {
        scenarios::unreliable_agreement(sim, 20, &correct())
    });
}

#[test]
fn churn_reliable() {
    run_seeds("faults::churn_reliable", SEEDS, |sim| {
        scenarios::churn(sim, false, &correct())
    });
}

#[test]
fn churn_unreliable() {
    run_seeds("faults::churn_unreliable", SEEDS, |sim| {
        scenarios::churn(sim, true, &correct())
    });
}

#[test]
fn a_leader_that_can_send_but_not_receive_is_replaced() {
    run_seeds(
        "faults::a_leader_that_can_send_but_not_receive_is_replaced",
        SEEDS,
        |sim| scenarios::leader_can_only_send(sim, &correct()),
    );
}

#[test]
fn a_follower_that_can_receive_but_not_send_does_no_harm() {
    run_seeds(
        "faults::a_follower_that_can_receive_but_not_send_does_no_harm",
        SEEDS,
        |sim| scenarios::follower_can_only_receive(sim, &correct()),
    );
}

#[test]
fn a_leader_isolated_with_a_minority_commits_nothing() {
    run_seeds(
        "faults::a_leader_isolated_with_a_minority_commits_nothing",
        SEEDS,
        |sim| scenarios::leader_isolated_with_minority(sim, &correct()),
    );
}

#[test]
fn pausing_the_leader() {
    run_seeds("faults::pausing_the_leader", SEEDS, |sim| {
        scenarios::pause(sim, true, &correct())
    });
}

#[test]
fn pausing_a_follower() {
    run_seeds("faults::pausing_a_follower", SEEDS, |sim| {
        scenarios::pause(sim, false, &correct())
    });
}

#[test]
fn torn_persistence_recovers_the_old_state() {
    run_seeds(
        "faults::torn_persistence_recovers_the_old_state",
        &[1, 2, 3, 4, 5, 6, 7, 8],
        |sim| scenarios::torn_persistence(sim, &correct()),
    );
}

#[test]
fn a_new_leader_within_five_seconds_of_every_leader_crash() {
    run_seeds(
        "faults::a_new_leader_within_five_seconds_of_every_leader_crash",
        SEEDS,
        |sim| scenarios::repeated_leader_crashes(sim, 20, &correct()),
    );
}

#[test]
fn vote_storm() {
    run_seeds("faults::vote_storm", SEEDS, |sim| {
        scenarios::vote_storm(sim, 60, &correct())
    });
}

#[test]
fn election_timeouts_set_ten_times_too_long_pass_their_own_bound_and_fail_the_service_level() {
    // A units slip in the timing (3-6 s for 300-600 ms): the bound derived from these settings
    // grows with them and is met; the user's service level, stated apart from them, is not.
    let mut slow = node::Config::default();
    slow.election_timeout_min *= 10;
    slow.election_timeout_max *= 10;
    slow.leader_quorum_timeout *= 10;
    let fault = LeaderFault::Deaf;
    let (outage, config) = simulate(1, move |sim| unavailable_on(sim, fault, slow))
        .unwrap_or_else(|failure| panic!("{}", failure.message));
    eprintln!("{outage:?}");
    assert!(
        outage.window <= fault.bound_after(&config, outage.elections),
        "{outage:?}"
    );
    let failure = outage.check(fault, &config, "seed 1").unwrap_err();
    assert!(failure.contains("past the service level"), "{failure}");
}

#[test]
fn one_fault_on_the_leader_stops_commits_no_longer_than_its_bound() {
    for fault in LeaderFault::ALL {
        for seed in seeds(SEEDS) {
            let (outage, config) =
                simulate(seed, move |sim| unavailable_after(sim, fault, &correct()))
                    .unwrap_or_else(|failure| panic!("{fault}, seed {seed}: {}", failure.message));
            eprintln!("{fault}, seed {seed}: {outage:?}");
            if let Err(failure) = outage.check(fault, &config, &format!("seed {seed}")) {
                panic!("{failure}");
            }
        }
    }
}
