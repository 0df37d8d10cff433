//! Lease reads under clock skew: the correct lease holds within the drift bound, each broken
//! lease is caught, and skew beyond the bound breaks even the correct one (the workload can see
//! what the bound prevents).

use crate::support::stopwatch;
use models::Verdict;
use node::{Mutation, MutationSet};
use sim::kv_workload::{check_kv_history_within, simulate_kv};
use sim::ClusterSettings;
use sim::{scenarios, simulate, ClockSkew, FaultMix, KvWorkloadConfig};
use std::time::Duration;

const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

/// A check that needs longer answers "unknown": a broken variant's seed then counts as not
/// rejected, and the correct build's as a failure.
const CHECK_LIMIT: Duration = Duration::from_secs(10);

/// The lease-hunting workload with `mutations` and `skew` on each seed: its verdicts.
fn hunt(name: &str, mutations: MutationSet, skew: ClockSkew) -> Vec<Verdict> {
    let hunting = KvWorkloadConfig::lease_hunt();
    let config = KvWorkloadConfig {
        cluster: ClusterSettings {
            mutations,
            faults: FaultMix {
                skew,
                ..hunting.cluster.faults
            },
            ..hunting.cluster.clone()
        },
        ..hunting
    };
    SEEDS
        .iter()
        .map(|&seed| {
            let wall = stopwatch();
            let run = simulate_kv(seed, &config)
                .unwrap_or_else(|failure| panic!("{name} seed {seed}: {}", failure.message));
            let verdict = check_kv_history_within(&run.history, CHECK_LIMIT).verdict;
            eprintln!(
                "{name} seed {seed}: {} operations, {} lease reads, {} by deposed leaders, {:?} in {:?}",
                run.history.len(),
                run.figures.lease_reads,
                run.figures.reads_by_deposed_leaders,
                verdict,
                wall.elapsed()
            );
            verdict
        })
        .collect()
}

fn rejected(verdicts: &[Verdict]) -> usize {
    verdicts
        .iter()
        .filter(|verdict| **verdict == Verdict::NotLinearizable)
        .count()
}

#[test]
fn the_correct_lease_is_linearizable_within_the_drift_bound() {
    let verdicts = hunt("lease", MutationSet::default(), ClockSkew::WithinBound);
    assert!(
        verdicts
            .iter()
            .all(|verdict| *verdict == Verdict::Linearizable),
        "{verdicts:?}"
    );
}

#[test]
fn a_lease_without_the_drift_margin_is_rejected_within_the_bound() {
    let mutations = MutationSet::only(Mutation::LeaseWithoutDriftMargin);
    let verdicts = hunt(
        "lease-without-drift-margin",
        mutations,
        ClockSkew::WithinBound,
    );
    assert!(rejected(&verdicts) >= 4, "{verdicts:?}");
}

#[test]
fn a_lease_counted_from_the_answer_is_rejected() {
    let mutations = MutationSet::only(Mutation::LeaseFromAnswerTime);
    let verdicts = hunt("lease-from-answer-time", mutations, ClockSkew::WithinBound);
    assert!(rejected(&verdicts) >= 4, "{verdicts:?}");
}

#[test]
fn skew_beyond_the_bound_breaks_even_the_correct_lease() {
    let verdicts = hunt(
        "lease beyond the bound",
        MutationSet::default(),
        ClockSkew::BeyondBound,
    );
    assert!(rejected(&verdicts) >= 1, "{verdicts:?}");
}

#[test]
fn a_lease_kept_after_a_step_down_serves_a_stale_read() {
    let failed = |mutations: MutationSet| -> Vec<u64> {
        SEEDS
            .iter()
            .copied()
            .filter(|&seed| {
                let mutations = mutations.clone();
                simulate(seed, move |sim| {
                    scenarios::lease_after_a_step_down(sim, &mutations)
                })
                .is_err_and(|failure| failure.message.contains("stale read"))
            })
            .collect()
    };
    assert_eq!(failed(MutationSet::default()), Vec::<u64>::new());
    let broken = failed(MutationSet::only(Mutation::LeaseKeptAfterStepDown));
    assert!(broken.len() >= 4, "stale reads on seeds {broken:?} only");
}
