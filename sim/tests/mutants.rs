//! Every check must be able to fail: each deliberately broken node is run through the scenario
//! meant to expose it, seed after seed, and must be rejected within a stated number of seeds.
//! (The same scenarios pass on the correct node: see `faults.rs` and `chaos.rs`.)

use node::{Mutation, MutationSet};
use sim::{run_chaos, scenarios, simulate, ChaosConfig, Sim};

/// Runs `scenario` with `mutation` on seeds `1..=max_seeds` and returns the first seed that
/// failed and its message; panics if the mutation survives them all.
fn seeds_to_detection(
    mutation: Mutation,
    max_seeds: u64,
    scenario: impl Fn(&Sim, &MutationSet) + Send + Sync + Copy + 'static,
) -> (u64, String) {
    for seed in 1..=max_seeds {
        let mutations = MutationSet::only(mutation);
        if let Err(failure) = simulate(seed, move |sim| scenario(sim, &mutations)) {
            eprintln!(
                "{mutation}: detected on seed {seed}: {}",
                failure.message.lines().next().unwrap_or("")
            );
            return (seed, failure.message);
        }
    }
    panic!("{mutation} survived {max_seeds} seeds: a gap in the suite");
}

#[test]
fn commit_of_an_old_term_entry_by_counting_is_caught_by_figure8() {
    let (_, message) = seeds_to_detection(Mutation::CommitOldTermByCounting, 20, |sim, m| {
        scenarios::figure8_constructed(sim, m)
    });
    assert!(message.contains("invariant violated"), "{message}");
}

#[test]
fn a_forgotten_vote_is_caught_by_the_vote_storm() {
    let (_, message) = seeds_to_detection(Mutation::ForgetVote, 60, |sim, m| {
        scenarios::vote_storm(sim, 60, m)
    });
    assert!(message.contains("Election Safety"), "{message}");
}

#[test]
fn a_vote_without_the_up_to_date_check_is_caught_by_chaos() {
    let (_, message) = seeds_to_detection(Mutation::VoteWithoutUpToDateCheck, 20, |sim, m| {
        run_chaos(
            sim,
            &ChaosConfig {
                mutations: m.clone(),
                ..ChaosConfig::default()
            },
        );
    });
    assert!(message.contains("invariant violated"), "{message}");
}

#[test]
fn a_leader_that_ignores_a_higher_term_is_caught_by_chaos() {
    let (_, message) = seeds_to_detection(Mutation::NoStepDownOnHigherTermReply, 20, |sim, m| {
        run_chaos(
            sim,
            &ChaosConfig {
                mutations: m.clone(),
                ..ChaosConfig::default()
            },
        );
    });
    assert!(message.contains("in a reply but stayed in"), "{message}");
}

#[test]
fn the_lockstep_ticker_is_caught_by_the_liveness_bound() {
    let (_, message) = seeds_to_detection(Mutation::TickerLockstep, 10, |sim, m| {
        scenarios::repeated_leader_crashes(sim, 20, m)
    });
    assert!(message.contains("liveness"), "{message}");
}

#[test]
fn accepting_a_torn_write_is_caught_by_torn_persistence() {
    let (_, message) = seeds_to_detection(Mutation::AcceptTornWrites, 30, |sim, m| {
        scenarios::torn_persistence(sim, m)
    });
    assert!(
        message.contains("invariant violated") || message.contains("failed to reach agreement"),
        "{message}"
    );
}

#[test]
fn a_truncating_heartbeat_is_caught_under_long_reordering() {
    let (_, message) = seeds_to_detection(Mutation::TruncateOnMatchingHeartbeat, 30, |sim, m| {
        scenarios::long_reordering(sim, m)
    });
    assert!(
        message.contains("invariant violated") || message.contains("agreement"),
        "{message}"
    );
}
