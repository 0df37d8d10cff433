//! An exact decision for register histories whose writes are all distinct (no two write the
//! same value, no compare-and-set), in O(n log n): Gibbons and Korach's zones ("Testing shared
//! memories", SIAM J. Computing 26(4), 1997). When every value names its write, each read knows
//! which write it saw, and a linearization is an order of *clusters*: a write followed by the
//! reads of its value, before the next write.
//!
//! Give each operation a point in `[call, ret]` (an order consistent with real time is the same
//! thing: `a` precedes `b` when `a.ret < b.call`). A cluster's points must lie in one stretch of
//! time that no other cluster's points enter. Let `f` be the earliest return of a cluster's
//! operations and `s` the latest call:
//!
//! - `f < s`: every placement of the cluster covers `[f, s]` (the operation that returned at
//!   `f` is placed by then, the one called at `s` after). This is its *forward zone*, and the
//!   cluster can be placed exactly on it (the write at `f`, each read at a point of its own in
//!   the zone).
//! - `s <= f`: every operation of the cluster contains `[s, f]` (its *backward zone*), and the
//!   whole cluster can sit at any one point of it.
//!
//! So the history is linearizable if and only if every read's write was called before the read
//! returned, no two forward zones overlap (touching is fine: two clusters can meet at a point),
//! and every backward zone has a point inside no forward zone. Operations of unknown outcome
//! are what the search makes of them: a read that never returned observed nothing and is left
//! out; a write that never returned took effect if some read returned its value (it is then
//! placed after its call, anywhere), and is left out otherwise (that it never took effect is
//! allowed, and places nothing in anyone's way). The initial value is a write at the beginning
//! of time, placed there.
//!
//! A refutation is local: the two clusters whose zones collide, or a read and its write, are the
//! whole counterexample, however long the history.

use crate::history::Operation;
use crate::model::Decision;
use crate::register_ops::{RegisterInput, RegisterOutput};
use std::collections::BTreeMap;

/// A time on a line that has room before the first call and after the last return.
type Point = i128;

/// Before every call: where the initial value is written.
const BEGINNING: Point = -1;
/// After every return: the return of a write whose outcome is unknown.
const NEVER: Point = u64::MAX as Point + 1;

/// One write and the returned reads of its value.
#[derive(Debug)]
struct Cluster {
    /// Its write (`None`: the initial value).
    write: Option<usize>,
    /// Its reads.
    reads: Vec<usize>,
    /// The earliest return of its operations.
    earliest_return: Point,
    /// The latest call of its operations.
    latest_call: Point,
}

impl Cluster {
    fn operations(&self) -> Vec<usize> {
        let mut all: Vec<usize> = self.write.into_iter().chain(self.reads.clone()).collect();
        all.sort_unstable();
        all
    }

    fn forward(&self) -> bool {
        self.earliest_return < self.latest_call
    }

    fn name(&self, value: Option<i64>) -> String {
        match (value, self.reads.len()) {
            (Some(value), 0) => format!("write({value}), read by nobody,"),
            (Some(value), reads) => format!("write({value}) with its {reads} read(s)"),
            (None, reads) => format!("the initial value with its {reads} read(s)"),
        }
    }
}

/// Decides `operations` by their zones, or `None` when the zones cannot decide it: a
/// compare-and-set, or two writes of one value.
pub fn decide(operations: &[Operation<RegisterInput, RegisterOutput>]) -> Option<Decision> {
    let mut writes: BTreeMap<i64, usize> = BTreeMap::new();
    for (index, op) in operations.iter().enumerate() {
        match op.input {
            RegisterInput::Cas { .. } => return None,
            RegisterInput::Write(value) => {
                if writes.insert(value, index).is_some() {
                    return None;
                }
            }
            RegisterInput::Read => {}
        }
    }
    let mut clusters: BTreeMap<Option<i64>, Cluster> = BTreeMap::new();
    for (index, op) in operations.iter().enumerate() {
        let Some(RegisterOutput::Value(value)) = op.output() else {
            continue;
        };
        let write = match value {
            Some(value) => match writes.get(value) {
                Some(&write) => Some(write),
                None => {
                    return Some(Decision::NotLinearizable {
                        window: vec![index],
                        why: format!("the read returned {value}, which no operation wrote"),
                    })
                }
            },
            None => None,
        };
        if let Some(write) = write {
            if operations[index].precedes(&operations[write]) {
                return Some(Decision::NotLinearizable {
                    window: sorted(vec![write, index]),
                    why: format!(
                        "the read of {} returned before its write was called",
                        value.expect("a written value")
                    ),
                });
            }
        }
        let cluster = clusters.entry(*value).or_insert_with(|| {
            let (call, ret) = match write {
                Some(write) => span(&operations[write]),
                None => (BEGINNING, BEGINNING),
            };
            Cluster {
                write,
                reads: Vec::new(),
                earliest_return: ret,
                latest_call: call,
            }
        });
        let (call, ret) = span(op);
        cluster.reads.push(index);
        cluster.earliest_return = cluster.earliest_return.min(ret);
        cluster.latest_call = cluster.latest_call.max(call);
    }
    // Writes nobody read: a returned one still has to be placed somewhere; an unknown one is
    // left out.
    for (&value, &write) in &writes {
        let op = &operations[write];
        if op.ret.is_some() && !clusters.contains_key(&Some(value)) {
            let (call, ret) = span(op);
            clusters.insert(
                Some(value),
                Cluster {
                    write: Some(write),
                    reads: Vec::new(),
                    earliest_return: ret,
                    latest_call: call,
                },
            );
        }
    }
    let mut forward: Vec<(Option<i64>, &Cluster)> = (clusters.iter())
        .filter(|(_, cluster)| cluster.forward())
        .map(|(value, cluster)| (*value, cluster))
        .collect();
    forward.sort_by_key(|(_, cluster)| (cluster.earliest_return, cluster.latest_call));
    for pair in forward.windows(2) {
        let ((first_value, first), (second_value, second)) = (pair[0], pair[1]);
        if second.earliest_return < first.latest_call {
            return Some(Decision::NotLinearizable {
                window: sorted([first.operations(), second.operations()].concat()),
                why: format!(
                    "{} must hold the register from {} to {}, and {} from {} to {}: the two \
                     overlap",
                    first.name(first_value),
                    shown(first.earliest_return),
                    shown(first.latest_call),
                    second.name(second_value),
                    shown(second.earliest_return),
                    shown(second.latest_call)
                ),
            });
        }
    }
    for (value, cluster) in clusters.iter().filter(|(_, cluster)| !cluster.forward()) {
        let (from, to) = (cluster.latest_call, cluster.earliest_return);
        // The forward zone with `from` strictly inside, if any: the cluster then goes at its end.
        let after = forward.partition_point(|(_, zone)| zone.earliest_return < from);
        let Some(&(zone_value, zone)) = after.checked_sub(1).map(|i| &forward[i]) else {
            continue;
        };
        if zone.latest_call > to {
            return Some(Decision::NotLinearizable {
                window: sorted([zone.operations(), cluster.operations()].concat()),
                why: format!(
                    "{} must take effect between {} and {}, while {} holds the register from {} \
                     to {}",
                    cluster.name(*value),
                    shown(from),
                    shown(to),
                    zone.name(zone_value),
                    shown(zone.earliest_return),
                    shown(zone.latest_call)
                ),
            });
        }
    }
    Some(Decision::Linearizable)
}

/// An operation's call and return as points (an unknown return: never).
fn span(op: &Operation<RegisterInput, RegisterOutput>) -> (Point, Point) {
    (Point::from(op.call), op.ret.map_or(NEVER, Point::from))
}

fn shown(point: Point) -> String {
    match point {
        BEGINNING => "the beginning".to_string(),
        NEVER => "never".to_string(),
        point => point.to_string(),
    }
}

fn sorted(mut indices: Vec<usize>) -> Vec<usize> {
    indices.sort_unstable();
    indices.dedup();
    indices
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::checker::brute::brute_force_linearizable;
    use crate::register_ops::{RegisterInput as In, RegisterOutput as Out};
    use crate::test_histories::{random_distinct_writes_history, Lcg};
    use crate::Register;

    type RegOp = Operation<In, Out>;

    fn op(client: u64, input: In, output: Out, call: u64, ret: u64) -> RegOp {
        Operation::returned(client, input, output, call, ret)
    }

    fn illegal_window(history: &[RegOp]) -> Vec<usize> {
        match decide(history) {
            Some(Decision::NotLinearizable { window, .. }) => window,
            other => panic!("expected a refutation, got {other:?}"),
        }
    }

    #[test]
    fn a_stale_read_is_refuted_by_the_two_clusters_alone() {
        let history = vec![
            op(0, In::Write(1), Out::Written, 0, 10),
            op(1, In::Read, Out::Value(Some(1)), 5, 12), // concurrent: fine
            op(0, In::Write(2), Out::Written, 20, 30),
            op(2, In::Read, Out::Value(Some(2)), 31, 35),
            op(1, In::Read, Out::Value(Some(1)), 40, 41), // stale
            op(2, In::Write(3), Out::Written, 50, 60),
        ];
        assert_eq!(illegal_window(&history), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_read_before_its_write_or_of_a_value_never_written_is_refuted_with_it_alone() {
        let early = vec![
            op(1, In::Read, Out::Value(Some(7)), 0, 1),
            op(0, In::Write(7), Out::Written, 2, 3),
        ];
        assert_eq!(illegal_window(&early), [0, 1]);
        let invented = vec![op(1, In::Read, Out::Value(Some(7)), 0, 1)];
        assert_eq!(illegal_window(&invented), [0]);
    }

    #[test]
    fn a_write_wholly_inside_another_clusters_stretch_cannot_be_placed() {
        // Reads of 1 at 20 and at 40 pin 1 to the register from 10 to 40; a write of 2 that ran
        // from 15 to 25 would have to land in between.
        let history = vec![
            op(0, In::Write(1), Out::Written, 0, 10),
            op(1, In::Read, Out::Value(Some(1)), 12, 20),
            op(2, In::Write(2), Out::Written, 15, 25),
            op(1, In::Read, Out::Value(Some(1)), 40, 41),
        ];
        assert_eq!(illegal_window(&history), [0, 1, 2, 3]);
        // Unknown, nobody read it: it may never have happened.
        let mut unknown = history.clone();
        unknown[2] = Operation::unknown(2, In::Write(2), 15);
        assert_eq!(decide(&unknown), Some(Decision::Linearizable));
    }

    #[test]
    fn clusters_that_meet_at_one_instant_are_placed_one_after_the_other() {
        // 1's stretch ends at 10 (a read called then) where 2's begins (a read returned then).
        let history = vec![
            op(0, In::Write(1), Out::Written, 0, 5),
            op(1, In::Read, Out::Value(Some(1)), 10, 12),
            op(2, In::Write(2), Out::Written, 0, 8),
            op(3, In::Read, Out::Value(Some(2)), 9, 10),
        ];
        let zones = decide(&history).expect("decided");
        assert_eq!(
            zones == Decision::Linearizable,
            brute_force_linearizable(&Register, &history)
        );
    }

    #[test]
    fn a_compare_and_set_or_a_value_written_twice_is_left_to_the_search() {
        let cas = In::Cas {
            expected: 1,
            new: 2,
        };
        assert_eq!(decide(&[op(0, cas, Out::Swapped(false), 0, 1)]), None);
        let twice = [
            op(0, In::Write(1), Out::Written, 0, 1),
            op(1, In::Write(1), Out::Written, 0, 1),
        ];
        assert_eq!(decide(&twice), None);
    }

    #[test]
    fn the_zones_agree_with_brute_force_on_many_small_random_histories() {
        let mut rng = Lcg(7);
        let (mut legal, mut illegal) = (0, 0);
        for case in 0..20_000 {
            let history = random_distinct_writes_history(&mut rng);
            let expected = brute_force_linearizable(&Register, &history);
            let zones = decide(&history).expect("distinct writes, no compare-and-set");
            assert_eq!(
                zones == Decision::Linearizable,
                expected,
                "case {case}: {history:#?}\nzones say {zones:?}"
            );
            if let Decision::NotLinearizable { window, .. } = zones {
                // The window alone is a refutation: the rest of the history does not matter.
                let alone: Vec<RegOp> = window.iter().map(|&i| history[i].clone()).collect();
                assert!(
                    !brute_force_linearizable(&Register, &alone),
                    "case {case}: the window {window:?} alone is linearizable: {history:#?}"
                );
                illegal += 1;
            } else {
                legal += 1;
            }
        }
        assert!(
            legal > 2_000 && illegal > 2_000,
            "{legal} legal, {illegal} illegal"
        );
    }
}
