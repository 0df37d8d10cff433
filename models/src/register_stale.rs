//! A sound refutation of any register history, by what values can still be there: an
//! operation that observed `v` (a read that returned it, a compare-and-set that swapped from it)
//! after a write of another value that certainly took effect, when that write was called only
//! after every operation that may write `v` had returned. The observer's value was last written
//! by one of those writers, each linearized before the overwrite, which is linearized before the
//! observer: the overwrite comes between, and the value cannot be `v`. (The initial value, no
//! value at all, is written by nothing but the beginning.)
//!
//! The converse does not hold: a history can be illegal for other reasons (an order the
//! compare-and-sets cannot all agree with), which the search finds. What this finds, it finds in
//! O(n log n) however many operations have an unknown outcome, and its counterexample is the
//! handful of operations of the argument: the search, with a stale read among hundreds of
//! timed-out operations, can run out of budget proving the same thing.

use crate::history::{Operation, Time};
use crate::model::Decision;
use crate::register_ops::{RegisterInput, RegisterOutput};
use std::collections::BTreeMap;

/// A value a register can hold (`None`: the initial, never written).
type Value = Option<i64>;

/// A write that certainly took effect: it returned (a write, or a compare-and-set that swapped).
#[derive(Clone, Copy, Debug)]
struct Overwrite {
    index: usize,
    value: i64,
    call: Time,
    ret: Time,
}

/// The refutation of `operations` by a stale observation, if there is one; `None` says nothing
/// (the history may still be illegal).
pub fn refute(operations: &[Operation<RegisterInput, RegisterOutput>]) -> Option<Decision> {
    // Per value, the operations that may write it and the latest return among them (`None`:
    // some never returned, and may take effect at any time after its call).
    let mut writers: BTreeMap<Value, (Vec<usize>, Option<Time>)> = BTreeMap::new();
    let mut overwrites: Vec<Overwrite> = Vec::new();
    for (index, op) in operations.iter().enumerate() {
        let written = match (op.input, op.output()) {
            (RegisterInput::Write(value), _) => value,
            (RegisterInput::Cas { new, .. }, Some(RegisterOutput::Swapped(true)) | None) => new,
            _ => continue,
        };
        let entry = writers
            .entry(Some(written))
            .or_insert((Vec::new(), Some(0)));
        entry.0.push(index);
        entry.1 = entry.1.zip(op.ret).map(|(latest, ret)| latest.max(ret));
        if let Some(ret) = op.ret {
            overwrites.push(Overwrite {
                index,
                value: written,
                call: op.call,
                ret,
            });
        }
    }
    overwrites.sort_by_key(|overwrite| overwrite.call);
    let soonest = SoonestReturns::of(&overwrites);
    for (index, op) in operations.iter().enumerate() {
        if op.ret.is_none() {
            continue;
        }
        let observed: Value = match (op.input, op.output()) {
            (RegisterInput::Read, Some(RegisterOutput::Value(value))) => *value,
            (RegisterInput::Cas { expected, .. }, Some(RegisterOutput::Swapped(true))) => {
                Some(expected)
            }
            _ => continue,
        };
        // Every writer of the value returned by then (the initial value: from the start).
        let (value_writers, all_returned_by) = match observed {
            None => (Vec::new(), None),
            Some(_) => match writers.get(&observed) {
                // Nothing may write it: a value from nowhere.
                None => {
                    return Some(Decision::NotLinearizable {
                        window: vec![index],
                        why: format!(
                            "{} observed {}, which no operation may have written",
                            describe(op),
                            shown(observed)
                        ),
                    })
                }
                Some((_, None)) => continue,
                Some((value_writers, Some(latest))) => (value_writers.clone(), Some(*latest)),
            },
        };
        // The overwrite called after them that returned soonest, of a value not the observed.
        let from = overwrites.partition_point(|o| all_returned_by.is_some_and(|t| o.call <= t));
        let Some(overwrite) = soonest.other_than(from, observed) else {
            continue;
        };
        if overwrite.ret < op.call {
            let mut window = value_writers;
            window.extend([overwrite.index, index]);
            window.sort_unstable();
            return Some(Decision::NotLinearizable {
                window,
                why: format!(
                    "{} observed {}, but {} (called at {}, returned at {}) came after every \
                     operation that may write {} and before the observation",
                    describe(op),
                    shown(observed),
                    describe(&operations[overwrite.index]),
                    overwrite.call,
                    overwrite.ret,
                    shown(observed)
                ),
            });
        }
    }
    None
}

/// For every suffix of the overwrites (sorted by call), the two that return soonest with
/// different values: whatever value an observer saw, one of them is of another.
struct SoonestReturns {
    /// `best[i]`: the soonest-returning overwrite of `overwrites[i..]`, and the soonest of a
    /// value other than its value.
    best: Vec<(Option<Overwrite>, Option<Overwrite>)>,
}

impl SoonestReturns {
    fn of(overwrites: &[Overwrite]) -> SoonestReturns {
        let mut best = vec![(None, None); overwrites.len() + 1];
        for i in (0..overwrites.len()).rev() {
            let candidate = overwrites[i];
            let (first, second) = best[i + 1];
            best[i] = match first {
                None => (Some(candidate), None),
                Some(first) if candidate.ret < first.ret => {
                    let second = if candidate.value == first.value {
                        second
                    } else {
                        Some(first)
                    };
                    (Some(candidate), second)
                }
                Some(first) => {
                    let better_second = candidate.value != first.value
                        && second.is_none_or(|second: Overwrite| candidate.ret < second.ret);
                    (
                        Some(first),
                        if better_second {
                            Some(candidate)
                        } else {
                            second
                        },
                    )
                }
            };
        }
        SoonestReturns { best }
    }

    /// The soonest-returning overwrite from `from` on whose value is not `observed`.
    fn other_than(&self, from: usize, observed: Value) -> Option<Overwrite> {
        let (first, second) = self.best[from];
        match first {
            Some(first) if Some(first.value) != observed => Some(first),
            _ => second,
        }
    }
}

fn describe(op: &Operation<RegisterInput, RegisterOutput>) -> String {
    let what = match op.input {
        RegisterInput::Read => "a read".to_string(),
        RegisterInput::Write(value) => format!("write({value})"),
        RegisterInput::Cas { expected, new } => format!("cas({expected}, {new})"),
    };
    format!("{what} of client {}", op.client)
}

fn shown(value: Value) -> String {
    value.map_or("no value (the initial)".to_string(), |value| {
        value.to_string()
    })
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::checker::brute::brute_force_linearizable;
    use crate::register_ops::{RegisterInput as In, RegisterOutput as Out};
    use crate::test_histories::{random_register_history_with, Lcg};
    use crate::Register;

    type RegOp = Operation<In, Out>;

    fn op(client: u64, input: In, output: Out, call: u64, ret: u64) -> RegOp {
        Operation::returned(client, input, output, call, ret)
    }

    fn cas(expected: i64, new: i64) -> In {
        In::Cas { expected, new }
    }

    #[test]
    fn a_value_overwritten_after_its_every_writer_returned_cannot_be_read_later() {
        // 1 is written twice, then 2 overwrites it, then 1 is read; a timed-out write of 3
        // changes nothing.
        let history = vec![
            op(0, In::Write(1), Out::Written, 0, 5),
            op(1, cas(1, 1), Out::Swapped(true), 1, 6),
            Operation::unknown(2, In::Write(3), 2),
            op(3, In::Write(2), Out::Written, 7, 9),
            op(4, In::Read, Out::Value(Some(1)), 10, 11),
        ];
        match refute(&history) {
            Some(Decision::NotLinearizable { window, .. }) => assert_eq!(window, [0, 1, 3, 4]),
            other => panic!("{other:?}"),
        }
        // A writer of 1 whose outcome is unknown may have taken effect after the overwrite.
        let mut unknown = history.clone();
        unknown[1] = Operation::unknown(1, cas(1, 1), 1);
        assert_eq!(refute(&unknown), None);
        // An overwrite of the same value proves nothing.
        let mut same = history.clone();
        same[3] = op(3, In::Write(1), Out::Written, 7, 9);
        assert_eq!(refute(&same), None);
    }

    #[test]
    fn the_initial_value_cannot_be_read_after_a_write_returned() {
        let history = vec![
            op(0, In::Write(4), Out::Written, 0, 1),
            op(1, In::Read, Out::Value(None), 2, 3),
        ];
        assert!(refute(&history).is_some());
        assert!(refute(&history[1..]).is_none());
    }

    #[test]
    fn every_refutation_is_right_and_its_window_alone_is_illegal_on_many_small_histories() {
        let mut rng = Lcg(11);
        let (mut refuted, mut illegal) = (0, 0);
        for case in 0..20_000 {
            let history = random_register_history_with(&mut rng, 8, 5);
            let legal = brute_force_linearizable(&Register, &history);
            illegal += usize::from(!legal);
            let Some(Decision::NotLinearizable { window, why }) = refute(&history) else {
                continue;
            };
            assert!(
                !legal,
                "case {case}: {why}, but it is linearizable: {history:#?}"
            );
            let alone: Vec<RegOp> = window.iter().map(|&i| history[i].clone()).collect();
            assert!(
                !brute_force_linearizable(&Register, &alone),
                "case {case}: the window {window:?} alone is linearizable: {history:#?}"
            );
            refuted += 1;
        }
        assert!(
            refuted > 1_000,
            "{refuted} of {illegal} illegal histories refuted"
        );
    }
}
