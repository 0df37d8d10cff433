//! [`Node`]: the Raft core wrapped in threads, one lock, signals and the seams.
//!
//! Threads per node: a ticker (election timeout), an applier (hands committed entries to the
//! service through the apply channel), and per peer a replicator (vote requests, AppendEntries
//! with entries) and a heartbeater, each with one call in flight. Incoming RPCs run on the
//! caller's thread through [`RpcHandler`]; an AppendEntries handler that advances a follower's
//! commit index delivers the new entries itself when that cannot block, and leaves the rest to
//! the applier. All protocol state sits behind one mutex; no thread holds it while it calls the
//! transport or blocks on the apply channel.

mod applier;
mod heartbeat;
mod peer;
mod read_index;
mod shared;
mod ticker;

use crate::config::{Config, ConfigError};
use crate::core::{NotLeader, RaftCore};
use crate::mutation::Mutation;
use crate::observer::{Observer, Role};
use crate::persist::{PersistentState, Persister, StorageError};
use crate::transport::{RpcHandler, Transport};
use crate::{Command, LogIndex, NodeId, Term};
pub use read_index::ReadIndexError;
use shared::Shared;
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

/// Everything a node is built from.
pub struct NodeParams {
    /// This node.
    pub id: NodeId,
    /// Every other node of the cluster.
    pub peers: Vec<NodeId>,
    /// How it reaches its peers.
    pub transport: Arc<dyn Transport>,
    /// Where its term, vote and log live; read at start to restore them.
    pub persister: Arc<dyn Persister>,
    /// Its clock.
    pub clock: ClockRef,
    /// Where committed entries go.
    pub apply_sender: Sender<Applied>,
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
        apply_sender: Sender<Applied>,
    ) -> NodeParams {
        assert!(members.contains(&id), "{id} is not among the members");
        NodeParams {
            id,
            peers: members.iter().copied().filter(|&p| p != id).collect(),
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

/// What one pass of a worker (ticker, applier, peer worker) ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The node was killed (or its service is gone): the worker exits.
    Exit,
    /// It did something; run another pass at once.
    Continue,
    /// Nothing to do until notified or until the deadline, if any.
    WaitUntil(Option<threadsim::Instant>),
}

/// Which workers [`Node::new`] runs on threads of their own. A worker that is not spawned can be
/// driven one pass at a time from the caller's thread ([`Node::tick_once`],
/// [`Node::apply_once`], [`Node::replicate_once`], [`Node::heartbeat_once`]), which is how loom models exercise exactly
/// the code the threads run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workers {
    /// The ticker thread (election timeout).
    pub ticker: bool,
    /// The applier thread.
    pub applier: bool,
    /// Two threads per peer: the replicator (vote requests, AppendEntries with entries) and the
    /// heartbeater.
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
fn drive(wake: &threadsim::clock::Signal, mut pass: impl FnMut() -> Step) {
    loop {
        match pass() {
            Step::Exit => return,
            Step::Continue => {}
            Step::WaitUntil(deadline) => {
                wake.wait_until(deadline);
            }
        }
    }
}

/// A snapshot of a node's volatile and persistent counters, for tests and tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// What its replicators have sent (as leader, in any term).
    pub sent: ReplicationStats,
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

/// A running Raft node. Dropping it kills it.
pub struct Node {
    shared: Arc<Shared>,
    threads: Mutex<Vec<ClockJoinHandle<()>>>,
}

impl Node {
    /// Restores the node from its persister and starts its threads.
    pub fn new(params: NodeParams) -> Result<Node, NodeError> {
        params.config.validate()?;
        let state = match params.persister.load()? {
            Some(bytes) => match PersistentState::decode(&bytes) {
                Ok(state) => state,
                Err(_) if params.config.mutations.has(Mutation::AcceptTornWrites) => {
                    PersistentState::salvage(&bytes)
                }
                Err(error) => return Err(error.into()),
            },
            None => PersistentState::default(),
        };
        let core = RaftCore::new(
            params.id,
            params.peers.clone(),
            state,
            params.config.mutations.clone(),
            params.config.max_entries_per_append,
        );
        let workers = params.workers;
        let shared = Arc::new(Shared::new(params, core));
        let clock = shared.clock.clone();
        let id = shared.id;
        let mut threads = Vec::new();
        if workers.ticker {
            let ticker = shared.clone();
            threads.push(spawn(&clock, format!("{id}-ticker"), move || {
                drive(&ticker.ticker_wake, || ticker::step(&ticker))
            }));
        }
        if workers.applier {
            let applier = shared.clone();
            threads.push(spawn(&clock, format!("{id}-applier"), move || {
                drive(&applier.applier_wake, || applier::step(&applier))
            }));
        }
        if workers.peers {
            for peer in shared.peers() {
                let replicator = shared.clone();
                threads.push(spawn(&clock, format!("{id}-to-{peer}"), move || {
                    let mut state = peer::Replicator::default();
                    drive(&replicator.peer_wake[&peer], || {
                        peer::step(&replicator, peer, &mut state)
                    })
                }));
                let beater = shared.clone();
                threads.push(spawn(&clock, format!("{id}-beat-{peer}"), move || {
                    drive(&beater.heartbeat_wake[&peer], || {
                        heartbeat::step(&beater, peer)
                    })
                }));
            }
        }
        Ok(Node {
            shared,
            threads: Mutex::new(threads),
        })
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.shared.id
    }

    /// Appends `command` to the log if this node believes it is leader. Returns the index and
    /// term the entry will have if it is committed; there is no guarantee that it will be.
    pub fn start(&self, command: Command) -> Result<(LogIndex, Term), NotLeader> {
        self.shared.start(command)
    }

    /// ReadIndex (Raft thesis §6.4): as leader with an entry of its own term committed, confirms
    /// with a round of heartbeats answered by a majority that it still leads, and returns the
    /// commit index it had before the round. A state machine that has applied up to it may
    /// serve a linearizable read locally. Blocks for the round (on the caller's thread).
    pub fn read_index(&self) -> Result<LogIndex, ReadIndexError> {
        read_index::read_index(&self.shared)
    }

    /// The current term and whether this node believes it is leader.
    pub fn state(&self) -> (Term, bool) {
        let status = self.status();
        (status.term, status.role == Role::Leader)
    }

    /// Counters for tests and tools.
    pub fn status(&self) -> NodeStatus {
        self.shared.status()
    }

    /// Runs one pass of the ticker on the caller's thread (for nodes built without a ticker
    /// thread).
    pub fn tick_once(&self) -> Step {
        ticker::step(&self.shared)
    }

    /// Runs one pass of the applier on the caller's thread (for nodes built without an applier
    /// thread).
    pub fn apply_once(&self) -> Step {
        applier::step(&self.shared)
    }

    /// Runs one pass of the worker for `peer` on the caller's thread (for nodes built without
    /// peer threads).
    pub fn replicate_once(&self, peer: NodeId) -> Step {
        peer::step(&self.shared, peer, &mut peer::Replicator::default())
    }

    /// Runs one pass of the heartbeater for `peer` on the caller's thread (for nodes built
    /// without peer threads).
    pub fn heartbeat_once(&self, peer: NodeId) -> Step {
        heartbeat::step(&self.shared, peer)
    }

    /// The handler a transport calls to deliver requests to this node.
    pub fn rpc_handler(&self) -> Arc<dyn RpcHandler> {
        self.shared.clone()
    }

    /// Freezes the node as a stopped process would be: its threads stop at their next step with
    /// their state intact, it answers no request, and replies to calls it had in flight wait
    /// until [`Node::resume`].
    pub fn pause(&self) {
        self.shared.set_paused(true);
    }

    /// Lets a paused node go on as if nothing happened (its late messages go out, late replies
    /// are handled).
    pub fn resume(&self) {
        self.shared.set_paused(false);
    }

    /// Whether the node stopped itself because a write crashed (see [`crate::Persister::save`]).
    pub fn is_dead(&self) -> bool {
        self.shared.is_killed()
    }

    /// Stops every thread of the node and joins them. Afterwards the node sends, applies and
    /// persists nothing, and answers no request. Idempotent.
    pub fn kill(&self) {
        self.shared.kill();
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
