//! A key-value service replicated by the Raft node: get, put and append, exactly-once retries,
//! and three ways to serve reads.
//!
//! - [`KvServer`]: one per node. Commands go through the log; one apply loop per server applies
//!   them in order to a [`KvStateMachine`] (rebuilt from the log after a restart) and answers
//!   the request handlers waiting on them.
//! - [`Clerk`]: the client library. Registers a session, finds the leader, retries on timeouts
//!   and wrong-leader answers with the same sequence number, and gives up only at the caller's
//!   deadline.
//! - Sessions expire by a rule every replica applies alike and that never costs exactly-once
//!   ([`SessionPolicy`], the module `sessions`).
//! - [`ReadMode`]: reads through the log, by ReadIndex ([`crate::Node::read_index`]), or
//!   (deliberately broken) from whichever node believes it leads.

mod bytes;
mod clerk;
mod command;
mod limits;
mod round_trips;
mod server;
mod sessions;
mod snapshot;
mod state_machine;

pub use clerk::{Clerk, ClerkConfig, ClerkError, GaveUp, KvTransport};
pub use command::{KvCommand, NotAKvCommand};
pub use limits::{Part, Refusal, MAX_KEY_BYTES, MAX_STORE_BYTES, MAX_TXN_STEPS, MAX_VALUE_BYTES};
pub use round_trips::RoundTrips;
pub use server::{KvObserver, KvServer, KvServerConfig};
pub use sessions::{SessionExpired, SessionPolicy, MAX_SESSIONS, SESSION_TIMEOUT};
pub use snapshot::BadSnapshot;
pub use state_machine::{KvStateMachine, Outcome};

use crate::NodeId;

/// Identifies a client (a [`Clerk`]) for duplicate suppression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientId(pub u64);

/// A client's sequence number for one operation; retries of the operation reuse it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seq(pub u64);

impl Seq {
    /// The sequence number after this one.
    pub fn next(self) -> Seq {
        Seq(self.0 + 1)
    }
}

/// An operation on the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KvOp {
    /// Reads a key (empty if never written).
    Get(String),
    /// Sets a key.
    Put(String, String),
    /// Appends to a key's value.
    Append(String, String),
    /// A transaction: its steps in order, atomically at one position of the log (each read
    /// sees the store as the steps before it left it). Answered [`KvResult::Reads`].
    Txn(Vec<TxnStep>),
}

/// One step of a [`KvOp::Txn`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxnStep {
    /// Reads a key (empty if never written).
    Read(String),
    /// Appends to a key's value.
    Append(String, String),
}

impl TxnStep {
    /// The key the step touches.
    pub fn key(&self) -> &str {
        match self {
            TxnStep::Read(key) | TxnStep::Append(key, _) => key,
        }
    }
}

/// What an applied operation returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KvResult {
    /// A get's value.
    Value(String),
    /// A put or append took effect.
    Done,
    /// A transaction took effect: the values its reads saw, in the order of its steps.
    Reads(Vec<String>),
}

/// A clerk's request to a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KvRequest {
    /// Opens a session: answered [`KvReply::Registered`] with the client's new id.
    Register,
    /// An operation in the client's session.
    Op {
        /// The sender.
        client: ClientId,
        /// The sender's sequence number for this operation (the same on every retry).
        seq: Seq,
        /// The operation.
        op: KvOp,
    },
}

/// A server's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KvReply {
    /// The operation took effect (exactly once) with this result.
    Ok(KvResult),
    /// This server does not lead (or lost leadership before the operation committed); try the
    /// hinted server, or another.
    WrongLeader {
        /// The leader this server last heard from, if any.
        leader_hint: Option<NodeId>,
    },
    /// This server leads but cannot answer yet (ReadIndex before an entry of its term
    /// committed); try again shortly.
    Retry,
    /// The operation was proposed but not applied in time: it may still take effect.
    Timeout,
    /// The operation was refused and changed nothing: a key or value over the limits
    /// ([`MAX_KEY_BYTES`], [`MAX_VALUE_BYTES`]). A retry is refused again.
    Refused(Refusal),
    /// A registration was applied: the client's id, for every operation of its session.
    Registered(ClientId),
    /// The client's session expired (or never was): the operation was not applied now, and
    /// whether an earlier attempt was is unknown. The client registers again.
    SessionExpired,
}

pub use runspec::ReadMode;

/// A read mode name this build does not take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnknownReadMode {
    /// No mode has that name.
    #[error("unknown read mode {0:?}; known: log, read-index, lease, unsafe-local")]
    Unknown(String),
    /// The deliberately broken mode, in a build without broken variants.
    #[error(
        "unsafe-local is a deliberately broken read mode (a deposed leader serves stale reads); \
         this build has no broken variants (they need the `mutations` feature)"
    )]
    Broken,
}

/// The mode named `name`; the broken `unsafe-local` only in a build with broken variants
/// ([`crate::MUTATIONS_AVAILABLE`]). Every entry point a user reaches parses read modes with
/// this (a command line's `--read-mode`), never with [`ReadMode::from_name`].
pub fn parse_read_mode(name: &str) -> Result<ReadMode, UnknownReadMode> {
    let mode =
        ReadMode::from_name(name).ok_or_else(|| UnknownReadMode::Unknown(name.to_string()))?;
    if mode.is_deliberately_broken() && !crate::MUTATIONS_AVAILABLE {
        return Err(UnknownReadMode::Broken);
    }
    Ok(mode)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    /// The names are what users type and what replay lines print (`--read-mode lease`): fixed,
    /// and each read back as its mode.
    #[test]
    fn every_read_mode_has_its_command_line_name_and_reads_back() {
        let names: Vec<String> = ReadMode::ALL.iter().map(ReadMode::to_string).collect();
        assert_eq!(names, ["log", "read-index", "lease", "unsafe-local"]);
        for mode in ReadMode::ALL {
            assert_eq!(mode.to_string(), mode.name());
            assert_eq!(parse_read_mode(mode.name()), Ok(mode));
        }
        assert_eq!(
            parse_read_mode("leases"),
            Err(UnknownReadMode::Unknown("leases".into()))
        );
    }
}
