//! [`Server`]: one key-value node of a real cluster in this process: the Raft node with its
//! state in a [`FilePersister`], its RPCs to the other nodes over TCP, and the key-value
//! service answering clients on a TCP address of its own.

use crate::real_time::{now, sleep_until};
use crate::tcp::{Admission, ClientProtocol, ClusterKey, Listener, RaftRpc, Standing};
use crate::transport::TcpTransport;
use crate::wire::kv::{ClientReply, ClientRequest, StatusReport};
use node::kv::{KvObserver, KvServer, KvServerConfig, ReadMode};
use node::{
    Applied, Node, NodeError, NodeEvent, NodeId, NodeParams, Observer, Role, RpcHandler, Term,
};
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
#[cfg(feature = "mutations")]
use storage::FilePersister;
use storage::{OpenError, Storage, StorageKind, WalError};
use threadsim::clock::{RatePpm, SkewedClock};
use threadsim::sync::{Arc, Mutex};
use threadsim::{channel, ClockRef, SystemClock};

/// Entries the node may hand the service before it waits for the service to catch up.
const APPLY_CAPACITY: usize = 64;

/// What one server needs to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// This node.
    pub id: NodeId,
    /// Every member's address for node-to-node RPCs, this node's included (it listens there).
    pub members: BTreeMap<NodeId, SocketAddr>,
    /// Where this node listens for clients.
    pub client_address: SocketAddr,
    /// The members that vote when the cluster starts (`None`: every member); the others start
    /// outside the configuration, for an administrator to add. The same on every node.
    pub voters: Option<BTreeSet<NodeId>>,
    /// Where its state lives.
    pub data_dir: PathBuf,
    /// The key every member of the cluster holds: only a holder may speak on the node port,
    /// and this node's calls prove it holds it ([`crate::tcp::auth`]). `None` only on loopback
    /// addresses ([`StartError::Unauthenticated`]).
    pub cluster_key: Option<ClusterKey>,
    /// The administrators' key: a client connection that proves it holds it may send the
    /// administrator's requests (the configuration, a change of it, a transfer) and, with
    /// `allow_faults`, a nemesis's faults; any other connection is refused them. `None`: no one
    /// may.
    pub admin_key: Option<ClusterKey>,
    /// How it serves gets.
    pub read_mode: ReadMode,
    /// Whether an administrator may inject faults: change this node's clock, make its disk fail (a
    /// nemesis on a test cluster).
    pub allow_faults: bool,
    /// Check-quorum's window, if not the node's default ([`node::Config::leader_quorum_timeout`]).
    pub check_quorum_after: Option<std::time::Duration>,
    /// Snapshot once the log takes more than this many bytes (`None`: never; the log then
    /// grows with the run).
    pub snapshot_threshold: Option<usize>,
    /// How it stores its state.
    pub storage: StorageKind,
    /// A deliberately broken way of writing its state (tests only).
    #[cfg(feature = "mutations")]
    pub broken_write: Option<storage::BrokenWrite>,
    /// Deliberately broken behaviours of the node (tests only).
    #[cfg(feature = "mutations")]
    pub mutations: node::MutationSet,
}

/// The node stopped itself: a write to its storage failed, and it must not go on as if the
/// write had happened.
#[derive(Debug, thiserror::Error)]
#[error("the node stopped itself: a write to its storage failed")]
pub struct NodeFailed;

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Node addresses off this machine, with no cluster key: anyone who can reach the node
    /// port could vote, append and take the cluster over.
    #[error("{address} is not a loopback address and no cluster key was given: any process that can reach it could take the cluster over (--cluster-key FILE; interleave-server --new-cluster-key FILE writes one)")]
    Unauthenticated {
        /// The first such address.
        address: SocketAddr,
    },
    /// The configuration names no address for this node.
    #[error("{id} is not among the members ({members})")]
    NotAMember {
        /// This node.
        id: NodeId,
        /// The members named.
        members: String,
    },
    /// The data directory cannot be used.
    #[error(transparent)]
    DataDir(#[from] OpenError),
    /// The log in the data directory cannot be read back (damaged where it was acknowledged).
    #[error(transparent)]
    Storage(#[from] WalError),
    /// The node refused to start (a damaged state file, say).
    #[error(transparent)]
    Node(#[from] NodeError),
    /// An address cannot be listened on (in use, not this machine's).
    #[error("cannot listen for {what} on {address}: {source}")]
    Listen {
        /// Which listener.
        what: &'static str,
        /// Its address.
        address: SocketAddr,
        /// Why.
        source: io::Error,
    },
}

/// How long a server keeps trying an address that is in use before it gives up: the socket of
/// a process that just stopped, or a copy a forking process holds for a moment, frees it soon.
const ADDRESS_IN_USE_PATIENCE: Duration = Duration::from_secs(2);

/// `bind()`, tried again while its address is in use, for at most [`ADDRESS_IN_USE_PATIENCE`].
fn bind_retrying(bind: &dyn Fn() -> io::Result<Listener>) -> io::Result<Listener> {
    let give_up = now() + ADDRESS_IN_USE_PATIENCE;
    loop {
        match bind() {
            Err(error) if error.kind() == io::ErrorKind::AddrInUse && now() < give_up => {
                sleep_until(now() + Duration::from_millis(50));
            }
            bound => return bound,
        }
    }
}

/// What a client that has not proved it holds the administrators' key hears when it sends an
/// administrator's request.
pub const NOT_AN_ADMINISTRATOR: &str = "an administrator's request: only a connection holding the administrators' key may send it (interleave admin --admin-key FILE, the file the server was given with --admin-key)";

/// The longest jump forward a client may ask of a node's clock.
const MAX_CLOCK_JUMP: Duration = Duration::from_secs(3600);

/// What answers clients: the key-value service, and the node's clock for a nemesis.
struct Answering {
    kv: Arc<KvServer>,
    clock: Arc<SkewedClock>,
    storage: Storage,
    faults_allowed: bool,
}

impl Answering {
    /// The answer to a client of `standing` (an administrator holds the administrators' key).
    fn answer(&self, standing: Standing, request: ClientRequest) -> Option<ClientReply> {
        let node = self.kv.node();
        let administrator = standing == Standing::KeyHolder;
        match request {
            ClientRequest::Kv(request) => self.kv.handle(request).map(ClientReply::Kv),
            ClientRequest::Status if node.is_stopped() => None,
            ClientRequest::Status => Some(ClientReply::Status(self.status())),
            ClientRequest::Admin(_) | ClientRequest::SetClock(_) | ClientRequest::FailDisk
                if standing != Standing::KeyHolder =>
            {
                tracing::warn!(node = %node.id(), "an administrator's request from a client without the administrators' key refused");
                Some(ClientReply::Refused(NOT_AN_ADMINISTRATOR.into()))
            }
            ClientRequest::Admin(admin) => {
                assert!(administrator, "an administrator's request from a stranger");
                crate::admin::answer(&self.kv, admin)
            }
            ClientRequest::SetClock(_) | ClientRequest::FailDisk if !self.faults_allowed => {
                Some(ClientReply::Refused(
                    "fault injection is off: start the server with --allow-faults".into(),
                ))
            }
            ClientRequest::FailDisk => {
                assert!(administrator && self.faults_allowed, "a fault not allowed");
                self.storage.fail_writes();
                tracing::warn!(node = %node.id(), "disk made to fail by a client");
                Some(ClientReply::Status(self.status()))
            }
            ClientRequest::SetClock(change) if change.jump > MAX_CLOCK_JUMP => {
                Some(ClientReply::Refused(format!(
                    "a jump of {:?} is over the limit of {MAX_CLOCK_JUMP:?}",
                    change.jump
                )))
            }
            ClientRequest::SetClock(change) => {
                assert!(administrator && self.faults_allowed, "a fault not allowed");
                assert!(change.jump <= MAX_CLOCK_JUMP, "a jump over the limit");
                self.clock.set_rate(RatePpm(change.rate_ppm));
                self.clock.jump(change.jump);
                tracing::warn!(
                    node = %node.id(),
                    rate = %self.clock.rate(),
                    jump = ?change.jump,
                    "clock changed by a client"
                );
                Some(ClientReply::Status(self.status()))
            }
        }
    }

    fn status(&self) -> StatusReport {
        let status = self.kv.node().status();
        StatusReport {
            term: status.term,
            leader: status.role == Role::Leader,
            commit_index: status.commit_index,
            last_applied: status.last_applied,
            last_log_index: status.last_log_index,
        }
    }
}

/// This node's address for RPCs, once the configuration is one a server may start with: the
/// node among the members, and a cluster key unless every member is on loopback.
fn check_members(config: &ServerConfig) -> Result<SocketAddr, StartError> {
    let Some(&own_address) = config.members.get(&config.id) else {
        return Err(StartError::NotAMember {
            id: config.id,
            members: config
                .members
                .keys()
                .map(NodeId::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    if config.cluster_key.is_none() {
        if let Some(&address) = config
            .members
            .values()
            .find(|address| !address.ip().is_loopback())
        {
            return Err(StartError::Unauthenticated { address });
        }
    }
    Ok(own_address)
}

/// Listens for the other nodes' RPCs, which go to the handler in `slot` once there is one.
fn bind_rpc(
    config: &ServerConfig,
    address: SocketAddr,
    slot: &Arc<Mutex<Option<Arc<dyn RpcHandler>>>>,
) -> Result<Listener, StartError> {
    let bind = || {
        let slot = slot.clone();
        Listener::bind::<RaftRpc>(
            address,
            Arc::new(move |_standing, request| {
                let handler = slot.lock().clone()?;
                handler.handle(request)
            }),
            config.cluster_key.clone().into(),
        )
    };
    bind_retrying(&bind).map_err(|source| StartError::Listen {
        what: "nodes",
        address,
        source,
    })
}

/// Listens for clients, whose requests go to the service in `slot` once there is one.
fn bind_clients(
    config: &ServerConfig,
    slot: &Arc<Mutex<Option<Arc<Answering>>>>,
) -> Result<Listener, StartError> {
    let address = config.client_address;
    let bind = || {
        let slot = slot.clone();
        Listener::bind::<ClientProtocol>(
            address,
            Arc::new(move |standing, request| {
                let answering = slot.lock().clone()?;
                answering.answer(standing, request)
            }),
            config
                .admin_key
                .clone()
                .map_or(Admission::Anyone, Admission::AnyoneAndKeyHolders),
        )
    };
    bind_retrying(&bind).map_err(|source| StartError::Listen {
        what: "clients",
        address,
        source,
    })
}

/// The data directory's storage, of the kind configured (or a broken way of writing, in a
/// build with the broken variants).
fn open_storage(config: &ServerConfig) -> Result<Storage, StartError> {
    #[cfg(feature = "mutations")]
    if let Some(broken) = config.broken_write {
        // The broken writes are ways of writing the whole-state file.
        let persister = FilePersister::open_broken(&config.data_dir, broken)?;
        return Ok(Storage::StateFile(Arc::new(persister)));
    }
    let storage = Storage::open(config.storage, &config.data_dir)?;
    #[cfg(feature = "mutations")]
    if let Storage::Wal(wal) = &storage {
        wal.break_as(&config.mutations);
    }
    Ok(storage)
}

/// What the configuration changes of the node's defaults: the starting voters, check-quorum's
/// window, the broken variants (in a build with them).
fn configure_node(config: &ServerConfig, params: &mut NodeParams) {
    params.observer = Arc::new(Logged);
    params.membership = config
        .voters
        .as_ref()
        .map(|voters| node::Membership::of_voters(voters.iter().copied()));
    if let Some(window) = config.check_quorum_after {
        params.config.leader_quorum_timeout = window;
    }
    #[cfg(feature = "mutations")]
    {
        params.config.mutations = config.mutations.clone();
    }
}

/// Logs what a node goes through that an operator wants to see.
struct Logged;

impl Observer for Logged {
    fn on_event(&self, node: NodeId, event: &NodeEvent) {
        match event {
            NodeEvent::RoleChanged { term, role } => {
                tracing::info!(%node, term = term.0, ?role, "role changed");
            }
            NodeEvent::SnapshotInstalled {
                index, kept_suffix, ..
            } => {
                tracing::info!(%node, index = index.0, kept_suffix, "snapshot installed from the leader");
            }
            NodeEvent::LogCompacted { index, .. } => {
                tracing::debug!(%node, index = index.0, "log compacted into a snapshot");
            }
            NodeEvent::InvariantViolated { description } => {
                tracing::error!(%node, %description, "local invariant violated");
            }
            _ => {}
        }
    }
}

/// A key-value service that reports nothing (a deployment's checks are its clients').
struct Unobserved;

impl KvObserver for Unobserved {
    fn on_applied(&self, _node: NodeId, _applied: &Applied) {}
    fn on_local_read(&self, _node: NodeId, _term: Term, _mode: ReadMode) {}
}

/// A running server (see the module's documentation). [`Server::stop`] or dropping it stops
/// it and joins every thread it started.
pub struct Server {
    node: Arc<Node>,
    storage: Storage,
    kv: Arc<KvServer>,
    transport: Arc<TcpTransport>,
    listeners: Vec<Listener>,
}

impl Server {
    /// Opens the data directory, listens on both addresses, restores the node from its state
    /// and starts it.
    pub fn start(config: &ServerConfig) -> Result<Server, StartError> {
        let own_address = check_members(config)?;
        // Both listeners exist before the data directory is touched and before the node, so a
        // bad address fails first and leaves nothing behind; until the node is up they answer
        // nothing, as a node still starting would.
        let rpc_handler: Arc<Mutex<Option<Arc<dyn RpcHandler>>>> = Arc::default();
        let kv_handler: Arc<Mutex<Option<Arc<Answering>>>> = Arc::default();
        let rpc_listener = bind_rpc(config, own_address, &rpc_handler)?;
        let client_listener = bind_clients(config, &kv_handler)?;
        let storage = open_storage(config)?;
        // The node's clock runs true unless a nemesis, allowed to, changes it.
        let skewed = SkewedClock::new(Arc::new(SystemClock::new()));
        let clock: ClockRef = skewed.clone();
        let peers: BTreeMap<NodeId, SocketAddr> = config
            .members
            .iter()
            .filter(|(&id, _)| id != config.id)
            .map(|(&id, &address)| (id, address))
            .collect();
        let transport = Arc::new(TcpTransport::new(&peers, config.cluster_key.clone()));
        let (apply_sender, applied) = channel(&clock, APPLY_CAPACITY, "apply");
        let members: Vec<NodeId> = config.members.keys().copied().collect();
        let mut params = NodeParams::with_defaults(
            config.id,
            &members,
            transport.clone(),
            storage.persister(),
            clock.clone(),
            apply_sender,
        );
        configure_node(config, &mut params);
        let node = Arc::new(Node::new(params)?);
        assert_eq!(
            node.id(),
            config.id,
            "the node started is the one configured"
        );
        let kv = Arc::new(KvServer::start(
            node.clone(),
            applied,
            clock,
            KvServerConfig {
                read_mode: config.read_mode,
                snapshot_threshold: config.snapshot_threshold,
                ..KvServerConfig::default()
            },
            Arc::new(Unobserved),
        ));
        *rpc_handler.lock() = Some(node.rpc_handler());
        *kv_handler.lock() = Some(Arc::new(Answering {
            kv: kv.clone(),
            clock: skewed,
            storage: storage.clone(),
            faults_allowed: config.allow_faults,
        }));
        Ok(Server {
            node,
            storage,
            kv,
            transport,
            listeners: vec![client_listener, rpc_listener],
        })
    }

    /// The node.
    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }

    /// Where the node's state is stored.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Serves until SIGTERM or SIGINT (after [`crate::stop_on_term_or_interrupt`]), or until
    /// the node stops itself because its storage failed; then stops. Returns whether the node
    /// failed.
    pub fn serve_until_stopped(mut self) -> Result<(), NodeFailed> {
        while !crate::stop_asked() && !self.node.is_stopped() {
            sleep_until(now() + Duration::from_millis(20));
        }
        let failed = self.node.is_stopped() && !crate::stop_asked();
        self.stop();
        if failed {
            Err(NodeFailed)
        } else {
            Ok(())
        }
    }

    /// Stops answering, stops the node and the service, closes every connection and joins
    /// every thread.
    pub fn stop(&mut self) {
        for listener in &mut self.listeners {
            listener.close();
        }
        self.kv.kill();
        self.node.kill();
        self.transport.close();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}
