//! Interleave's lab for real clusters: everything that drives servers from outside, none of
//! which ships in a server.
//!
//! - [`LocalCluster`], [`LinkProxy`] and [`netns`]: servers as processes on this machine with
//!   a proxy on every link, or each a host in a network namespace of its own behind a packet
//!   filter ([`Network`]).
//! - [`lossy_fs`]: a FUSE file system for a server's data directory that loses, on command,
//!   what was written and not synced, as a power cut does.
//! - [`system`]: the servers a cluster runs (this project's, etcd), behind one trait.
//! - [`nemesis`]: drives a cluster through faults while clients record a history.
//!
//! Everything here is real: processes, sockets, packet filters, FUSE. It never runs under a
//! model checker, so it uses the standard library's primitives directly.
#![deny(missing_docs)]

mod link_fault;
mod links;
mod local_cluster;
pub mod lossy_fs;
pub mod nemesis;
pub mod netns;
mod proxy;
pub mod system;
mod unavailable;

pub use link_fault::LinkFault;
pub use links::Network;
pub use local_cluster::{
    LocalCluster, LocalClusterSpec, HOST_CLIENT_PORT, HOST_RPC_PORT, MAX_LOCAL_NODES,
};
pub use proxy::LinkProxy;
pub use system::ServerProgram;
pub use unavailable::Unavailable;
