//! Calls over TCP: one connection per remote address, shared by every thread that calls it,
//! with calls matched to replies by id ([`Caller`]); and the serving side, which handles each
//! request on a thread of its own so a slow request never holds up the next ([`Listener`]).
//! [`Protocol`] names the messages: node-to-node RPCs ([`RaftRpc`]) or the client protocol
//! ([`ClientProtocol`]). With a [`ClusterKey`], both sides prove they hold it before anything
//! else is sent, and every frame after carries a tag ([`auth`]): a node port is keyed, and on
//! the client port an administrator's connection is ([`Admission`]).

mod admission;
pub mod auth;
mod caller;
mod connect_from;
mod frame_reader;
mod limits;
mod listener;
mod protocol;

pub use admission::{Admission, Standing, HANDSHAKE_DEADLINE};
pub use auth::{ClusterId, ClusterKey};
pub use caller::Caller;
pub use connect_from::connect_from;
pub use limits::ListenerLimits;
pub use listener::{Handler, Listener};
pub use protocol::{ClientProtocol, Protocol, RaftRpc};
