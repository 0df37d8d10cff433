//! Histories: what clients called, when, and what came back.

/// Time on the history's own scale (nanoseconds, log line numbers, ...). Only order matters.
pub type Time = u64;

/// What is known about how an operation ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome<O> {
    /// It returned this output; it took effect exactly once between its call and return.
    Returned(O),
    /// The client never learned (it timed out or crashed): the operation took effect at some
    /// point after its call, or never.
    Unknown,
}

/// One operation of one client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation<I, O> {
    /// The client (process) that issued it. A client has at most one operation in flight.
    pub client: u64,
    /// What was called.
    pub input: I,
    /// How it ended.
    pub outcome: Outcome<O>,
    /// When it was called.
    pub call: Time,
    /// When it returned; `None` for an unknown outcome.
    pub ret: Option<Time>,
}

impl<I, O> Operation<I, O> {
    /// A returned operation.
    pub fn returned(client: u64, input: I, output: O, call: Time, ret: Time) -> Self {
        assert!(
            call <= ret,
            "operation returns at {ret} before its call at {call}"
        );
        Operation {
            client,
            input,
            outcome: Outcome::Returned(output),
            call,
            ret: Some(ret),
        }
    }

    /// An operation whose outcome is unknown.
    pub fn unknown(client: u64, input: I, call: Time) -> Self {
        Operation {
            client,
            input,
            outcome: Outcome::Unknown,
            call,
            ret: None,
        }
    }

    /// The output, if it returned.
    pub fn output(&self) -> Option<&O> {
        match &self.outcome {
            Outcome::Returned(output) => Some(output),
            Outcome::Unknown => None,
        }
    }

    /// Whether it returned before `other` was called (so it must be linearized first).
    pub fn precedes<I2, O2>(&self, other: &Operation<I2, O2>) -> bool {
        self.ret.is_some_and(|ret| ret < other.call)
    }
}

/// A history: every operation of every client.
pub type History<I, O> = Vec<Operation<I, O>>;

/// A named independent part of a history (one key of a store, or `"all"`).
pub type Partition<I, O> = (String, History<I, O>);
