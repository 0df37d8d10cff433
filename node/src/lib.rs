//! A Raft node on real threads, locks and channels, whose network, storage, time and
//! synchronization sit behind seams, so the same code runs in production mode, in simulation,
//! under loom and under shuttle.
//!
//! - [`core::RaftCore`]: the protocol rules as plain functions that return ordered
//!   [`core::Effect`]s (persist before reply, ...), unit-tested without threads. Besides the
//!   paper's rules: pre-vote, check-quorum and the leader lease, so a node cut off in one
//!   direction cannot stall or disrupt the cluster.
//! - [`Node`]: the rules wrapped in a ticker thread, an applier thread, per peer a replicator and
//!   a heartbeater thread, and RPC handlers that run on the caller's thread.
//! - [`kv`]: a key-value service on the node (server, clerk, exactly-once sessions, reads
//!   through the log, by ReadIndex ([`Node::read_index`]), or deliberately unsafe).
//! - Seams: [`Transport`] / [`RpcHandler`], [`Persister`], and from the `threadsim` crate the
//!   clock (every timed wait goes through [`threadsim::Clock`]) and `threadsim::sync`, the one
//!   module that picks std/parking_lot, loom or shuttle primitives.
//!
//! # Example: a three-node cluster in real time
//!
//! ```
//! # if threadsim::sync::MODEL_CHECKER_BUILD { return; } // a loom or shuttle build runs only models
//! use node::{Command, Config, Delivery, LocalNetwork, MemoryPersister, NoObserver, Node, NodeId,
//!            NodeParams, Workers};
//! use std::sync::Arc;
//! use threadsim::{channel, Clock, ClockRef, SystemClock};
//! use std::time::Duration;
//!
//! let clock: ClockRef = Arc::new(SystemClock::new());
//! let network = LocalNetwork::new(clock.clone(), Duration::from_millis(20));
//! let ids = [NodeId(0), NodeId(1), NodeId(2)];
//! let mut nodes = Vec::new();
//! let mut applied = Vec::new();
//! for (i, &id) in ids.iter().enumerate() {
//!     let (apply_sender, apply_receiver) = channel(&clock, 64, "apply");
//!     let node = Node::new(NodeParams {
//!         id,
//!         peers: ids.iter().copied().filter(|&p| p != id).collect(),
//!         membership: None,
//!         transport: network.clone(),
//!         persister: Arc::new(MemoryPersister::new()),
//!         clock: clock.clone(),
//!         apply_sender,
//!         config: Config { seed: i as u64, ..Config::default() },
//!         observer: Arc::new(NoObserver),
//!         workers: Workers::ALL,
//!     })
//!     .expect("valid configuration");
//!     network.register(id, node.rpc_handler());
//!     nodes.push(node);
//!     applied.push(apply_receiver);
//! }
//! // Offer the command until some node is leader and accepts it.
//! let index = loop {
//!     if let Some(Ok((index, _term))) =
//!         nodes.iter().map(|n| n.start(Command::from_text("hello"))).find(Result::is_ok)
//!     {
//!         break index;
//!     }
//!     clock.sleep(Duration::from_millis(20));
//! };
//! for receiver in &applied {
//!     // Entries, and a snapshot in place of those a compacted log no longer holds.
//!     let Some(Delivery::Entry(entry)) = receiver.recv() else { panic!("the entry") };
//!     assert_eq!((entry.index, entry.command), (index, Command::from_text("hello")));
//! }
//! for node in &nodes {
//!     node.kill();
//! }
//! ```
#![deny(missing_docs)]

mod broken;
pub mod config;
pub mod core;
pub mod coverage;
pub mod fault_points;
pub mod kv;
pub mod local_network;
pub mod log;
pub mod membership;
pub mod messages;
pub mod mutation;
pub mod observer;
pub mod persist;
pub mod shell;
pub mod transport;
pub mod types;
pub mod well_formed;

pub use config::Config;
pub use core::{
    ChangeRefused, Membership, MembershipChange, NotLeader, ProposeError, ReadIndexError,
    TransferRefused,
};
pub use local_network::LocalNetwork;
pub use mutation::{Mutation, MutationSet, MUTATIONS_AVAILABLE};
pub use observer::{LoggedEntry, NoObserver, NodeEvent, Observer, Role};
pub use persist::{
    GroupCommit, GroupCommitStats, MemoryPersister, PersistentState, Persister, RecordingPersister,
    StorageError, WriteTicket,
};
pub use shell::{
    Applied, Delivery, Node, NodeError, NodeParams, NodeStatus, Pass, ReplicationStats, Workers,
};
pub use transport::{RpcHandler, Transport, TransportError};
pub use types::{Command, Entry, LogIndex, NodeId, Term};
