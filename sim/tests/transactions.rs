//! List-append transactions through the key-value service under the fault workload: strictly
//! serializable on the correct build, with enough going on to mean something (transactions that
//! read what others appended, retries, leaders replaced), and the broken variant that serves a
//! transaction's reads at its proposal caught by the same checker.

use models::{MicroOp, TxnOutcome};
use node::{Mutation, MutationSet};
use sim::kv_workload::simulate_kv;
use sim::txn_client::failure;
use sim::ClusterSettings;
use sim::KvWorkloadConfig;

/// Reads that saw a value another client appended: the transactions do meet.
fn reads_of_others(run: &sim::KvRun) -> usize {
    run.transactions
        .iter()
        .filter(|txn| txn.outcome == TxnOutcome::Committed)
        .flat_map(|txn| txn.ops.iter().map(move |op| (txn.client, op)))
        .filter(|(client, op)| match op {
            MicroOp::Read {
                list: Some(list), ..
            } => list
                .iter()
                .any(|value| value % sim::txn_client::MAX_CLIENTS as u64 != *client),
            _ => false,
        })
        .count()
}

#[test]
fn list_append_transactions_are_strictly_serializable_under_faults() {
    let config = KvWorkloadConfig::list_append();
    for seed in 1..=2 {
        let run = simulate_kv(seed, &config).expect("no invariant violated");
        let committed = (run.transactions.iter())
            .filter(|txn| txn.outcome == TxnOutcome::Committed)
            .count();
        let seen = reads_of_others(&run);
        eprintln!(
            "seed {seed}: {} transactions, {committed} committed, {} unknown, {seen} reads of \
             others' appends, {} leaders",
            run.transactions.len(),
            run.figures.operations_unknown,
            run.figures.leaders_elected
        );
        // Vacuity guards: many transactions, most committed, reading each other's appends,
        // across leader changes.
        assert!(run.transactions.len() >= 2000, "seed {seed}: too few");
        assert!(committed * 10 >= run.transactions.len() * 8, "seed {seed}");
        assert!(
            seen >= 1000,
            "seed {seed}: only {seen} reads of others' appends"
        );
        assert!(run.figures.leaders_elected >= 2, "seed {seed}");
        if let Some(failure) = failure(&run.transactions) {
            panic!("seed {seed}: {failure}");
        }
    }
}

#[test]
fn reads_served_at_proposal_are_caught_as_anomalies() {
    let config = KvWorkloadConfig {
        cluster: ClusterSettings {
            mutations: MutationSet::only(Mutation::TxnReadsAtProposal),
            ..KvWorkloadConfig::list_append().cluster
        },
        ..KvWorkloadConfig::list_append()
    };
    let run = simulate_kv(1, &config).expect("no invariant violated");
    let failure = failure(&run.transactions).expect("the stale reads are caught");
    eprintln!("{failure}");
    assert!(failure.contains("G-single"), "{failure}");
}
