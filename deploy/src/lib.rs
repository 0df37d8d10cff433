//! Interleave's Raft node as a real deployment: the parts a node needs outside a simulation.
//!
//! - [`WalPersister`]: the node's state as an append-only log of what each save changed
//!   (segments of CRC32C records, fsyncs shared among concurrent saves, snapshots in files of
//!   their own), the server's default storage; a torn tail is cut on recovery, damage anywhere
//!   else refused with its file and offset ([`wal`]).
//! - [`FilePersister`]: the node's state in a real file, replaced atomically (a new file written
//!   and `fdatasync`ed, renamed over the old one, the directory `fsync`ed) and framed with a
//!   CRC32C, so a process killed at any point restarts from the old state or the new one, and a
//!   damaged file is refused with a message that names it.
//! - [`TcpTransport`] and [`TcpKvTransport`]: node-to-node RPCs and the client protocol over
//!   TCP ([`wire`], [`tcp`]).
//! - [`Server`] and [`serve`]: one node with its key-value service, as the `interleave-server`
//!   binary runs it.
//! - [`lossy_fs`]: a FUSE file system for a server's data directory that loses, on command,
//!   what was written and not synced, as a power cut does.
//! - [`LocalCluster`], [`LinkProxy`] and [`netns`]: servers as processes on this machine with
//!   a proxy on every link, or each a host in a network namespace of its own behind a packet
//!   filter, and [`nemesis`], which drives them through faults while clients record a history.
//!
//! Everything here is real: files, `fsync`, processes. It never runs under a model checker, so
//! it uses the standard library's primitives directly.
//!
//! ```
//! use deploy::FilePersister;
//! use node::Persister;
//!
//! # if threadsim::sync::MODEL_CHECKER_BUILD { return; } // a loom or shuttle build runs only models
//! let dir = std::env::temp_dir().join(format!("deploy-doc-{}", std::process::id()));
//! let persister = FilePersister::open(&dir).expect("a usable directory");
//! persister.save(b"term 3, voted for n1").expect("written");
//! assert_eq!(persister.load().unwrap().as_deref(), Some(&b"term 3, voted for n1"[..]));
//! # drop(persister);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```
#![deny(missing_docs)]

mod admin;
mod administer;
mod data_dir;
mod fail_stop;
mod file_persister;
mod link_fault;
mod links;
mod local_cluster;
mod local_configs;
pub mod lossy_fs;
pub mod nemesis;
pub mod netns;
mod proxy;
mod real_time;
mod serve;
mod server;
mod server_args;
mod signals;
mod state_file;
mod storage;
pub mod system;
pub mod tcp;
mod threads;
mod transport;
pub mod wal;
pub mod wire;

pub use administer::{administer, AdminError};
pub use data_dir::OpenError;
pub use fail_stop::{exit_on_panic, PANIC_EXIT};
#[cfg(feature = "mutations")]
pub use file_persister::BrokenWrite;
pub use file_persister::FilePersister;
pub use link_fault::LinkFault;
pub use links::Network;
pub use local_cluster::{
    free_addresses, LocalCluster, LocalClusterSpec, HOST_CLIENT_PORT, HOST_RPC_PORT,
    MAX_LOCAL_NODES,
};
pub use local_configs::{client_addresses, local_configs};
pub use proxy::LinkProxy;
pub use serve::serve;
pub use server::{NodeFailed, Server, ServerConfig, StartError, NOT_AN_ADMINISTRATOR};
pub use server_args::ServerArgs;
pub use signals::{stop_asked, stop_on_term_or_interrupt};
pub use state_file::{decode_state_file, encode_state_file, MAX_STATE_BYTES};
pub use storage::{Storage, StorageKind};
pub use system::ServerProgram;
pub use transport::{TcpKvTransport, TcpTransport};
pub use wal::{WalError, WalPersister};
