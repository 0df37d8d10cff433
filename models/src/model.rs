//! [`Model`]: a sequential specification, the definition of "correct" for one object.

use crate::history::Operation;
use std::fmt::Debug;
use std::hash::Hash;

/// A model's pruning, prepared for one history by [`Model::pruning`].
pub trait Pruning<State> {
    /// Whether, from `state`, with the operations for which `placed(index)` holds linearized,
    /// some order of the rest could still explain every operation. Returning `false` must be a
    /// proof that none can.
    fn can_continue(&self, state: &State, placed: &dyn Fn(usize) -> bool) -> bool;
}

/// A model's own verdict on a history ([`Model::decide`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Linearizable.
    Linearizable,
    /// Not linearizable: these operations (indices into the history, in order) cannot all be
    /// placed, for the reason given; the rest of the history does not matter.
    NotLinearizable {
        /// The operations that conflict.
        window: Vec<usize>,
        /// Why, in a sentence.
        why: String,
    },
}

/// A deterministic sequential specification: from a state and an input, the next state and the
/// output a correct object returns.
pub trait Model: Sync {
    /// The object's state. Hashed and compared by the checker's memo.
    type State: Clone + Eq + Hash + Debug + Send + Sync;
    /// An operation's input (what was called, with its arguments).
    type Input: Clone + Debug + Send + Sync;
    /// An operation's output (what it returned).
    type Output: Clone + Debug + PartialEq + Send + Sync;

    /// The initial state.
    fn init(&self) -> Self::State;

    /// Applies `input` to `state`: the next state and the output the specification gives.
    fn step(&self, state: &Self::State, input: &Self::Input) -> (Self::State, Self::Output);

    /// Whether an operation that returned `observed` may take effect on `state` (by default:
    /// the specification's output equals it). Returns the next state if so.
    fn accept(
        &self,
        state: &Self::State,
        input: &Self::Input,
        observed: &Self::Output,
    ) -> Option<Self::State> {
        let (next, output) = self.step(state, input);
        (output == *observed).then_some(next)
    }

    /// Optional pruning from the structure of the operations, prepared once for the history
    /// `operations` (the checker then asks it about every new state it reaches). `None`, the
    /// default, never prunes.
    fn pruning<'h>(
        &self,
        operations: &'h [Operation<Self::Input, Self::Output>],
    ) -> Option<Box<dyn Pruning<Self::State> + 'h>> {
        let _ = operations;
        None
    }

    /// Which operations of unknown outcome no returned operation could have observed: for each
    /// marked one, every linearization that places it stays a linearization without it, so the
    /// search may leave it out (an unknown outcome allows "never") without changing the verdict.
    /// Prepared once per history, one flag per operation; none marked, the default, is always
    /// right.
    fn unobservable(&self, operations: &[Operation<Self::Input, Self::Output>]) -> Vec<bool> {
        vec![false; operations.len()]
    }

    /// Whether `input` never changes the state, whatever the state (a read): an operation of
    /// unknown outcome that changes nothing constrains nothing, and the online checker leaves
    /// it out. `false`, the default, is always right.
    fn changes_nothing(&self, input: &Self::Input) -> bool {
        let _ = input;
        false
    }

    /// The bytes `state` owns outside itself (a string's buffer, a map's nodes): what the
    /// checker's memory budget counts for each state it keeps, beyond the state's own size. By
    /// default none, right for states without heap data.
    fn state_heap_bytes(&self, state: &Self::State) -> usize {
        let _ = state;
        0
    }

    /// Decides `operations` outright where the model knows an exact method faster than the
    /// search for histories of their shape (a register whose writes are all distinct:
    /// [`crate::register_zones`]); `None`, the default, leaves it to the search. Must agree with
    /// the search on every history it decides.
    fn decide(&self, operations: &[Operation<Self::Input, Self::Output>]) -> Option<Decision> {
        let _ = operations;
        None
    }

    /// A short human-readable form of an operation, for reports: `write(3)`, `get("k") -> "xy"`.
    fn describe(&self, input: &Self::Input, output: Option<&Self::Output>) -> String;
}
