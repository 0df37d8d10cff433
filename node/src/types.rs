//! Newtypes for the terms of the protocol: node ids, terms, log indices, commands and entries.

use std::fmt;

/// The identity of a node in the cluster, stable across crashes and restarts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// A Raft term: a logical clock that only moves forward.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Term(pub u64);

/// A position in the replicated log. Index 0 is the empty prefix; the first entry is at 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogIndex(pub u64);

/// An opaque command that the service wants replicated.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Command(pub Vec<u8>);

/// One log entry: a command and the term in which a leader created it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The term of the leader that appended the entry.
    pub term: Term,
    /// The command it carries.
    pub command: Command,
}

impl Term {
    /// The highest term a node takes from a message or a file: half the range. One election a
    /// millisecond would take 292 million years to climb to it. A term above it is a protocol
    /// error (a forged or corrupt message), refused whole ([`crate::well_formed`]),
    /// so [`Term::next`] cannot run out: a forged term at the ceiling still leaves 2^63 elections.
    pub const HIGHEST: Term = Term(u64::MAX / 2);

    /// The term after this one. Panics past `u64::MAX`: terms above [`Term::HIGHEST`] are never
    /// taken, and 2^63 elections never happen.
    pub fn next(self) -> Term {
        Term(
            self.0.checked_add(1).expect(
                "no term is taken above Term::HIGHEST, so elections cannot exhaust the range",
            ),
        )
    }
}

impl LogIndex {
    /// The index after this one.
    pub fn next(self) -> LogIndex {
        LogIndex(self.0 + 1)
    }
    /// The index before this one, saturating at 0.
    pub fn prev(self) -> LogIndex {
        LogIndex(self.0.saturating_sub(1))
    }
}

impl Command {
    /// A command carrying the UTF-8 bytes of `text`.
    pub fn from_text(text: &str) -> Command {
        Command(text.as_bytes().to_vec())
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

impl fmt::Display for LogIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match std::str::from_utf8(&self.0) {
            Ok(text) => write!(f, "{text:?}"),
            Err(_) => write!(f, "{:02x?}", self.0),
        }
    }
}
