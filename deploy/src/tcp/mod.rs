//! Calls over TCP: one connection per remote address, shared by every thread that calls it,
//! with calls matched to replies by id ([`Caller`]); and the serving side, which handles each
//! request on a thread of its own so a slow request never holds up the next ([`Listener`]).
//! [`Protocol`] names the messages: node-to-node RPCs ([`RaftRpc`]) or the client protocol
//! ([`ClientProtocol`]).

mod caller;
mod frame_reader;
mod listener;
mod protocol;

pub use caller::Caller;
pub use listener::{Listener, ListenerLimits};
pub use protocol::{ClientProtocol, Protocol, RaftRpc};
