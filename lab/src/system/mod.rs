//! The system under test, as a [`crate::LocalCluster`] and the [`crate::nemesis`] drive it: a
//! small adapter that says how to start one node with its data directory and addresses, and,
//! once the nodes run, a [`Connection`] to them that makes clients (get, put, and append where
//! the system has it), says which nodes believe they lead, and (for a server written to
//! cooperate) carries the faults only the server itself can make: a clock that runs fast or
//! slow, a disk that fails.
//!
//! Two adapters: [`InterleaveServer`], this project's own server, and [`Etcd`], a system nobody
//! here wrote, driven through its JSON gateway. Every fault from outside (signals, packet
//! filters, proxies, the lossy file system) works on both.

mod base64;
mod etcd;
mod http;
mod interleave;

pub use etcd::{Etcd, EtcdReads};
pub use interleave::{InterleaveServer, ServerProgram};

use models::{KvInput, KvOutput};
use node::NodeId;
use server::TcpKvTransport;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What starting one node needs.
#[derive(Clone, Debug)]
pub struct NodeStart<'a> {
    /// The node.
    pub id: NodeId,
    /// Every node (this one too) and where this node reaches it for node-to-node traffic (a
    /// peer's proxy, with proxies).
    pub members: &'a BTreeMap<NodeId, SocketAddr>,
    /// Where this node listens for the other nodes.
    pub listen: SocketAddr,
    /// Where this node listens for clients.
    pub client: SocketAddr,
    /// Its data directory (its files from an earlier run of the node, or none).
    pub data_dir: &'a Path,
}

/// A system the nemesis can drive (see the module's documentation).
pub trait System: fmt::Debug + Send + Sync {
    /// Its name in messages and reports.
    fn name(&self) -> String;

    /// The command that starts (or restarts, from its data directory) one node. Its standard
    /// output and error go to the node's log.
    fn command(&self, node: &NodeStart<'_>) -> Command;

    /// Connects to the running nodes, which listen for clients at `clients`.
    fn connect(&self, clients: &BTreeMap<NodeId, SocketAddr>) -> Arc<dyn Connection>;

    /// Whether its clients can append to a value (else they only put and get).
    fn appends(&self) -> bool;

    /// Whether each node can be told its own address for every peer, so that a proxy can sit
    /// on every directed link (a system whose members share one list of addresses cannot).
    fn takes_an_address_per_link(&self) -> bool;

    /// Why its data directory cannot be a lossy disk ([`crate::lossy_fs`]), if it cannot.
    fn cannot_use_lossy_disks(&self) -> Option<String>;

    /// How long a server has to stop after SIGTERM.
    fn stop_bound(&self) -> Duration;

    /// Whether a server that exited so after SIGTERM stopped as it should.
    fn stopped_cleanly(&self, status: ExitStatus) -> bool;

    /// Whether its servers carry out the cooperative faults (clock rates and jumps, a failing
    /// disk) that a client asks them for.
    fn cooperates(&self) -> bool;
}

/// The nodes the writing clients cannot reach now: the minority side of a partition.
pub type Unreachable = Arc<Mutex<BTreeSet<NodeId>>>;

/// A connection to a running cluster.
pub trait Connection: Send + Sync {
    /// A client for one thread. A writer (`unreachable` given) never reaches the nodes in it:
    /// a call to one waits its timeout and gets no reply, as on the far side of a partition.
    /// A reader reaches every node, and keeps asking the one that answered it last.
    fn client(&self, unreachable: Option<Unreachable>) -> Box<dyn KvClient>;

    /// Every node that believes it leads (a cut-off leader may, for a while), each asked with
    /// `timeout`.
    fn leaders(&self, timeout: Duration) -> Vec<NodeId>;

    /// The cooperative faults, for a system that [`System::cooperates`].
    fn control(&self) -> Option<&TcpKvTransport>;

    /// Closes every connection it holds.
    fn close(&self);
}

/// One client of a cluster.
pub trait KvClient: Send {
    /// Runs `input` until `deadline`: what it returned, or `None` when its outcome is unknown
    /// (no answer in time, or a failure after the request may have been applied).
    fn execute(&mut self, input: &KvInput, deadline: Instant) -> Option<KvOutput>;
}
