//! The checker on one hand-made history per anomaly, and against a brute-force search for a
//! serial order on thousands of small random histories.

use super::*;

fn append(key: u64, value: u64) -> MicroOp {
    MicroOp::Append { key, value }
}

fn read(key: u64, list: &[u64]) -> MicroOp {
    MicroOp::Read {
        key,
        list: Some(list.to_vec()),
    }
}

/// A committed transaction of client `client` from `call` to `ret`.
fn txn(client: u64, call: u64, ret: u64, ops: Vec<MicroOp>) -> Txn {
    Txn {
        client,
        call,
        ret: Some(ret),
        outcome: TxnOutcome::Committed,
        ops,
    }
}

fn names(history: &[Txn]) -> Vec<String> {
    check_list_append(history)
        .anomalies
        .iter()
        .map(Anomaly::name)
        .collect()
}

#[test]
fn a_serial_history_has_no_anomaly() {
    let history = vec![
        txn(0, 0, 1, vec![append(1, 1), read(1, &[1])]),
        txn(1, 2, 3, vec![read(1, &[1]), append(2, 1), append(1, 2)]),
        txn(0, 4, 5, vec![read(1, &[1, 2]), read(2, &[1])]),
    ];
    let report = check_list_append(&history);
    assert_eq!(report.anomalies, vec![]);
    assert!(report.strictly_serializable() && report.serializable());
    assert_eq!(report.transactions, 3);
}

#[test]
fn each_cycle_is_named_by_the_weakest_level_it_breaks() {
    // Concurrent throughout (call 0, return 10): no real-time edge among them.
    let g0 = vec![
        txn(0, 0, 10, vec![append(1, 1), append(2, 1)]),
        txn(1, 0, 10, vec![append(1, 2), append(2, 2)]),
        txn(2, 0, 10, vec![read(1, &[1, 2]), read(2, &[2, 1])]),
    ];
    let g1c = vec![
        txn(0, 0, 10, vec![append(1, 1), read(2, &[1])]),
        txn(1, 0, 10, vec![append(2, 1), read(1, &[1])]),
    ];
    let g_single = vec![
        txn(0, 0, 10, vec![read(1, &[]), read(2, &[1])]),
        txn(1, 0, 10, vec![append(1, 1), append(2, 1)]),
        txn(2, 0, 10, vec![read(1, &[1])]),
    ];
    let g2 = vec![
        txn(0, 0, 10, vec![read(1, &[]), append(2, 1)]),
        txn(1, 0, 10, vec![read(2, &[]), append(1, 1)]),
        txn(2, 0, 10, vec![read(1, &[1]), read(2, &[1])]),
    ];
    assert_eq!(names(&g0), ["G0"]);
    assert_eq!(names(&g1c), ["G1c"]);
    assert_eq!(names(&g_single), ["G-single"]);
    assert_eq!(names(&g2), ["G2"]);
    let report = check_list_append(&g_single);
    let Anomaly::Cycle { steps, .. } = &report.anomalies[0] else {
        panic!("{report:?}");
    };
    let edges: Vec<EdgeKind> = steps.iter().map(|step| step.edge).collect();
    assert_eq!(edges.len(), 2);
    assert!(edges.contains(&EdgeKind::Rw) && edges.contains(&EdgeKind::Wr));
}

#[test]
fn a_stale_read_after_a_write_returned_breaks_only_strict_serializability() {
    let history = vec![
        txn(0, 0, 10, vec![append(1, 1)]),
        txn(1, 20, 30, vec![read(1, &[])]),
        txn(2, 40, 50, vec![read(1, &[1])]),
    ];
    let report = check_list_append(&history);
    assert_eq!(names(&history), ["G-single-realtime"]);
    assert!(report.serializable() && !report.strictly_serializable());
}

#[test]
fn anomalies_without_a_cycle_are_named() {
    let aborted = vec![
        Txn {
            outcome: TxnOutcome::Aborted,
            ..txn(0, 0, 10, vec![append(1, 1)])
        },
        txn(1, 20, 30, vec![read(1, &[1])]),
    ];
    assert_eq!(names(&aborted), ["G1a"]);
    let intermediate = vec![
        txn(0, 0, 10, vec![append(1, 1), append(1, 2)]),
        txn(1, 0, 10, vec![read(1, &[1])]),
        txn(2, 20, 30, vec![read(1, &[1, 2])]),
    ];
    // Reading its first append puts the reader both after the writer (wr) and before it (rw):
    // a G-single as well.
    assert_eq!(names(&intermediate), ["G1b", "G-single"]);
    let incompatible = vec![
        txn(0, 0, 10, vec![append(1, 1)]),
        txn(1, 0, 10, vec![append(1, 2)]),
        txn(2, 20, 30, vec![read(1, &[1, 2])]),
        txn(3, 20, 30, vec![read(1, &[2, 1])]),
    ];
    assert!(names(&incompatible).contains(&"incompatible-order".to_string()));
    let garbage = vec![txn(0, 0, 10, vec![read(1, &[7])])];
    assert_eq!(names(&garbage), ["garbage-read"]);
    let internal = vec![txn(0, 0, 10, vec![append(1, 1), read(1, &[])])];
    assert!(names(&internal).contains(&"internal".to_string()));
}

#[test]
fn an_unknown_transaction_counts_only_when_its_append_is_seen() {
    let unknown = |ops| Txn {
        ret: None,
        outcome: TxnOutcome::Unknown,
        ..txn(0, 0, 0, ops)
    };
    let unseen = vec![
        unknown(vec![append(1, 1)]),
        txn(1, 20, 30, vec![read(1, &[])]),
    ];
    let report = check_list_append(&unseen);
    assert!(report.strictly_serializable(), "{report:?}");
    assert_eq!(report.transactions, 1);
    let seen = vec![
        unknown(vec![append(1, 1)]),
        txn(1, 20, 30, vec![read(1, &[1])]),
    ];
    assert_eq!(check_list_append(&seen).transactions, 2);
}

#[path = "../../examples/shared/random.rs"]
mod random;

/// A small history: transactions run one at a time in a random order, each taking effect at an
/// instant inside its call and return (so it is strictly serializable), then, half the time,
/// one read's list replaced by a shorter prefix (a stale read) or one transaction's interval
/// moved (which may break the real-time order).
fn small_history(seed: u64) -> Vec<Txn> {
    let mut draws = random::Random(seed);
    let keys = 1 + draws.below(3);
    let count = 2 + draws.below(4) as usize;
    let mut lists: Vec<Vec<u64>> = vec![Vec::new(); keys as usize + 1];
    let mut next_value = 1;
    let mut history = Vec::new();
    for at in 0..count {
        let mut ops = Vec::new();
        for _ in 0..1 + draws.below(3) {
            let key = 1 + draws.below(keys);
            if draws.below(2) == 0 {
                ops.push(read(key, &lists[key as usize]));
            } else {
                lists[key as usize].push(next_value);
                ops.push(append(key, next_value));
                next_value += 1;
            }
        }
        let effect = 10 * at as u64 + 20;
        history.push(txn(
            at as u64,
            effect - draws.below(12),
            effect + draws.below(12),
            ops,
        ));
    }
    // A final read of every key, after everything: every append is in a version order.
    let last = 10 * count as u64 + 40;
    let reads = (1..=keys)
        .map(|key| read(key, &lists[key as usize]))
        .collect();
    history.push(txn(99, last, last + 1, reads));
    if draws.below(2) == 0 {
        let victim = draws.below(count as u64) as usize;
        if draws.below(2) == 0 {
            for op in &mut history[victim].ops {
                if let MicroOp::Read {
                    list: Some(list), ..
                } = op
                {
                    list.truncate(list.len().saturating_sub(1 + draws.below(2) as usize));
                }
            }
        } else {
            let shift = draws.below(40);
            history[victim].call += shift;
            history[victim].ret = history[victim].ret.map(|ret| ret + shift + 1);
        }
    }
    history
}

/// Whether some serial order of the transactions, respecting real time, gives every read the
/// list it saw and every transaction its own appends.
fn serial_order_exists(history: &[Txn]) -> bool {
    fn search(history: &[Txn], done: &mut Vec<bool>, lists: &mut Vec<Vec<u64>>) -> bool {
        if done.iter().all(|d| *d) {
            return true;
        }
        for next in 0..history.len() {
            if done[next] {
                continue;
            }
            // Every transaction that returned before this one was called goes first.
            let waits = (0..history.len()).any(|other| {
                !done[other] && other != next && history[other].ret < Some(history[next].call)
            });
            if waits {
                continue;
            }
            let saved = lists.clone();
            let fits = history[next].ops.iter().all(|op| match op {
                MicroOp::Append { key, value } => {
                    lists[*key as usize].push(*value);
                    true
                }
                MicroOp::Read { key, list } => list.as_deref() == Some(&lists[*key as usize][..]),
            });
            if fits {
                done[next] = true;
                if search(history, done, lists) {
                    return true;
                }
                done[next] = false;
            }
            *lists = saved;
        }
        false
    }
    search(
        history,
        &mut vec![false; history.len()],
        &mut vec![Vec::new(); 8],
    )
}

#[test]
fn the_checker_agrees_with_a_brute_force_search_for_a_serial_order() {
    let mut broken = 0;
    for seed in 0..4000 {
        let history = small_history(seed);
        let expected = serial_order_exists(&history);
        let report = check_list_append(&history);
        assert_eq!(
            report.strictly_serializable(),
            expected,
            "seed {seed}: {history:#?}\n{report:#?}"
        );
        broken += usize::from(!expected);
    }
    assert!((400..3600).contains(&broken), "both kinds: {broken} broken");
}
