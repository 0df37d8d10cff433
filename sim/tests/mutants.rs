//! Every check must be able to fail: deliberately broken nodes that the suite must reject.

use node::{Mutation, MutationSet};
use sim::{run_chaos, simulate, ChaosConfig};

/// Runs the chaos workload with `mutation` on seeds `1..=max_seeds` and returns the first seed
/// that failed, with its message.
fn first_detection(mutation: Mutation, max_seeds: u64) -> Option<(u64, String)> {
    (1..=max_seeds).find_map(|seed| {
        let config = ChaosConfig {
            mutations: MutationSet::only(mutation),
            ..ChaosConfig::default()
        };
        simulate(seed, move |sim| {
            run_chaos(sim, &config);
        })
        .err()
        .map(|failure| (seed, failure.message))
    })
}

#[test]
fn chaos_rejects_votes_without_the_up_to_date_check() {
    let (seed, message) =
        first_detection(Mutation::VoteWithoutUpToDateCheck, 20).expect("survived 20 seeds");
    eprintln!("detected on seed {seed}: {message}");
    assert!(message.contains("invariant violated"), "{message}");
}

#[test]
fn chaos_rejects_committing_old_term_entries_by_counting() {
    let (seed, message) =
        first_detection(Mutation::CommitOldTermByCounting, 200).expect("survived 200 seeds");
    eprintln!("detected on seed {seed}: {message}");
    assert!(message.contains("invariant violated"), "{message}");
}
