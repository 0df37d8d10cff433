//! A brute-force checker: tries every order consistent with real time, with no memo and no
//! cleverness. Exponential; it exists as an independent oracle for the differential test.

use crate::history::Operation;
use crate::model::Model;

/// Whether `operations` is linearizable, by exhaustive search. Use only on small histories.
pub fn brute_force_linearizable<M: Model>(
    model: &M,
    operations: &[Operation<M::Input, M::Output>],
) -> bool {
    assert!(
        operations.len() <= 12,
        "brute force on {} operations would take forever",
        operations.len()
    );
    let mut placed = vec![false; operations.len()];
    extend(model, operations, &mut placed, &model.init())
}

fn extend<M: Model>(
    model: &M,
    operations: &[Operation<M::Input, M::Output>],
    placed: &mut [bool],
    state: &M::State,
) -> bool {
    let all_returned_placed = operations
        .iter()
        .zip(placed.iter())
        .all(|(op, &p)| p || op.ret.is_none());
    if all_returned_placed {
        return true;
    }
    for next in 0..operations.len() {
        if placed[next] {
            continue;
        }
        // Real time: nothing still unplaced may have returned before `next` was called.
        let blocked = (0..operations.len())
            .any(|other| !placed[other] && operations[other].precedes(&operations[next]));
        if blocked {
            continue;
        }
        let after = match operations[next].output() {
            Some(observed) => {
                let (after, output) = model.step(state, &operations[next].input);
                if output != *observed {
                    continue;
                }
                after
            }
            None => model.step(state, &operations[next].input).0,
        };
        placed[next] = true;
        let found = extend(model, operations, placed, &after);
        placed[next] = false;
        if found {
            return true;
        }
    }
    false
}
