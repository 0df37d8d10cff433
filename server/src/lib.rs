//! Interleave's key-value node as it ships: one node of a real cluster, its state kept by the
//! `storage` crate, its RPCs and clients on TCP.
//!
//! - [`Server`] and [`serve`]: one node with its key-value service, as the `interleave-server`
//!   binary runs it ([`ServerArgs`], [`ServerConfig`]).
//! - [`tcp`]: connections, with the cluster's members and its administrators authenticated
//!   ([`tcp::auth`]) and every listener within its limits; [`wire`]: the messages' bytes.
//! - [`TcpTransport`] and [`TcpKvTransport`]: node-to-node RPCs and the client protocol;
//!   [`administer`]: an administrator's request, sent to whichever server leads.
//!
//! It never imports the lab (the layering test checks it): the lab drives servers from outside.
#![deny(missing_docs)]

mod admin;
mod administer;
mod fail_stop;
mod local_configs;
pub mod real_time;
mod serve;
mod server;
mod server_args;
mod signals;
pub mod tcp;
pub mod threads;
mod transport;
pub mod wire;

pub use administer::{administer, AdminError};
pub use fail_stop::{exit_on_panic, PANIC_EXIT};
pub use local_configs::{client_addresses, free_addresses, local_configs};
pub use serve::serve;
pub use server::{NodeFailed, Server, ServerConfig, StartError, NOT_AN_ADMINISTRATOR};
pub use server_args::{parse_address, ArgsError, BadValue, ServerArgs};
pub use signals::{stop_asked, stop_on_term_or_interrupt};
pub use transport::{FaultError, TcpKvTransport, TcpTransport};
