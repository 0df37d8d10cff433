//! A register holding an integer (or nothing), with read, write and compare-and-set.

use crate::history::Operation;
use crate::model::{Decision, Model};
pub use crate::register_ops::{RegisterInput, RegisterOutput};

/// The register specification; the state is the current value, `None` before any write.
#[derive(Clone, Copy, Debug, Default)]
pub struct Register;

impl Model for Register {
    type State = Option<i64>;
    type Input = RegisterInput;
    type Output = RegisterOutput;

    fn changes_nothing(&self, input: &RegisterInput) -> bool {
        matches!(input, RegisterInput::Read)
    }

    fn init(&self) -> Option<i64> {
        None
    }

    fn step(&self, state: &Option<i64>, input: &RegisterInput) -> (Option<i64>, RegisterOutput) {
        match *input {
            RegisterInput::Read => (*state, RegisterOutput::Value(*state)),
            RegisterInput::Write(value) => (Some(value), RegisterOutput::Written),
            RegisterInput::Cas { expected, new } => {
                if *state == Some(expected) {
                    (Some(new), RegisterOutput::Swapped(true))
                } else {
                    (*state, RegisterOutput::Swapped(false))
                }
            }
        }
    }

    /// Histories whose writes are all distinct and have no compare-and-set are decided by
    /// their zones, exactly and in O(n log n) ([`crate::register_zones`]); any other is refuted
    /// at once if it observes a value certainly overwritten ([`crate::register_stale`]), and
    /// otherwise left to the search.
    fn decide(&self, operations: &[Operation<RegisterInput, RegisterOutput>]) -> Option<Decision> {
        crate::register_zones::decide(operations)
            .or_else(|| crate::register_stale::refute(operations))
    }

    /// A read that never returned observed nothing and changed nothing. A write of `v` that may
    /// never have taken effect, in a history without compare-and-sets, is unobservable when no
    /// read returned `v`: taken out of a linearization, it changes the value only until the
    /// next write, and any read in that stretch returned `v`. (A compare-and-set in that stretch
    /// would compare against another value, so with any in the history nothing is marked but
    /// reads.)
    fn unobservable(&self, operations: &[Operation<RegisterInput, RegisterOutput>]) -> Vec<bool> {
        let any_cas = operations
            .iter()
            .any(|op| matches!(op.input, RegisterInput::Cas { .. }));
        let read_values: std::collections::BTreeSet<i64> = operations
            .iter()
            .filter_map(|op| match op.output() {
                Some(RegisterOutput::Value(Some(value))) => Some(*value),
                _ => None,
            })
            .collect();
        operations
            .iter()
            .map(|op| {
                op.ret.is_none()
                    && match op.input {
                        RegisterInput::Read => true,
                        RegisterInput::Write(value) => !any_cas && !read_values.contains(&value),
                        RegisterInput::Cas { .. } => false,
                    }
            })
            .collect()
    }

    fn describe(&self, input: &RegisterInput, output: Option<&RegisterOutput>) -> String {
        let call = match input {
            RegisterInput::Read => "read()".to_string(),
            RegisterInput::Write(value) => format!("write({value})"),
            RegisterInput::Cas { expected, new } => format!("cas({expected}, {new})"),
        };
        match output {
            None => format!("{call} -> ?"),
            Some(RegisterOutput::Value(Some(value))) => format!("{call} -> {value}"),
            Some(RegisterOutput::Value(None)) => format!("{call} -> nil"),
            Some(RegisterOutput::Written) => call,
            Some(RegisterOutput::Swapped(true)) => format!("{call} -> ok"),
            Some(RegisterOutput::Swapped(false)) => format!("{call} -> fail"),
        }
    }
}
