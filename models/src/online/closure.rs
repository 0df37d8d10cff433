//! The end states of one window: from each possible state at the window's start, every state
//! some linearization of the window's operations can end in.

use super::Carried;
use crate::checker::FoldHasher;
use crate::history::{Operation, Outcome};
use crate::model::Model;
#[allow(clippy::disallowed_types)] // lookups only: nothing iterates the memo
use std::collections::HashSet;
use std::hash::BuildHasherDefault;

/// The most operations one closure can hold (carried ones included): its sets are fixed arrays.
pub(super) const MAX_OPERATIONS: usize = 256;

/// The most (placed, state) pairs one closure may visit: past it, it gives up
/// ([`Closure::exhausted`]), and the caller decides nothing from it.
pub(super) const MAX_VISITS: usize = 20_000;

/// Which of a closure's operations are placed.
pub(super) type Placed = [u64; MAX_OPERATIONS / 64];

/// A possible state at a cut, and which of the key's carried operations of unknown outcome it
/// has not applied (they may still take effect later, or never).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Entry<S> {
    pub(super) state: S,
    pub(super) unapplied: Carried,
}

#[allow(clippy::disallowed_types)] // see the import
pub(super) type Seen<S> = HashSet<(Placed, S), BuildHasherDefault<FoldHasher>>;

/// What a closure may look at, and its memo (kept between closures to keep its allocation).
pub(super) struct Closure<'a, M: Model> {
    model: &'a M,
    /// The carried operations (unknown outcome, from earlier windows) first, then the window's.
    operations: &'a [Operation<M::Input, M::Output>],
    /// How many of `operations` are carried.
    carried: usize,
    /// For each operation, the returned operations that must come before it (returned before
    /// its call), as a set.
    predecessors: Vec<Placed>,
    seen: &'a mut Seen<M::State>,
    /// Visits left before it gives up.
    budget: usize,
    /// Whether it gave up: what it found is then incomplete.
    pub(super) exhausted: bool,
}

/// The memo a key's closures share.
#[allow(clippy::disallowed_types)] // see the import
pub(super) fn new_memo<S>() -> Seen<S> {
    HashSet::default()
}

impl<'a, M: Model> Closure<'a, M> {
    /// A closure of `operations`, the first `carried` of them carried, with the memo `seen`
    /// (cleared) and the whole budget.
    pub(super) fn new(
        model: &'a M,
        operations: &'a [Operation<M::Input, M::Output>],
        carried: usize,
        seen: &'a mut Seen<M::State>,
    ) -> Closure<'a, M> {
        seen.clear();
        Closure {
            model,
            operations,
            carried,
            predecessors: predecessors(operations),
            seen,
            budget: MAX_VISITS,
            exhausted: false,
        }
    }

    /// Every end state of the operations from `start`: each returned operation placed once,
    /// in an order real time allows, with the output it returned; each of unknown outcome
    /// (carried and unapplied, or new) placed or not. `on_end` gets each end state with the
    /// operations of unknown outcome it left unapplied (as indices into `operations`); with
    /// `stop_at_first` only the first. Returns whether it stopped early (at the first end, or
    /// [`Closure::exhausted`]).
    pub(super) fn ends(
        &mut self,
        start: &Entry<M::State>,
        stop_at_first: bool,
        on_end: &mut dyn FnMut(&M::State, &[usize]),
    ) -> bool {
        let mut placed: Placed = [0; MAX_OPERATIONS / 64];
        for index in 0..self.carried {
            if !start.unapplied.contains(index) {
                set(&mut placed, index);
            }
        }
        self.walk(placed, start.state.clone(), stop_at_first, on_end)
    }

    /// Depth first from `placed` and `state`; true once an end was found with `stop_at_first`.
    fn walk(
        &mut self,
        placed: Placed,
        state: M::State,
        stop_at_first: bool,
        on_end: &mut dyn FnMut(&M::State, &[usize]),
    ) -> bool {
        if self.budget == 0 {
            self.exhausted = true;
            return true;
        }
        if !self.seen.insert((placed, state.clone())) {
            return false;
        }
        self.budget -= 1;
        let operations = self.operations;
        let all_returned_placed = (0..operations.len())
            .all(|index| contains(&placed, index) || operations[index].ret.is_none());
        if all_returned_placed {
            let unapplied: Vec<usize> = (0..operations.len())
                .filter(|&index| !contains(&placed, index))
                .collect();
            on_end(&state, &unapplied);
            if stop_at_first {
                return true;
            }
        }
        for (index, operation) in operations.iter().enumerate() {
            if contains(&placed, index) || !within(&placed, &self.predecessors[index]) {
                continue;
            }
            let next = match &operation.outcome {
                Outcome::Returned(output) => self.model.accept(&state, &operation.input, output),
                Outcome::Unknown => Some(self.model.step(&state, &operation.input).0),
            };
            if let Some(next) = next {
                let mut after = placed;
                set(&mut after, index);
                if self.walk(after, next, stop_at_first, on_end) {
                    return true;
                }
            }
        }
        false
    }
}

/// For each of `operations`, the returned ones that must come before it.
fn predecessors<I, O>(operations: &[Operation<I, O>]) -> Vec<Placed> {
    (operations.iter())
        .map(|operation| {
            let mut before: Placed = [0; MAX_OPERATIONS / 64];
            for (index, other) in operations.iter().enumerate() {
                if other.precedes(operation) {
                    set(&mut before, index);
                }
            }
            before
        })
        .collect()
}

fn set(placed: &mut Placed, index: usize) {
    placed[index / 64] |= 1 << (index % 64);
}

fn contains(placed: &Placed, index: usize) -> bool {
    placed[index / 64] & (1 << (index % 64)) != 0
}

/// Whether every member of `needed` is in `placed`.
fn within(placed: &Placed, needed: &Placed) -> bool {
    placed
        .iter()
        .zip(needed)
        .all(|(have, need)| need & !have == 0)
}
