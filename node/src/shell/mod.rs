//! [`Node`]: the Raft core wrapped in threads, one lock, signals and the seams.
//!
//! Threads per node: a ticker (election timeout), an applier (hands committed entries to the
//! service through the apply channel), and per peer a replicator (vote requests, AppendEntries
//! with entries) and a heartbeater, each with one call in flight. Incoming RPCs run on the
//! caller's thread through [`RpcHandler`]; an AppendEntries handler that advances a follower's
//! commit index delivers the new entries itself when that cannot block, and leaves the rest to
//! the applier. All protocol state sits behind one mutex; no thread holds it while it calls the
//! transport or blocks on the apply channel.
//!
//! The shell decides nothing about the protocol: the core ([`crate::core::RaftCore`]) is told the
//! time and returns effects; the shell carries them out (`effects.rs`), writes the state
//! (`persistence.rs`), hands committed entries over (`delivery.rs`), and checks its own
//! invariants independently of the core (`invariants.rs`).

mod applier;
mod delivery;
mod effects;
mod heartbeater;
mod invariants;
mod own_syncer;
mod persistence;
mod read_index;
mod replicator;
mod rpc_handler;
mod state;
#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
mod ticker;

use crate::broken;
use crate::config::{Config, ConfigError};
use crate::core::{
    ChangeRefused, Membership, MembershipChange, ProposeError, RaftCore, ReadIndexError,
    TransferRefused,
};
use crate::fault_points::{self, FaultPoint};
use crate::mutation::Mutation;
use crate::observer::{Observer, Role};
use crate::persist::{PersistentState, Persister, StorageError};
use crate::transport::{RpcHandler, Transport};
use crate::{Command, LogIndex, NodeId, Term};
pub(crate) use state::{Locked, Shell};
use threadsim::channel::Sender;
use threadsim::clock::{spawn, ClockJoinHandle, ClockRef};
use threadsim::sync::{Arc, Mutex};

/// A committed entry handed to the service, in index order with no gaps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The entry's index.
    pub index: LogIndex,
    /// The term in which the entry was created.
    pub term: Term,
    /// The command.
    pub command: Command,
}

impl Applied {
    /// Whether it carries a configuration, the node's own entry, which the service only counts
    /// as applied ([`crate::core::Membership`]).
    pub fn is_membership(&self) -> bool {
        crate::membership::is_membership(&self.command)
    }
}

/// What a node hands its service through the apply channel, in log order with no gaps:
/// committed entries, and a snapshot in place of the entries it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// A committed entry.
    Entry(Applied),
    /// The service's state after every entry up to `index` (from a leader, or the node's own
    /// restored at start): the service replaces its state with it, and the entries after
    /// `index` follow. Never one the service is already past.
    Snapshot {
        /// The last index the snapshot covers.
        index: LogIndex,
        /// The term of the entry there.
        term: Term,
        /// The service's bytes.
        data: Vec<u8>,
    },
}

impl Delivery {
    /// The last index it brings the service to.
    pub fn index(&self) -> LogIndex {
        match self {
            Delivery::Entry(applied) => applied.index,
            Delivery::Snapshot { index, .. } => *index,
        }
    }
}

/// Everything a node is built from.
pub struct NodeParams {
    /// This node.
    pub id: NodeId,
    /// Every other node of the cluster: every node it may ever talk to.
    pub peers: Vec<NodeId>,
    /// The configuration before the first entry, the same on every node (`None`: this node and
    /// every peer vote).
    pub membership: Option<Membership>,
    /// How it reaches its peers.
    pub transport: Arc<dyn Transport>,
    /// Where its term, vote and log live; read at start to restore them.
    pub persister: Arc<dyn Persister>,
    /// Its clock.
    pub clock: ClockRef,
    /// Where committed entries go.
    pub apply_sender: Sender<Delivery>,
    /// Timing, limits, seed and mutations.
    pub config: Config,
    /// Who watches its state changes.
    pub observer: Arc<dyn Observer>,
    /// Which workers get threads of their own.
    pub workers: Workers,
}

impl NodeParams {
    /// Node `id` of the cluster `members` (which includes `id`) with the default configuration
    /// seeded by its id, no observer and every worker on its own thread.
    pub fn with_defaults(
        id: NodeId,
        members: &[NodeId],
        transport: Arc<dyn Transport>,
        persister: Arc<dyn Persister>,
        clock: ClockRef,
        apply_sender: Sender<Delivery>,
    ) -> NodeParams {
        assert!(members.contains(&id), "{id} is not among the members");
        NodeParams {
            id,
            peers: members.iter().copied().filter(|&p| p != id).collect(),
            membership: None,
            transport,
            persister,
            clock,
            apply_sender,
            config: Config {
                seed: u64::from(id.0),
                ..Config::default()
            },
            observer: Arc::new(crate::NoObserver),
            workers: Workers::ALL,
        }
    }
}

/// Why a node could not be created.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The configuration cannot work.
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    /// The persisted state cannot be trusted; the node refuses to start.
    #[error("refusing to start: {0}")]
    Storage(#[from] StorageError),
}

/// What one pass of a worker (ticker, applier, replicator, heartbeater) ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The node stopped (or its service is gone): the worker exits.
    Exit,
    /// It did something; run another pass at once.
    Again,
    /// Nothing to do until notified or until the deadline, if any.
    WaitUntil(Option<threadsim::Instant>),
}

/// Which workers [`Node::new`] runs on threads of their own. A worker that is not spawned can be
/// driven one pass at a time from the caller's thread ([`Node::tick_once`],
/// [`Node::apply_once`], [`Node::replicate_once`], [`Node::heartbeat_once`]), which is how loom
/// models and the shell's own tests exercise exactly the code the threads run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workers {
    /// The ticker thread (election timeout).
    pub ticker: bool,
    /// The applier thread.
    pub applier: bool,
    /// Two threads per peer: the replicator (vote requests, AppendEntries with entries) and the
    /// heartbeater; and, with a persister that shares fsyncs, the syncer of the leader's own
    /// writes.
    pub peers: bool,
}

impl Workers {
    /// Every worker on its own thread: the normal node.
    pub const ALL: Workers = Workers {
        ticker: true,
        applier: true,
        peers: true,
    };
    /// No threads: every pass is driven by the caller.
    pub const NONE: Workers = Workers {
        ticker: false,
        applier: false,
        peers: false,
    };
}

impl Default for Workers {
    fn default() -> Self {
        Workers::ALL
    }
}

/// Runs a worker: pass after pass, waiting on `wake` (until the pass's deadline, if any) when a
/// pass found nothing to do, until a pass says the node is dead.
fn drive(wake: &threadsim::clock::Signal, mut pass: impl FnMut() -> Pass) {
    loop {
        match pass() {
            Pass::Exit => return,
            Pass::Again => {}
            Pass::WaitUntil(deadline) => {
                let now = wake.clock().now();
                if !fault_points::fires(FaultPoint::SpuriousWakeup, now) {
                    wake.wait_until(deadline);
                }
            }
        }
    }
}

/// A snapshot of a node's volatile and persistent counters, for tests and tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeStatus {
    /// Current term.
    pub term: Term,
    /// Current role.
    pub role: Role,
    /// Highest committed index it knows.
    pub commit_index: LogIndex,
    /// Highest index handed to the applier.
    pub last_applied: LogIndex,
    /// Last index of its log.
    pub last_log_index: LogIndex,
    /// The last index its log's snapshot covers (0: nothing compacted).
    pub snapshot_index: LogIndex,
    /// What its replicators have sent (as leader, in any term).
    pub sent: ReplicationStats,
    /// The configuration it follows.
    pub membership: Membership,
}

/// The AppendEntries with entries that a node's replicators sent since it started (heartbeats
/// excluded): how well the leader batches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplicationStats {
    /// Requests that carried entries.
    pub appends: u64,
    /// Entries they carried in all.
    pub entries: u64,
}

impl ReplicationStats {
    /// What was sent between `earlier` and these counts.
    pub fn since(&self, earlier: &ReplicationStats) -> ReplicationStats {
        ReplicationStats {
            appends: self.appends - earlier.appends,
            entries: self.entries - earlier.entries,
        }
    }

    /// These counts plus `other`'s.
    pub fn plus(&self, other: &ReplicationStats) -> ReplicationStats {
        ReplicationStats {
            appends: self.appends + other.appends,
            entries: self.entries + other.entries,
        }
    }

    /// Entries per request (0 if none was sent).
    pub fn entries_per_append(&self) -> f64 {
        if self.appends == 0 {
            0.0
        } else {
            self.entries as f64 / self.appends as f64
        }
    }
}

/// The state `params`' persister holds (the default if it holds none), or why the node must not
/// start.
fn restored_state(params: &NodeParams) -> Result<PersistentState, NodeError> {
    let loaded = match params.persister.load() {
        Err(error @ StorageError::Io(_))
            if params.config.mutations.has(Mutation::ReadErrorAsEmpty) =>
        {
            return Ok(broken::read_error_as_empty::state_after(&error));
        }
        loaded => loaded?,
    };
    Ok(match loaded {
        Some(bytes) => match PersistentState::decode(&bytes) {
            Ok(state) => state,
            Err(_) if params.config.mutations.has(Mutation::AcceptTornWrites) => {
                broken::accept_torn_writes::salvage(&bytes)
            }
            Err(error) => return Err(error.into()),
        },
        None => PersistentState::default(),
    })
}

/// A running Raft node. Dropping it kills it.
pub struct Node {
    shell: Arc<Shell>,
    threads: Mutex<Vec<ClockJoinHandle<()>>>,
}

impl Node {
    /// Restores the node from its persister and starts its threads.
    pub fn new(params: NodeParams) -> Result<Node, NodeError> {
        params.config.validate()?;
        let state = restored_state(&params)?;
        if !state.snapshot.is_empty() {
            if let Err(bad) = Membership::unwrap_snapshot(&state.snapshot) {
                return Err(NodeError::Storage(StorageError::Corrupt(format!(
                    "the stored snapshot does not start with its configuration ({bad}): written \
                     by a version from before membership changes, or damaged"
                ))));
            }
        }
        let bootstrap = params.membership.clone().unwrap_or_else(|| {
            Membership::of_voters(params.peers.iter().copied().chain([params.id]))
        });
        let core = RaftCore::with_membership(
            params.id,
            params.peers.clone(),
            bootstrap,
            state,
            params.config.clone(),
            params.clock.now(),
        );
        let mut core = core;
        if params.persister.shares_fsyncs() && !params.peers.is_empty() {
            core.sync_own_entries_apart();
        }
        let workers = params.workers;
        let shell = Arc::new(Shell::new(params, core));
        {
            // What the new instance restored, before anything else happens to it: its hard
            // state, term and role, and (for an observer of logs) its log.
            let locked = shell.lock();
            let term = locked.core.term();
            shell.observer.on_event(
                shell.id,
                &crate::NodeEvent::HardStateRestored {
                    term,
                    voted_for: locked.core.persistent().voted_for,
                },
            );
            if term > Term(0) {
                let role = locked.core.role();
                shell
                    .observer
                    .on_event(shell.id, &crate::NodeEvent::RoleChanged { term, role });
            }
            let log = &locked.core.persistent().log;
            let snapshot_index = log.snapshot_index();
            if snapshot_index > LogIndex(0) {
                shell.observer.on_event(
                    shell.id,
                    &crate::NodeEvent::LogCompacted {
                        index: snapshot_index,
                        term: log.snapshot_term(),
                    },
                );
            }
            if log.last_index() > snapshot_index {
                shell.report_log_change(&locked, None, Some(snapshot_index.next()));
            }
        }
        let clock = shell.clock.clone();
        let id = shell.id;
        let mut threads = Vec::new();
        if workers.ticker {
            let ticker = shell.clone();
            threads.push(spawn(&clock, format!("{id}-ticker"), move || {
                drive(&ticker.ticker_wake, || ticker::pass(&ticker))
            }));
        }
        if workers.applier {
            let applier = shell.clone();
            threads.push(spawn(&clock, format!("{id}-applier"), move || {
                drive(&applier.applier_wake, || applier::pass(&applier))
            }));
        }
        if workers.peers && shell.persister.shares_fsyncs() {
            let syncer = shell.clone();
            threads.push(spawn(&clock, format!("{id}-own-syncer"), move || {
                drive(&syncer.own_sync_wake, || own_syncer::pass(&syncer))
            }));
        }
        if workers.peers {
            for peer in shell.peers() {
                let replicator = shell.clone();
                threads.push(spawn(&clock, format!("{id}-to-{peer}"), move || {
                    let mut state = replicator::Replicator::default();
                    drive(&replicator.replicator_wake[&peer], || {
                        replicator::pass(&replicator, peer, &mut state)
                    })
                }));
                let beater = shell.clone();
                threads.push(spawn(&clock, format!("{id}-beat-{peer}"), move || {
                    drive(&beater.heartbeat_wake[&peer], || {
                        heartbeater::pass(&beater, peer)
                    })
                }));
            }
        }
        Ok(Node {
            shell,
            threads: Mutex::new(threads),
        })
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.shell.id
    }

    /// Appends `command` to the log if this node believes it is leader. Returns the index and
    /// term the entry will have if it is committed; there is no guarantee that it will be. A
    /// command over [`crate::persist::MAX_COMMAND_BYTES`] is refused.
    pub fn start(&self, command: Command) -> Result<(LogIndex, Term), ProposeError> {
        self.shell.start(command)
    }

    /// As leader, appends the configuration `change` makes of the one in force (one server at
    /// a time; see [`crate::core::RaftCore::change_membership`] for when it is refused).
    /// Returns the index and term the configuration entry will have if committed.
    pub fn change_membership(
        &self,
        change: MembershipChange,
    ) -> Result<(LogIndex, Term), ChangeRefused> {
        self.shell.change_membership(change)
    }

    /// As leader, starts handing leadership to the voter `target` (Raft thesis §3.10):
    /// proposals are refused, naming `target`, while its log catches up; then it is told to
    /// start an election at once. Returns when the transfer has started, not when it is done;
    /// one that has not ended within a minimum election timeout is abandoned.
    pub fn transfer_leadership(&self, target: NodeId) -> Result<(), TransferRefused> {
        self.shell.transfer_leadership(target)
    }

    /// The configuration this node follows: the latest in its log.
    pub fn membership(&self) -> Membership {
        self.shell.lock().core.membership()
    }

    /// ReadIndex (Raft thesis §6.4): as leader with an entry of its own term committed, waits
    /// until a round of AppendEntries sent after the call is answered by a majority in its term,
    /// and returns the commit index it had when called. Reads that arrive together share one
    /// round. A state machine that has applied up to the index may serve a linearizable read
    /// locally. Blocks the caller for the round (at most one minimum election timeout).
    pub fn read_index(&self) -> Result<LogIndex, ReadIndexError> {
        read_index::read_index(&self.shell)
    }

    /// The service has applied every entry up to `index` (as the node handed them) and its
    /// state there is `snapshot`: the log's prefix up to `index` is compacted into it, the two
    /// written in one persist. Called from the service's own thread, never under its locks
    /// the node's threads wait on. Returns whether the node is still running (a failed write
    /// stops it).
    pub fn snapshot(&self, index: LogIndex, snapshot: Vec<u8>) -> bool {
        if self
            .shell
            .config
            .mutations
            .has(Mutation::SnapshotPersistedApart)
        {
            return broken::snapshot_persisted_apart::snapshot(&self.shell, index, snapshot);
        }
        let mut locked = self.shell.lock();
        if locked.stopped {
            return false;
        }
        assert!(
            index <= locked.last_applied,
            "{}: a snapshot at {index}, past what was handed to the service ({})",
            self.shell.id,
            locked.last_applied
        );
        let effects = locked.core.compact(index, snapshot);
        self.shell.execute(&mut locked, effects);
        !locked.stopped
    }

    /// The bytes the node's stored state, as last written, spends besides the snapshot: the
    /// log after it and the fixed fields (for a service that snapshots when the log grows past
    /// a threshold).
    pub fn log_bytes(&self) -> usize {
        self.shell.lock().log_bytes_written
    }

    /// The index a read may be served at with no round, if this node leads and its lease
    /// holds now (see [`crate::core::RaftCore::lease_read`]); [`ReadIndexError::NoLease`] when
    /// it leads without one (a caller then falls back to [`Node::read_index`]).
    pub fn lease_read(&self) -> Result<LogIndex, ReadIndexError> {
        let locked = self.shell.lock();
        if locked.stopped || locked.paused {
            return Err(ReadIndexError::NotLeader(crate::core::NotLeader {
                leader_hint: None,
            }));
        }
        locked.core.lease_read(self.shell.clock.now())
    }

    /// The current term and whether this node believes it is leader.
    pub fn state(&self) -> (Term, bool) {
        let status = self.status();
        (status.term, status.role == Role::Leader)
    }

    /// Counters for tests and tools.
    pub fn status(&self) -> NodeStatus {
        self.shell.status()
    }

    /// Runs one pass of the ticker on the caller's thread (for nodes built without a ticker
    /// thread).
    pub fn tick_once(&self) -> Pass {
        ticker::pass(&self.shell)
    }

    /// Runs one pass of the applier on the caller's thread (for nodes built without an applier
    /// thread).
    pub fn apply_once(&self) -> Pass {
        applier::pass(&self.shell)
    }

    /// Runs one pass of the worker for `peer` on the caller's thread (for nodes built without
    /// peer threads).
    pub fn replicate_once(&self, peer: NodeId) -> Pass {
        replicator::pass(&self.shell, peer, &mut replicator::Replicator::default())
    }

    /// Runs one pass of the syncer of the leader's own writes on the caller's thread (for nodes
    /// built without peer threads, over a persister that shares fsyncs).
    pub fn sync_own_once(&self) -> Pass {
        own_syncer::pass(&self.shell)
    }

    /// Runs one pass of the heartbeater for `peer` on the caller's thread (for nodes built
    /// without peer threads).
    pub fn heartbeat_once(&self, peer: NodeId) -> Pass {
        heartbeater::pass(&self.shell, peer)
    }

    /// The handler a transport calls to deliver requests to this node.
    pub fn rpc_handler(&self) -> Arc<dyn RpcHandler> {
        self.shell.clone()
    }

    /// Freezes the node as a stopped process would be: its threads stop at their next step with
    /// their state intact, it answers no request, and replies to calls it had in flight wait
    /// until [`Node::resume`].
    pub fn pause(&self) {
        self.shell.set_paused(true);
    }

    /// Lets a paused node go on as if nothing happened (its late messages go out, late replies
    /// are handled).
    pub fn resume(&self) {
        self.shell.set_paused(false);
    }

    /// Whether the node has stopped: killed, or stopped itself because a write crashed under it
    /// (see [`crate::Persister::save`]).
    pub fn is_stopped(&self) -> bool {
        self.shell.is_stopped()
    }

    /// Stops every thread of the node and joins them. Afterwards the node sends, applies and
    /// persists nothing, and answers no request. Idempotent.
    pub fn kill(&self) {
        self.shell.kill();
        let threads = std::mem::take(&mut *self.threads.lock());
        for thread in threads {
            thread.join();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}
