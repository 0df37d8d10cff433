//! Tests that pin the definition of linearizability down, and the differential test against the
//! brute-force oracle.

use super::brute::brute_force_linearizable;
use super::*;
use crate::kv::{KeyValue, KvInput, KvOutput};
use crate::register::{Register, RegisterInput as In, RegisterOutput as Out};
use crate::test_histories::{
    random_kv_history, random_kv_history_with, random_register_history,
    random_register_history_with, Lcg,
};

type RegOp = Operation<In, Out>;

/// The register without its own decision by zones ([`Model::decide`]): these tests are of the
/// search, whatever the shape of their histories (the zones have theirs in
/// `crate::register_zones`).
struct Searched;

impl Model for Searched {
    type State = <Register as Model>::State;
    type Input = In;
    type Output = Out;

    fn init(&self) -> Self::State {
        Register.init()
    }

    fn step(&self, state: &Self::State, input: &In) -> (Self::State, Out) {
        Register.step(state, input)
    }

    fn unobservable(&self, operations: &[RegOp]) -> Vec<bool> {
        Register.unobservable(operations)
    }

    fn describe(&self, input: &In, output: Option<&Out>) -> String {
        Register.describe(input, output)
    }
}

#[test]
fn the_register_decides_distinct_writes_by_zones_stale_reads_at_once_and_the_rest_by_search() {
    // A stale read: 2 was written after 1 was, and a read called after both returned sees 1.
    let stale = vec![
        op(0, In::Write(1), Out::Written, 0, 1),
        op(0, In::Write(2), Out::Written, 2, 3),
        op(1, In::Read, Out::Value(Some(1)), 4, 5),
    ];
    let report = check(&Register, &stale, &CheckOptions::default());
    let (partition, counterexample) = report.counterexample().expect("rejected");
    assert_eq!(partition.states, 0, "decided without a search");
    assert!(counterexample.why.is_some(), "the zones say why");
    assert_eq!(counterexample.unplaced, [0, 1, 2]);
    // With a compare-and-set, the zones do not apply; this stale read is still refuted at
    // once (2 certainly overwrote 1 in between).
    let cas = In::Cas {
        expected: 9,
        new: 10,
    };
    let mut with_cas = stale.clone();
    with_cas.push(op(2, cas, Out::Swapped(false), 6, 7));
    let report = check(&Register, &with_cas, &CheckOptions::default());
    let (partition, counterexample) = report.counterexample().expect("rejected");
    assert_eq!(partition.states, 0, "decided without a search");
    assert_eq!(counterexample.unplaced, [0, 1, 2]);
    // 1, then 2, then 1 again, each written once and concurrently: no value is certainly
    // overwritten, so the search finds it.
    let flip_flop = vec![
        op(0, In::Write(1), Out::Written, 0, 10),
        op(1, In::Write(2), Out::Written, 0, 10),
        op(2, In::Read, Out::Value(Some(1)), 11, 12),
        op(2, In::Read, Out::Value(Some(2)), 13, 14),
        op(2, In::Read, Out::Value(Some(1)), 15, 16),
        op(3, cas, Out::Swapped(false), 20, 21),
    ];
    let report = check(&Register, &flip_flop, &CheckOptions::default());
    let (partition, counterexample) = report.counterexample().expect("rejected");
    assert!(partition.states > 0, "searched");
    assert_eq!(counterexample.why, None);
}

fn verdict(history: &[RegOp]) -> Verdict {
    check(&Searched, &history.to_vec(), &CheckOptions::default()).verdict
}

fn op(client: u64, input: In, output: Out, call: u64, ret: u64) -> RegOp {
    Operation::returned(client, input, output, call, ret)
}

#[test]
fn a_sequential_history_is_accepted() {
    let history = [
        op(0, In::Write(1), Out::Written, 0, 1),
        op(1, In::Read, Out::Value(Some(1)), 2, 3),
        op(
            0,
            In::Cas {
                expected: 1,
                new: 2,
            },
            Out::Swapped(true),
            4,
            5,
        ),
        op(1, In::Read, Out::Value(Some(2)), 6, 7),
    ];
    assert_eq!(verdict(&history), Verdict::Linearizable);
}

#[test]
fn a_read_of_a_value_overwritten_before_it_started_is_rejected() {
    let history = [
        op(0, In::Write(1), Out::Written, 0, 1),
        op(0, In::Write(2), Out::Written, 2, 3),
        op(1, In::Read, Out::Value(Some(1)), 4, 5),
    ];
    assert_eq!(verdict(&history), Verdict::NotLinearizable);
}

#[test]
fn a_read_overlapping_a_write_may_see_either_value() {
    for seen in [Some(1), Some(2)] {
        let history = [
            op(0, In::Write(1), Out::Written, 0, 1),
            op(0, In::Write(2), Out::Written, 2, 10),
            op(1, In::Read, Out::Value(seen), 3, 5),
        ];
        assert_eq!(
            verdict(&history),
            Verdict::Linearizable,
            "read saw {seen:?}"
        );
    }
}

#[test]
fn two_appends_observed_in_one_order_cannot_later_be_observed_in_the_other() {
    let key = || "k".to_string();
    let get = |client, value: &str, call, ret| {
        Operation::returned(
            client,
            KvInput::Get(key()),
            KvOutput::Value(value.to_string()),
            call,
            ret,
        )
    };
    let history = vec![
        Operation::returned(0, KvInput::Append(key(), "a".into()), KvOutput::Done, 0, 10),
        Operation::returned(1, KvInput::Append(key(), "b".into()), KvOutput::Done, 0, 10),
        get(2, "ab", 11, 12),
        get(2, "ba", 13, 14),
    ];
    let report = check(&KeyValue, &history, &CheckOptions::default());
    assert_eq!(report.verdict, Verdict::NotLinearizable);
    let mut consistent = history.clone();
    consistent[3] = get(2, "ab", 13, 14);
    assert_eq!(
        check(&KeyValue, &consistent, &CheckOptions::default()).verdict,
        Verdict::Linearizable
    );
}

#[test]
fn an_unknown_outcome_write_may_or_may_not_be_visible() {
    for seen in [None, Some(7)] {
        let history = [
            Operation::unknown(0, In::Write(7), 0),
            op(1, In::Read, Out::Value(seen), 5, 6),
            op(1, In::Read, Out::Value(seen), 7, 8),
        ];
        assert_eq!(
            verdict(&history),
            Verdict::Linearizable,
            "read saw {seen:?}"
        );
    }
    // But once seen, it cannot be unseen.
    let history = [
        Operation::unknown(0, In::Write(7), 0),
        op(1, In::Read, Out::Value(Some(7)), 5, 6),
        op(1, In::Read, Out::Value(None), 7, 8),
    ];
    assert_eq!(verdict(&history), Verdict::NotLinearizable);
    // And it cannot take effect before it was called.
    let history = [
        op(1, In::Read, Out::Value(Some(7)), 0, 1),
        Operation::unknown(0, In::Write(7), 2),
    ];
    assert_eq!(verdict(&history), Verdict::NotLinearizable);
}

#[test]
fn a_failed_compare_and_set_has_no_effect() {
    let history = [
        op(0, In::Write(1), Out::Written, 0, 1),
        op(
            0,
            In::Cas {
                expected: 5,
                new: 9,
            },
            Out::Swapped(false),
            2,
            3,
        ),
        op(1, In::Read, Out::Value(Some(1)), 4, 5),
    ];
    assert_eq!(verdict(&history), Verdict::Linearizable);
    let saw_swap = [
        op(0, In::Write(1), Out::Written, 0, 1),
        op(
            0,
            In::Cas {
                expected: 5,
                new: 9,
            },
            Out::Swapped(false),
            2,
            3,
        ),
        op(1, In::Read, Out::Value(Some(9)), 4, 5),
    ];
    assert_eq!(verdict(&saw_swap), Verdict::NotLinearizable);
}

#[test]
fn a_counterexample_names_the_prefix_and_the_operations_that_could_not_be_placed() {
    let history = vec![
        op(0, In::Write(1), Out::Written, 0, 1),
        op(0, In::Write(2), Out::Written, 2, 3),
        op(1, In::Read, Out::Value(Some(1)), 4, 5),
    ];
    let report = check(&Searched, &history, &CheckOptions::default());
    let (partition, counterexample) = report.counterexample().expect("illegal");
    assert_eq!(partition.name, "all");
    assert_eq!(counterexample.longest_prefix, vec![0, 1]);
    assert_eq!(counterexample.unplaced, vec![2]);
    assert_eq!(counterexample.operations[2].description, "read() -> 1");
}

/// `count` concurrent writes, all returned, and then a read of a value none wrote: refuting it
/// means trying every subset of the writes, each with the value its last write left.
fn concurrent_writes_and_an_unexplained_read(count: u64) -> Vec<RegOp> {
    let mut history: Vec<RegOp> = (0..count)
        .map(|i| op(i, In::Write(i as i64), Out::Written, 0, 10))
        .collect();
    history.push(op(count, In::Read, Out::Value(Some(1000)), 11, 12));
    history
}

#[test]
fn unknown_writes_no_read_saw_are_left_out_of_the_search() {
    let mut history: Vec<RegOp> = (0..40)
        .map(|i| Operation::unknown(i, In::Write(i as i64), 0))
        .collect();
    history.push(op(99, In::Read, Out::Value(Some(1000)), 1, 2));
    let report = check(&Searched, &history, &CheckOptions::default());
    assert_eq!(report.verdict, Verdict::NotLinearizable);
    assert!(
        report.partitions[0].states < 10,
        "{:?}",
        report.partitions[0]
    );
}

#[test]
fn an_exhausted_budget_gives_unknown_never_a_guess() {
    // Many concurrent writes and a read that no order explains quickly.
    let history = concurrent_writes_and_an_unexplained_read(40);
    let options = CheckOptions {
        budget: Budget::new(1000, None),
        threads: 1,
    };
    let report = check(&Searched, &history, &options);
    assert_eq!(report.verdict, Verdict::Unknown);
}

/// `count` appends of distinct `bytes`-byte strings to one key, one after another, and a get of
/// them all: every prefix of the final value is a state the search keeps, each costing the piece it
/// appended (prefixes are shared), so its memory grows with the appended bytes while its memo
/// grows with the operations.
fn appends_to_one_key(count: u64, bytes: usize) -> Vec<Operation<KvInput, KvOutput>> {
    let piece = |i: u64| format!("{i:0bytes$},");
    let mut history: Vec<_> = (0..count)
        .map(|i| {
            let input = KvInput::Append("k".to_string(), piece(i));
            Operation::returned(i % 4, input, KvOutput::Done, 2 * i, 2 * i + 1)
        })
        .collect();
    let whole: String = (0..count).map(piece).collect();
    let get = KvInput::Get("k".to_string());
    history.push(Operation::returned(
        0,
        get,
        KvOutput::Value(whole),
        2 * count,
        2 * count + 1,
    ));
    history
}

#[test]
fn the_memory_budget_counts_the_states_bytes_not_only_the_memo() {
    // 2,000 appends of 8 KiB: 16 MiB of appended bytes, in 2,001 memo entries of a few dozen
    // bytes each.
    let history = appends_to_one_key(2000, 8 << 10);
    let within = |max_bytes: usize, threads: usize| CheckOptions {
        budget: Budget::new(Budget::default().max_states, None).with_max_bytes(max_bytes),
        threads,
    };
    let report = check(&KeyValue, &history, &within(8 << 20, 1));
    assert_eq!(report.verdict, Verdict::Unknown);
    let PartitionVerdict::Unknown(reason) = &report.partitions[0].verdict else {
        unreachable!()
    };
    assert!(reason.contains("MiB (limit 8 MiB)"), "{reason}");
    assert!(
        report.partitions[0].states < 2000,
        "{:?}",
        report.partitions[0]
    );
    for threads in [1, 2] {
        let report = check(&KeyValue, &history, &within(64 << 20, threads));
        assert_eq!(report.verdict, Verdict::Linearizable, "{threads} threads");
    }
}

#[test]
fn an_illegal_partition_makes_the_verdict_illegal_whatever_the_others_do() {
    let legal = vec![op(0, In::Write(1), Out::Written, 0, 1)];
    let illegal = vec![op(0, In::Read, Out::Value(Some(3)), 0, 1)];
    for threads in [1, 2, 4] {
        let options = CheckOptions {
            threads,
            ..CheckOptions::default()
        };
        let partitions = vec![
            ("a".to_string(), legal.clone()),
            ("b".to_string(), illegal.clone()),
        ];
        let report = check_partitions(&Searched, partitions, &options);
        assert_eq!(report.verdict, Verdict::NotLinearizable);
        assert_eq!(report.counterexample().expect("illegal").0.name, "b");
    }
}

#[test]
fn a_partition_found_illegal_quickly_stops_a_hard_one_that_started_first() {
    // 40 concurrent writes and a read that none explains: refuting it takes
    // far more states than the first pass allows. It is the larger partition, so it is checked
    // first; on one thread a single pass would search it to the end of the budget before looking
    // at the illegal one.
    let hard = concurrent_writes_and_an_unexplained_read(40);
    let illegal = vec![op(0, In::Read, Out::Value(Some(3)), 0, 1)];
    let options = CheckOptions {
        budget: Budget::new(FIRST_PASS_STATES * 20, None),
        threads: 1,
    };
    let partitions = vec![("hard".to_string(), hard), ("illegal".to_string(), illegal)];
    let report = check_partitions(&Searched, partitions, &options);
    assert_eq!(report.verdict, Verdict::NotLinearizable);
    assert_eq!(report.counterexample().expect("illegal").0.name, "illegal");
    let hard = &report.partitions[0];
    assert_eq!(hard.verdict, PartitionVerdict::Cancelled, "{hard:?}");
    assert!(hard.states < (2 * FIRST_PASS_STATES) as u64, "{hard:?}");
}

#[test]
fn agrees_with_brute_force_on_many_small_random_histories() {
    let mut rng = Lcg(42);
    let (mut legal, mut illegal) = (0, 0);
    for case in 0..5000 {
        let history = random_register_history(&mut rng);
        let expected = brute_force_linearizable(&Register, &history);
        let options = CheckOptions {
            threads: 1,
            ..CheckOptions::default()
        };
        let got = check(&Searched, &history, &options).verdict;
        let want = if expected {
            Verdict::Linearizable
        } else {
            Verdict::NotLinearizable
        };
        assert_eq!(got, want, "case {case}: {history:#?}");
        if expected {
            legal += 1;
        } else {
            illegal += 1;
        }
    }
    // The generator must exercise both answers, or the comparison proves little.
    assert!(
        legal > 1000 && illegal > 1000,
        "legal {legal}, illegal {illegal}"
    );
}

#[test]
fn key_value_pruning_agrees_with_brute_force_on_many_small_random_histories() {
    let mut rng = Lcg(7);
    let (mut legal, mut illegal) = (0, 0);
    for case in 0..5000 {
        let history = random_kv_history(&mut rng);
        let expected = brute_force_linearizable(&KeyValue, &history);
        let options = CheckOptions {
            threads: 1,
            ..CheckOptions::default()
        };
        let got = check(&KeyValue, &history, &options).verdict;
        let want = if expected {
            Verdict::Linearizable
        } else {
            Verdict::NotLinearizable
        };
        assert_eq!(got, want, "case {case}: {history:#?}");
        if expected {
            legal += 1;
        } else {
            illegal += 1;
        }
    }
    assert!(
        legal > 1000 && illegal > 500,
        "legal {legal}, illegal {illegal}"
    );
}

#[test]
fn partitions_the_first_pass_leaves_get_the_same_budget_on_any_number_of_threads() {
    // Three partitions no first pass decides: on any number of threads, the second pass gives
    // each the whole budget in turn, so every report is the same.
    let partitions: Vec<_> = (0..3)
        .map(|key| {
            (
                format!("k{key}"),
                concurrent_writes_and_an_unexplained_read(30),
            )
        })
        .collect();
    let reports: Vec<Vec<(PartitionVerdict, u64)>> = [1, 2, 4]
        .into_iter()
        .map(|threads| {
            let options = CheckOptions {
                budget: Budget::new(FIRST_PASS_STATES * 3, None),
                threads,
            };
            let report = check_partitions(&Searched, partitions.clone(), &options);
            assert_eq!(report.verdict, Verdict::Unknown);
            report
                .partitions
                .into_iter()
                .map(|p| (p.verdict, p.states))
                .collect()
        })
        .collect();
    assert_eq!(reports[0], reports[1]);
    assert_eq!(reports[0], reports[2]);
}

#[test]
fn unknown_writes_overwritten_unseen_are_never_placed() {
    // 40 concurrent writes that may never have happened, a compare-and-set that keeps them all
    // in the search, and a read nothing explains: only one write at a time can matter to the
    // read, so refuting it takes a few states per write, not one per subset.
    let mut history: Vec<RegOp> = (0..40)
        .map(|i| Operation::unknown(i, In::Write(i as i64), 0))
        .collect();
    let never_swaps = In::Cas {
        expected: -1,
        new: -1,
    };
    history.push(Operation::unknown(40, never_swaps, 0));
    history.push(op(99, In::Read, Out::Value(Some(1000)), 1, 2));
    let report = check(&Searched, &history, &CheckOptions::default());
    assert_eq!(report.verdict, Verdict::NotLinearizable);
    assert!(
        report.partitions[0].states < 200,
        "{:?}",
        report.partitions[0]
    );
}

/// Histories where half the operations lost their outcome: the rules that leave out, skip or
/// subsume unknown-outcome operations, judged against the brute-force search, which has none.
#[test]
fn unknown_outcome_shortcuts_agree_with_brute_force() {
    let options = CheckOptions {
        threads: 1,
        ..CheckOptions::default()
    };
    let want = |legal: bool| {
        if legal {
            Verdict::Linearizable
        } else {
            Verdict::NotLinearizable
        }
    };
    let mut rng = Lcg(11);
    let mut illegal = 0;
    for case in 0..3000 {
        let history = random_register_history_with(&mut rng, 7, 2);
        let expected = want(brute_force_linearizable(&Register, &history));
        assert_eq!(
            check(&Searched, &history, &options).verdict,
            expected,
            "register case {case}: {history:#?}"
        );
        illegal += usize::from(expected == Verdict::NotLinearizable);
        let history = random_kv_history_with(&mut rng, 7, 2);
        let expected = want(brute_force_linearizable(&KeyValue, &history));
        assert_eq!(
            check(&KeyValue, &history, &options).verdict,
            expected,
            "key-value case {case}: {history:#?}"
        );
        illegal += usize::from(expected == Verdict::NotLinearizable);
    }
    assert!(illegal > 600, "only {illegal} of 6000 illegal");
}
