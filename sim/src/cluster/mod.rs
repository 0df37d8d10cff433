//! [`Cluster`]: N nodes over the simulated network, disks and clock, with continuous invariants
//! and the checks the tests build on (one leader, agreement, commit by k nodes).

use crate::disk::{Disk, Flaw};
use crate::events::Events;
use crate::invariants::Invariants;
use crate::network::{NetConfig, Network};
use crate::runner::Sim;

mod checker_service;
mod checks;
mod faults;
mod node_logs;
mod snapshot_policy;

pub use faults::Restarted;
use node::kv::{KvServer, KvServerConfig};
use node::{
    Command, Config, Delivery, LogIndex, Node, NodeError, NodeId, NodeParams, Persister, Term,
};
pub use node_logs::NodeLogs;
use runspec::SimStorage;
use std::collections::BTreeMap;
use std::time::Duration;
use threadsim::clock::ClockJoinHandle;
use threadsim::clock::SkewedClock;
use threadsim::sync::{Arc, Mutex};
use threadsim::{channel, ClockRef, DetRng};

/// The shape of a simulated cluster.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// Number of nodes.
    pub nodes: usize,
    /// Node configuration (its seed is replaced per node and incarnation).
    pub node: Config,
    /// Network delays, loss and timeout.
    pub net: NetConfig,
    /// Capacity of each node's apply channel.
    pub apply_capacity: usize,
    /// Runs a key-value server on every node (instead of a service that only checks what is
    /// applied).
    pub kv: Option<KvServerConfig>,
    /// Every node's service (the checking service, or the key-value server) hands its node a
    /// snapshot once its log takes more than this many bytes (`None`: never). The one place a
    /// simulated cluster says it: `kv`'s own field must stay `None`.
    pub snapshot_threshold: Option<usize>,
    /// A crash is a power loss: the crashed node's disk loses what it had not synced
    /// ([`crate::disk::Disk::lose_unsynced`]); otherwise a crash is a process's, and the disk
    /// keeps everything written.
    pub power_loss_on_crash: bool,
    /// After a crash, the node's disk fails its next read ([`crate::disk::Disk::fail_next_read`]):
    /// the restart after the crash must be refused, and the one after that reads the state.
    pub read_error_after_crash: bool,
    /// Where each node keeps its state: the two-copy [`Disk`], or the server's write-ahead log
    /// over a disk in memory ([`NodeLogs`]).
    pub storage: SimStorage,
    /// The configuration before the first entry (`None`: every node votes).
    pub membership: Option<node::Membership>,
    /// Configuration overlap is not checked (to see what it prevents; see
    /// [`runspec::RunSpec::overlap_unchecked`]).
    pub overlap_unchecked: bool,
}

/// The apply-channel capacities a run draws from when its configuration leaves it open.
pub const APPLY_CAPACITIES: [usize; 4] = [1, 4, 16, 64];

/// The random stream of the apply channel's capacity.
const APPLY_CAPACITY_STREAM: u64 = 11;

/// An apply channel's capacity drawn from `sim`'s seed among [`APPLY_CAPACITIES`], from a stream
/// of its own: with one of 1 the service falls behind now and then, and the node's applier
/// thread waits on the channel while the node goes on (snapshots arrive, handlers commit).
pub fn drawn_apply_capacity(sim: &Sim) -> usize {
    APPLY_CAPACITIES[sim.rng(APPLY_CAPACITY_STREAM).index(APPLY_CAPACITIES.len())]
}

impl ClusterConfig {
    /// `nodes` nodes with the default node and network settings.
    pub fn new(nodes: usize) -> ClusterConfig {
        ClusterConfig {
            nodes,
            node: Config::default(),
            net: NetConfig::default(),
            apply_capacity: 64,
            kv: None,
            snapshot_threshold: None,
            power_loss_on_crash: false,
            read_error_after_crash: false,
            storage: SimStorage::Copies,
            membership: None,
            overlap_unchecked: false,
        }
    }
}

/// A node's disk: with power losses, one that shares fsyncs as the server's log does, so that a
/// leader's own copy is synced while its followers are sent it and a cut can come in between.
fn new_disk(config: &ClusterConfig, clock: &ClockRef) -> Disk {
    let layout = disk_layout(config);
    let disk = match disk_flaw(config) {
        Flaw::None => Disk::with_layout(layout),
        flaw => Disk::with_layout(layout).with_flaw(flaw),
    };
    if config.power_loss_on_crash {
        disk.sharing_fsyncs(clock.clone(), SHARED_SYNC_TIME)
    } else {
        disk
    }
}

/// How long a sync of a disk that shares fsyncs takes: a slow disk's, about one network round
/// trip, so a leader's sync and its followers' acknowledgements come in either order.
pub const SHARED_SYNC_TIME: Duration = Duration::from_millis(5);

/// The broken node of `accept-torn-writes` runs on storage that writes in place.
fn disk_layout(config: &ClusterConfig) -> crate::disk::Layout {
    if config.node.mutations.has(node::Mutation::AcceptTornWrites) {
        crate::disk::Layout::InPlace
    } else {
        crate::disk::Layout::TwoCopies
    }
}

/// The persister's flaw of a storage variant (none for the correct build).
fn disk_flaw(config: &ClusterConfig) -> Flaw {
    let has = |mutation| config.node.mutations.has(mutation);
    if has(node::Mutation::TrustRecordWithoutChecksum) {
        Flaw::TrustsAgreeingCopies
    } else if has(node::Mutation::ReadFirstGoodCopy) {
        Flaw::FirstGoodCopy
    } else if has(node::Mutation::DirNotSynced) {
        Flaw::DirectoryNeverSynced
    } else {
        Flaw::None
    }
}

/// What consumes a node's committed entries.
enum Service {
    /// A thread that hands them to the invariants.
    Checker(ClockJoinHandle<()>),
    /// A key-value server (which hands them to the invariants too).
    Kv(Arc<KvServer>),
}

struct Running {
    node: Arc<Node>,
    service: Service,
    /// Whether a fault paused this instance (a new instance starts running).
    paused: bool,
}

/// A simulated cluster. Dropping it crashes every node and joins every thread.
pub struct Cluster {
    clock: ClockRef,
    /// Each node's own clock over `clock` (its machine's: it outlives restarts), which the
    /// clock-skew faults speed up, slow down and move forward.
    node_clocks: Vec<Arc<SkewedClock>>,
    events: Events,
    config: ClusterConfig,
    network: Arc<Network>,
    disks: Vec<Arc<Disk>>,
    /// With [`SimStorage::Log`], the nodes' logs and their disks (the two-copy disks then
    /// stand unused).
    logs: Option<NodeLogs>,
    running: Mutex<BTreeMap<NodeId, Running>>,
    incarnations: Mutex<BTreeMap<NodeId, u64>>,
    invariants: Arc<Invariants>,
    node_seeds: DetRng,
    /// The harness's stream, behind a `std` mutex: drawing from it is not a thread switch, so a
    /// run that draws its faults and a run that follows them switch threads alike.
    rng: std::sync::Mutex<DetRng>,
    /// Where each torn save's draws come from: the k-th tear armed in the run takes stream k,
    /// so a run that follows a recorded schedule (and draws no faults) tears alike.
    tear_seeds: DetRng,
    /// How many tears have been armed (a `std` atomic: not a thread switch).
    tears_armed: std::sync::atomic::AtomicU64,
}

const NETWORK_STREAM: u64 = 1;
const NODE_STREAM: u64 = 2;
const HARNESS_STREAM: u64 = 3;
const TEAR_STREAM: u64 = 4;
const LOG_TEAR_STREAM: u64 = 5;

impl Cluster {
    /// Builds and starts every node.
    pub fn new(sim: &Sim, config: ClusterConfig) -> Cluster {
        assert!(config.nodes >= 1, "a cluster needs at least one node");
        assert!(
            config
                .kv
                .as_ref()
                .is_none_or(|kv| kv.snapshot_threshold.is_none()),
            "a simulated cluster's snapshot threshold is ClusterConfig::snapshot_threshold"
        );
        let clock = sim.clock();
        let events = Events::new(clock.clone(), sim.trace().clone());
        let network = Network::new(events.clone(), config.net.clone(), sim.rng(NETWORK_STREAM));
        assert!(
            config.storage == SimStorage::Copies || !config.read_error_after_crash,
            "latent read errors are the two-copy disk's"
        );
        let cluster = Cluster {
            disks: (0..config.nodes)
                .map(|_| Arc::new(new_disk(&config, &clock)))
                .collect(),
            logs: (config.storage == SimStorage::Log)
                .then(|| NodeLogs::new(config.nodes, sim.rng(LOG_TEAR_STREAM))),
            node_clocks: (0..config.nodes)
                .map(|_| SkewedClock::new(clock.clone()))
                .collect(),
            clock,
            network,
            running: Mutex::new(BTreeMap::new()),
            incarnations: Mutex::new(BTreeMap::new()),
            invariants: Arc::new(Invariants::with_events(events.clone())),
            events,
            node_seeds: sim.rng(NODE_STREAM),
            rng: std::sync::Mutex::new(sim.rng(HARNESS_STREAM)),
            tear_seeds: sim.rng(TEAR_STREAM),
            tears_armed: std::sync::atomic::AtomicU64::new(0),
            config,
        };
        let bootstrap = (cluster.config.membership.clone())
            .unwrap_or_else(|| node::Membership::of_voters(cluster.ids()));
        if !cluster.config.overlap_unchecked {
            cluster.invariants.set_bootstrap(bootstrap);
        }
        for id in cluster.ids() {
            cluster
                .start_node(id)
                .unwrap_or_else(|error| panic!("{id} cannot start: {error}"));
        }
        cluster
    }

    /// Where the nodes keep their state.
    pub fn storage(&self) -> SimStorage {
        self.config.storage
    }

    /// Every node id, in order.
    pub fn ids(&self) -> Vec<NodeId> {
        (0..self.config.nodes as u32).map(NodeId).collect()
    }

    /// Every node id but `except`, in order.
    pub fn others(&self, except: NodeId) -> Vec<NodeId> {
        self.ids().into_iter().filter(|&id| id != except).collect()
    }

    /// The cluster's clock: true time, which the harness, the network and the clients keep.
    pub fn clock(&self) -> &ClockRef {
        &self.clock
    }

    /// The configuration the cluster was built with.
    pub fn config(&self) -> &ClusterConfig {
        &self.config
    }

    /// `node`'s own clock (skewed by the clock faults).
    pub fn node_clock(&self, node: NodeId) -> &Arc<SkewedClock> {
        &self.node_clocks[node.0 as usize]
    }

    /// The simulated network (partitions, loss, statistics).
    pub fn network(&self) -> &Network {
        &self.network
    }

    /// Puts a key-value client on the network as `endpoint` (an id no node uses).
    pub fn add_client(&self, endpoint: NodeId) -> crate::network::ClientPort {
        assert!(
            endpoint.0 as usize >= self.config.nodes,
            "{endpoint} is a node's id"
        );
        self.network.add_client(endpoint)
    }

    /// The disk of `node`.
    pub fn disk(&self, node: NodeId) -> &Arc<Disk> {
        &self.disks[node.0 as usize]
    }

    /// The continuous checker.
    pub fn invariants(&self) -> &Invariants {
        &self.invariants
    }

    /// A random number from the harness's own stream (fault choices).
    pub fn random(&self, below: usize) -> usize {
        self.harness_rng().index(below)
    }

    /// A random duration in `low..=high` (whole milliseconds) from the harness's stream.
    pub fn random_duration(&self, low: Duration, high: Duration) -> Duration {
        self.harness_rng().duration_ms(low, high)
    }

    /// The draws of the next disk fault: a torn save, a misdirected one, a corrupted copy (see
    /// `tear_seeds`).
    pub(crate) fn next_tear_rng(&self) -> DetRng {
        let armed = self
            .tears_armed
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.tear_seeds.split(armed)
    }

    fn harness_rng(&self) -> std::sync::MutexGuard<'_, DetRng> {
        self.rng
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn start_node(&self, id: NodeId) -> Result<(), NodeError> {
        let incarnation = {
            let mut incarnations = self.incarnations.lock();
            let count = incarnations.entry(id).or_insert(0);
            *count += 1;
            *count
        };
        // Before the instance exists: it reports its restored log and term as it starts.
        self.invariants.on_restart(id);
        let port = Arc::new(self.network.reserve(id));
        let node_clock: ClockRef = self.node_clocks[id.0 as usize].clone();
        let (apply_sender, apply_receiver) =
            channel::<Delivery>(&self.clock, self.config.apply_capacity, "apply");
        let seed = self
            .node_seeds
            .split((u64::from(id.0) << 32) | incarnation)
            .next_u64();
        let persister: Arc<dyn Persister> = match &self.logs {
            Some(logs) => logs.open(id, &self.config.node.mutations)?,
            None => self.disks[id.0 as usize].clone(),
        };
        let node = Arc::new(Node::new(NodeParams {
            id,
            peers: self.ids().into_iter().filter(|&peer| peer != id).collect(),
            membership: self.config.membership.clone(),
            transport: port.clone(),
            persister,
            clock: node_clock.clone(),
            apply_sender,
            config: Config {
                seed,
                ..self.config.node.clone()
            },
            observer: self.invariants.clone(),
            workers: node::Workers::ALL,
        })?);
        self.network.activate(&port, node.rpc_handler());
        let service = match &self.config.kv {
            Some(kv) => Service::Kv(Arc::new(KvServer::start(
                node.clone(),
                apply_receiver,
                node_clock,
                KvServerConfig {
                    snapshot_threshold: self.config.snapshot_threshold,
                    ..kv.clone()
                },
                self.invariants.clone(),
            ))),
            None => Service::Checker(checker_service::start(
                &self.clock,
                node.clone(),
                apply_receiver,
                self.invariants.clone(),
                self.config.snapshot_threshold,
            )),
        };
        self.running.lock().insert(
            id,
            Running {
                node,
                service,
                paused: false,
            },
        );
        Ok(())
    }

    /// The key-value server of `node`'s running instance (clusters built with `kv`).
    pub fn kv_server(&self, node: NodeId) -> Option<Arc<KvServer>> {
        match &self.running.lock().get(&node)?.service {
            Service::Kv(server) => Some(server.clone()),
            Service::Checker(_) => None,
        }
    }

    /// Whether `node`'s running instance has stopped (a write crashed under it); it stays in
    /// the cluster, stopped, until it is crashed or restarted.
    pub fn is_stopped(&self, node: NodeId) -> bool {
        self.running
            .lock()
            .get(&node)
            .is_some_and(|running| running.node.is_stopped())
    }

    /// Whether `node` has a running instance.
    pub fn is_running(&self, node: NodeId) -> bool {
        self.running.lock().contains_key(&node)
    }

    /// Whether `node` is running and on the network.
    pub fn is_connected(&self, node: NodeId) -> bool {
        self.is_running(node) && self.network.is_up(node)
    }

    /// Offers `command` to `node`; `Some((index, term))` if it accepted it as leader. The trace
    /// says what became of the offer (at debug level).
    pub fn start(&self, node: NodeId, command: Command) -> Option<(LogIndex, Term)> {
        let offered = format!("offer {command} to {node}");
        let accepted = {
            let running = self.running.lock();
            let Some(instance) = running.get(&node) else {
                self.events.debug(format!("{offered}: it is down"));
                return None;
            };
            instance.node.start(command).ok()
        };
        match accepted {
            Some((index, term)) => self.events.debug(format!(
                "{offered}: accepted as #{} in t{}",
                index.0, term.0
            )),
            None => self
                .events
                .debug(format!("{offered}: refused (not the leader)")),
        }
        accepted
    }

    /// Asks the running node that leads in the highest term to make `change`; the index and
    /// term of its configuration entry if it took it (none when no node leads, or the leader
    /// refused: a change in flight, no entry of its term committed yet, or one that does not
    /// apply to its configuration).
    pub fn change_membership(&self, change: node::MembershipChange) -> Option<(LogIndex, Term)> {
        let Some(leader) = self.leader_in_highest_term() else {
            self.events.debug(format!("{change}: no leader"));
            return None;
        };
        self.change_membership_at(leader, change).ok()
    }

    /// Asks the running node that leads in the highest term to hand its leadership to
    /// `target`; whether it started (none when no node leads, or the leader refused: a
    /// transfer in progress, or a target that does not vote).
    pub fn transfer_leadership(&self, target: NodeId) -> bool {
        match self.leader_in_highest_term() {
            Some(leader) => self.transfer_leadership_at(leader, target).is_ok(),
            None => {
                self.events
                    .debug(format!("transfer to {target}: no leader"));
                false
            }
        }
    }

    /// Asks `node` to hand its leadership to `target` as leader: whether it started, or why not
    /// (a node that is down does not lead).
    pub fn transfer_leadership_at(
        &self,
        node: NodeId,
        target: NodeId,
    ) -> Result<(), node::TransferRefused> {
        let outcome = self.as_leader(node, |running| running.transfer_leadership(target));
        match &outcome {
            Ok(()) => self
                .events
                .info(format!("{node} hands its leadership to {target}")),
            Err(refused) => self.events.debug(format!(
                "{node} refuses to hand over to {target}: {refused}"
            )),
        }
        outcome
    }

    /// What `ask` gets of `node`, if it runs; a node that is down does not lead.
    fn as_leader<T, E: From<node::NotLeader>>(
        &self,
        node: NodeId,
        ask: impl FnOnce(&Node) -> Result<T, E>,
    ) -> Result<T, E> {
        let running = self.running.lock();
        match running.get(&node) {
            Some(instance) => ask(&instance.node),
            None => Err(E::from(node::NotLeader { leader_hint: None })),
        }
    }

    /// The running node that leads in the highest term, if any.
    fn leader_in_highest_term(&self) -> Option<NodeId> {
        let running = self.running.lock();
        let leaders = running.iter().filter_map(|(&id, instance)| {
            let status = instance.node.status();
            (status.role == node::Role::Leader).then_some((status.term, id))
        });
        leaders.max().map(|(_, id)| id)
    }

    /// Asks `node` to make `change` as leader: the index and term of its configuration entry,
    /// or why not (a node that is down does not lead).
    pub fn change_membership_at(
        &self,
        node: NodeId,
        change: node::MembershipChange,
    ) -> Result<(LogIndex, Term), node::ChangeRefused> {
        let outcome = self.as_leader(node, |running| running.change_membership(change));
        match &outcome {
            Ok((index, term)) => self.events.info(format!(
                "{node} appends the change {change} as #{} in t{}",
                index.0, term.0
            )),
            Err(refused) => self
                .events
                .debug(format!("{node} refuses {change}: {refused}")),
        }
        outcome
    }

    /// The configuration `node` follows (None when it is down).
    pub fn membership(&self, node: NodeId) -> Option<node::Membership> {
        let running = self.running.lock();
        running
            .get(&node)
            .map(|instance| instance.node.membership())
    }

    /// `node`'s term and whether it believes it leads (None when it is down).
    pub fn state(&self, node: NodeId) -> Option<(Term, bool)> {
        self.running
            .lock()
            .get(&node)
            .map(|running| running.node.state())
    }

    /// `node`'s counters (None when it is down).
    pub fn status(&self, node: NodeId) -> Option<node::NodeStatus> {
        self.running
            .lock()
            .get(&node)
            .map(|running| running.node.status())
    }

    /// The running, connected node that believes it leads in the highest term, if any.
    pub fn current_leader(&self) -> Option<NodeId> {
        self.ids()
            .into_iter()
            .filter(|&id| self.is_connected(id))
            .filter_map(|id| {
                self.state(id)
                    .filter(|(_, leads)| *leads)
                    .map(|(term, _)| (term, id))
            })
            .max()
            .map(|(_, id)| id)
    }

    /// Waits `duration` of simulated time, then fails the test if an invariant broke.
    pub fn sleep(&self, duration: Duration) {
        self.clock.sleep(duration);
        self.check_invariants();
    }

    /// Fails the test if an invariant has broken.
    pub fn check_invariants(&self) {
        if let Some(violation) = self.invariants.first_violation() {
            panic!("invariant violated: {violation}");
        }
    }

    /// Stops every node (joining every thread) and checks the invariants one last time.
    pub fn shutdown(&self) {
        self.stop_all();
        self.check_invariants();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop_all();
    }
}
