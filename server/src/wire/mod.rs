//! What travels over TCP: length-prefixed frames ([`frame`]) carrying node-to-node RPCs
//! ([`rpc`]) and the key-value client protocol ([`kv`], with the administrator's requests of
//! [`admin`]), each tagged with a call id so that
//! many calls can share one connection. Every decoder checks every length and tag and refuses
//! what it does not understand with a [`WireError`]; nothing a peer sends can make it panic or
//! allocate more than the frame limit.

pub mod admin;
mod codec;
pub mod frame;
pub mod kv;
pub mod rpc;

pub use codec::{Reader, Writer};

/// Why bytes from the network were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The message ended before a field it needs.
    #[error("message cut short reading {0}")]
    Short(&'static str),
    /// A field held a value no encoder writes.
    #[error("bad {field}: {value}")]
    Bad {
        /// Which field.
        field: &'static str,
        /// What it held.
        value: u64,
    },
    /// Bytes were left after the message.
    #[error("{0} bytes after the end of the message")]
    Trailing(usize),
    /// A frame announced more than the limit.
    #[error("a frame of {0} bytes is over the limit")]
    TooLarge(u64),
    /// A message no correct node sends: a term past the ceiling, a log from the future.
    #[error("not a message a node sends: {0}")]
    Malformed(#[from] node::well_formed::Malformed),
}
