//! [`KvServer`]: the key-value service on one node.

use super::sessions::{SessionExpired, SessionPolicy};
use super::{
    ClientId, KvCommand, KvOp, KvReply, KvRequest, KvResult, KvStateMachine, Outcome, ReadMode, Seq,
};
use crate::mutation::{Mutation, MutationSet};
use crate::shell::{Applied, Delivery, Node};
use crate::{LogIndex, NodeId, Term};
use crate::{ProposeError, ReadIndexError};
use std::collections::BTreeMap;
use std::time::Duration;
use threadsim::channel::Receiver;
use threadsim::clock::{spawn, ClockJoinHandle, ClockRef, Signal};
use threadsim::sync::{Arc, Mutex};

/// How a server behaves.
#[derive(Clone, Debug)]
pub struct KvServerConfig {
    /// How gets are served.
    pub read_mode: ReadMode,
    /// How long a request handler waits for its entry to be applied before answering
    /// [`KvReply::Timeout`].
    pub wait_timeout: Duration,
    /// Deliberately broken behaviours ([`Mutation::NoDuplicateSuppression`]).
    pub mutations: MutationSet,
    /// Hand the node a snapshot once the log in its stored state takes more than this many
    /// bytes (`None`: never, and the log grows with the run).
    pub snapshot_threshold: Option<usize>,
    /// When client sessions expire: part of the state machine's rules, the same on every
    /// server of a cluster.
    pub sessions: SessionPolicy,
}

impl Default for KvServerConfig {
    fn default() -> Self {
        KvServerConfig {
            read_mode: ReadMode::Log,
            wait_timeout: Duration::from_millis(150),
            mutations: MutationSet::default(),
            snapshot_threshold: None,
            sessions: SessionPolicy::default(),
        }
    }
}

/// `machine` applying by the rules of `config`: its session policy (and a variant's broken
/// sessions).
fn under_rules(machine: KvStateMachine, config: &KvServerConfig) -> KvStateMachine {
    let machine = machine.with_policy(config.sessions);
    if config.mutations.has(Mutation::ExpiredSessionReopened) {
        machine.reopening_expired_sessions()
    } else {
        machine
    }
}

/// Watches a server (the harness's continuous checks). Called without the server's lock.
pub trait KvObserver: Send + Sync {
    /// The server's apply loop received `applied`, before applying it.
    fn on_applied(&self, node: NodeId, applied: &Applied);
    /// The server's apply loop received a snapshot up to `index`, before restoring it.
    fn on_snapshot(&self, node: NodeId, index: LogIndex, data: &[u8]) {
        let _ = (node, index, data);
    }
    /// The server restored a snapshot up to `index`; its state now has `state_digest`
    /// ([`KvStateMachine::digest`]).
    fn on_snapshot_restored(&self, node: NodeId, index: LogIndex, state_digest: u64) {
        let _ = (node, index, state_digest);
    }
    /// The server handed the node a snapshot of its state at `index`, which has
    /// `state_digest` ([`KvStateMachine::digest`]).
    fn on_snapshot_taken(&self, node: NodeId, index: LogIndex, state_digest: u64) {
        let _ = (node, index, state_digest);
    }
    /// The server answered a get from its local state while it believed it led in `term`,
    /// on the path of read mode `mode`.
    fn on_local_read(&self, node: NodeId, term: Term, mode: ReadMode);
}

/// What a waiting request handler expects at its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Only that the index is applied (a read index).
    Reached,
    /// The client's operation.
    Op(ClientId, Seq),
    /// A registration proposed in this term (an index and a term name one entry).
    Register(Term),
}

/// How a waiting request handler's entry (or read index) settled.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Settled {
    /// The expected command was applied at the index with this outcome.
    Applied(Result<Outcome, SessionExpired>),
    /// The expected registration was applied: the client's id.
    Registered(ClientId),
    /// The index was applied (a read index was reached).
    Reached,
    /// Another command was applied at the index: leadership was lost.
    Displaced,
}

struct Waiter {
    index: LogIndex,
    expect: Expect,
    outcome: Option<Settled>,
    signal: Arc<Signal>,
}

struct State {
    machine: KvStateMachine,
    waiters: BTreeMap<u64, Waiter>,
    next_ticket: u64,
    killed: bool,
    /// Committed entries that were no command of the store's, applied as no-ops.
    refused_entries: u64,
}

struct ServerShared {
    id: NodeId,
    node: Arc<Node>,
    clock: ClockRef,
    config: KvServerConfig,
    observer: Arc<dyn KvObserver>,
    state: Mutex<State>,
}

/// The key-value service of one node: request handlers (on the callers' threads) and one apply
/// loop thread. Lock order: the server's lock, then the node's; the node never calls the server.
pub struct KvServer {
    shared: Arc<ServerShared>,
    apply_loop: Mutex<Option<ClockJoinHandle<()>>>,
}

impl KvServer {
    /// Starts the service on `node`, which hands its committed entries (and snapshots) to
    /// `applied`.
    pub fn start(
        node: Arc<Node>,
        applied: Receiver<Delivery>,
        clock: ClockRef,
        config: KvServerConfig,
        observer: Arc<dyn KvObserver>,
    ) -> KvServer {
        let id = node.id();
        assert!(
            config.read_mode != ReadMode::UnsafeLocal || crate::MUTATIONS_AVAILABLE,
            "the broken unsafe-local read mode in a build without broken variants"
        );
        let machine = under_rules(KvStateMachine::new(), &config);
        let shared = Arc::new(ServerShared {
            id,
            node,
            clock: clock.clone(),
            config,
            observer,
            state: Mutex::new(State {
                machine,
                waiters: BTreeMap::new(),
                next_ticket: 0,
                killed: false,
                refused_entries: 0,
            }),
        });
        let looper = shared.clone();
        let apply_loop = spawn(&clock, format!("{id}-kv-apply"), move || {
            while let Some(delivery) = applied.recv() {
                match delivery {
                    Delivery::Entry(entry) => looper.apply(entry),
                    Delivery::Snapshot { index, data, .. } => looper.restore(index, &data),
                }
                looper.snapshot_if_large();
            }
        });
        KvServer {
            shared,
            apply_loop: Mutex::new(Some(apply_loop)),
        }
    }

    /// The node it runs on.
    pub fn node(&self) -> &Arc<Node> {
        &self.shared.node
    }

    /// An administrator's change of the configuration (see [`Node::change_membership`]). A
    /// leader with no entry of its term committed proposes a no-op, as for a read, so that a
    /// retry shortly after is taken: a cluster nobody writes to can still be changed.
    pub fn change_membership(
        &self,
        change: crate::MembershipChange,
    ) -> Result<(LogIndex, Term), crate::ChangeRefused> {
        let outcome = self.shared.node.change_membership(change);
        if outcome == Err(crate::ChangeRefused::NoCommitInTerm) {
            let _ = self.shared.node.start(KvCommand::Noop.encode());
        }
        outcome
    }

    /// Committed entries this replica applied as no-ops because they were no command of the
    /// store's (forged, or from another program); the same on every replica that applied them.
    pub fn refused_entries(&self) -> u64 {
        self.shared.state.lock().refused_entries
    }

    /// Handles one request on the caller's thread. `None` (no answer) once killed.
    pub fn handle(&self, request: KvRequest) -> Option<KvReply> {
        self.shared.handle(request)
    }

    /// Kills the node, stops the apply loop and joins it; waiting handlers return no answer.
    pub fn kill(&self) {
        self.shared.node.kill();
        let signals: Vec<Arc<Signal>> = {
            let mut state = self.shared.state.lock();
            state.killed = true;
            state.waiters.values().map(|w| w.signal.clone()).collect()
        };
        for signal in signals {
            signal.notify();
        }
        let apply_loop = self.apply_loop.lock().take();
        if let Some(apply_loop) = apply_loop {
            apply_loop.join();
        }
    }
}

impl Drop for KvServer {
    fn drop(&mut self) {
        self.kill();
    }
}

impl ServerShared {
    fn handle(&self, request: KvRequest) -> Option<KvReply> {
        let (client, seq, op) = match request {
            KvRequest::Register => return self.register_client(),
            KvRequest::Op { client, seq, op } => (client, seq, op),
        };
        if let Err(refusal) = op.check_size() {
            return Some(KvReply::Refused(refusal));
        }
        match (&op, self.config.read_mode) {
            (KvOp::Get(key), ReadMode::UnsafeLocal) => self.read_locally_if_leader(key),
            (KvOp::Get(key), ReadMode::ReadIndex) => self.read_by_read_index(key),
            (KvOp::Get(key), ReadMode::Lease) => self.read_by_lease(key),
            _ => self.through_the_log(client, seq, op),
        }
    }

    /// The time to stamp a proposal with: this server's clock, in nanoseconds.
    fn proposal_time(&self) -> u64 {
        u64::try_from(self.clock.now().since_epoch().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Proposes `command` and registers a waiter for it, expecting `expect(term)` at its index;
    /// the reply to give instead when this server does not lead. `None`: killed.
    fn propose(
        &self,
        command: KvCommand,
        expect: impl FnOnce(Term) -> Expect,
    ) -> Option<Result<u64, KvReply>> {
        // Held across `start`, so the apply loop cannot apply the entry before the waiter is
        // registered.
        let mut state = self.state.lock();
        if state.killed {
            return None;
        }
        let (index, term) = match self.node.start(command.encode()) {
            Ok(started) => started,
            Err(ProposeError::NotLeader(not_leader)) => {
                return Some(Err(KvReply::WrongLeader {
                    leader_hint: not_leader.leader_hint,
                }))
            }
            Err(too_large @ ProposeError::TooLarge { .. }) => {
                unreachable!("a request within the size limits made a command: {too_large}")
            }
            Err(ProposeError::Reserved) => {
                unreachable!("a key-value command starts with a tag of its own, never 0xFF")
            }
        };
        Some(Ok(self.register(&mut state, index, expect(term))))
    }

    fn register_client(&self) -> Option<KvReply> {
        let command = KvCommand::Register {
            proposed: self.proposal_time(),
        };
        let waiter = match self.propose(command, Expect::Register)? {
            Ok(waiter) => waiter,
            Err(reply) => return Some(reply),
        };
        Some(match self.wait(waiter)? {
            Some(Settled::Registered(client)) => KvReply::Registered(client),
            Some(Settled::Displaced) => KvReply::WrongLeader { leader_hint: None },
            Some(other) => unreachable!("a registration settled as {other:?}"),
            None => KvReply::Timeout,
        })
    }

    fn read_locally_if_leader(&self, key: &str) -> Option<KvReply> {
        let (term, leader) = self.node.state();
        if !leader {
            return Some(KvReply::WrongLeader { leader_hint: None });
        }
        self.serve_locally(key, term, ReadMode::UnsafeLocal)
    }

    /// Answers a get from the local state machine (reported to the observer with the term the
    /// node led in and the read mode's path); no answer once killed.
    fn serve_locally(&self, key: &str, term: Term, mode: ReadMode) -> Option<KvReply> {
        let value = {
            let state = self.state.lock();
            if state.killed {
                return None;
            }
            state.machine.get(key)
        };
        self.observer.on_local_read(self.id, term, mode);
        Some(KvReply::Ok(KvResult::Value(value)))
    }

    /// A lease read: served at once while the lease holds; a leader without one confirms with
    /// a ReadIndex round instead.
    fn read_by_lease(&self, key: &str) -> Option<KvReply> {
        let (term, _) = self.node.state();
        match self.node.lease_read() {
            Err(ReadIndexError::NoLease) => self.read_by_read_index(key),
            outcome => self.serve_at(key, term, outcome, ReadMode::Lease),
        }
    }

    fn read_by_read_index(&self, key: &str) -> Option<KvReply> {
        let (term, _) = self.node.state();
        let outcome = self.node.read_index();
        self.serve_at(key, term, outcome, ReadMode::ReadIndex)
    }

    /// Serves a get once the state machine has applied the read index `outcome` gave (the
    /// leader's commit index when the read arrived), or answers why it cannot.
    fn serve_at(
        &self,
        key: &str,
        term: Term,
        outcome: Result<LogIndex, ReadIndexError>,
        mode: ReadMode,
    ) -> Option<KvReply> {
        let index = match outcome {
            Ok(index) => index,
            Err(ReadIndexError::NotLeader(not_leader)) => {
                return Some(KvReply::WrongLeader {
                    leader_hint: not_leader.leader_hint,
                })
            }
            Err(ReadIndexError::NoCommitInTerm) => {
                // Commit an entry of this term so the next attempt can be served.
                let _ = self.node.start(KvCommand::Noop.encode());
                return Some(KvReply::Retry);
            }
            Err(ReadIndexError::NotConfirmed | ReadIndexError::NoLease) => {
                return Some(KvReply::WrongLeader { leader_hint: None })
            }
        };
        let waited = {
            let mut state = self.state.lock();
            if state.killed {
                return None;
            }
            if state.machine.applied() >= index {
                None
            } else {
                Some(self.register(&mut state, index, Expect::Reached))
            }
        };
        if let Some(waiter) = waited {
            match self.wait(waiter)? {
                Some(Settled::Reached) => {}
                Some(other) => unreachable!("a read index ended with {other:?}"),
                None => return Some(KvReply::Timeout),
            }
        }
        self.serve_locally(key, term, mode)
    }

    fn through_the_log(&self, client: ClientId, seq: Seq, op: KvOp) -> Option<KvReply> {
        let reads_at_proposal = if self.config.mutations.has(Mutation::TxnReadsAtProposal) {
            let state = self.state.lock();
            crate::broken::txn_reads_at_proposal::reads_now(&state.machine, &op)
        } else {
            None
        };
        let command = KvCommand::Op {
            client,
            seq,
            proposed: self.proposal_time(),
            op,
        };
        let waiter = match self.propose(command, |_| Expect::Op(client, seq))? {
            Ok(waiter) => waiter,
            Err(reply) => return Some(reply),
        };
        Some(match self.wait(waiter)? {
            Some(Settled::Applied(Ok(Ok(result)))) => match reads_at_proposal {
                None => KvReply::Ok(result),
                early => KvReply::Ok(crate::broken::txn_reads_at_proposal::answer(result, early)),
            },
            Some(Settled::Applied(Ok(Err(refusal)))) => KvReply::Refused(refusal),
            Some(Settled::Applied(Err(SessionExpired))) => KvReply::SessionExpired,
            Some(Settled::Displaced) => KvReply::WrongLeader { leader_hint: None },
            Some(other) => unreachable!("an operation settled as {other:?}"),
            None => KvReply::Timeout,
        })
    }

    fn register(&self, state: &mut State, index: LogIndex, expect: Expect) -> u64 {
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        let signal = Arc::new(Signal::new(&self.clock, &format!("{} kv request", self.id)));
        state.waiters.insert(
            ticket,
            Waiter {
                index,
                expect,
                outcome: None,
                signal,
            },
        );
        ticket
    }

    /// Waits for the waiter's outcome until the wait timeout. `None`: killed (no answer);
    /// `Some(None)`: timed out.
    fn wait(&self, ticket: u64) -> Option<Option<Settled>> {
        let deadline = self.clock.now() + self.config.wait_timeout;
        loop {
            let signal = {
                let mut guard = self.state.lock();
                let state = &mut *guard;
                let waiter = state.waiters.get_mut(&ticket).expect("registered waiter");
                if let Some(outcome) = waiter.outcome.take() {
                    state.waiters.remove(&ticket);
                    return Some(Some(outcome));
                }
                if state.killed {
                    state.waiters.remove(&ticket);
                    return None;
                }
                if self.clock.now() >= deadline {
                    state.waiters.remove(&ticket);
                    return Some(None);
                }
                waiter.signal.clone()
            };
            signal.wait_until(Some(deadline));
        }
    }

    /// Replaces the state with a snapshot up to `index` (the node hands one only ahead of what
    /// was applied). A waiter whose entry the snapshot covers cannot tell whether its command
    /// landed there: it is told to try again (the session answers a retry of an applied
    /// command with its first result).
    fn restore(&self, index: LogIndex, data: &[u8]) {
        self.observer.on_snapshot(self.id, index, data);
        let restored = KvStateMachine::restore(data);
        // What was restored, before anything else judges it (an empty state for bytes that are
        // no snapshot): a snapshot that does not hold the state at `index` is the observer's
        // finding first.
        let digest = restored
            .as_ref()
            .map_or_else(|_| KvStateMachine::new().digest(), KvStateMachine::digest);
        self.observer.on_snapshot_restored(self.id, index, digest);
        let machine =
            restored.unwrap_or_else(|error| panic!("{}: snapshot up to {index}: {error}", self.id));
        assert_eq!(
            machine.applied(),
            index,
            "{}: a snapshot handed over as reaching {index} holds the state at another index",
            self.id
        );
        let mut state = self.state.lock();
        assert!(
            index > state.machine.applied(),
            "{}: a snapshot up to {index} after applying {}",
            self.id,
            state.machine.applied()
        );
        state.machine = under_rules(machine, &self.config);
        let mut woken = Vec::new();
        for waiter in state.waiters.values_mut() {
            if waiter.outcome.is_none() && waiter.index <= index {
                waiter.outcome = Some(match waiter.expect {
                    Expect::Reached => Settled::Reached,
                    Expect::Op(..) | Expect::Register(_) => Settled::Displaced,
                });
                woken.push(waiter.signal.clone());
            }
        }
        drop(state);
        for signal in woken {
            signal.notify();
        }
    }

    /// Hands the node a snapshot of the state if the log in its stored state has grown past
    /// the threshold. Called by the apply loop between deliveries, holding no lock.
    fn snapshot_if_large(&self) {
        let Some(threshold) = self.config.snapshot_threshold else {
            return;
        };
        if self.node.log_bytes() <= threshold {
            return;
        }
        let (index, bytes, digest) = {
            let state = self.state.lock();
            let machine = &state.machine;
            let bytes = if self.config.mutations.has(Mutation::SnapshotWithoutSessions) {
                crate::broken::snapshot_without_sessions::snapshot(machine)
            } else {
                machine.snapshot()
            };
            (machine.applied(), bytes, machine.digest())
        };
        if self.node.snapshot(index, bytes) {
            self.observer.on_snapshot_taken(self.id, index, digest);
        }
    }

    /// Applies one committed entry and settles the waiters it decides.
    fn apply(&self, applied: Applied) {
        self.observer.on_applied(self.id, &applied);
        // A configuration entry is the node's own: for the store, a no-op. So is an entry that
        // is no command of the store's (our clerks propose none; a forged or foreign one): every
        // replica decodes the same bytes the same way, so each refuses it alike and counts it,
        // and none stops applying (a panic here would be a crash at every restart).
        let mut refused = false;
        let command = if applied.is_membership() {
            KvCommand::Noop
        } else {
            KvCommand::decode(&applied.command).unwrap_or_else(|_| {
                refused = true;
                KvCommand::Noop
            })
        };
        let suppress = !self.config.mutations.has(Mutation::NoDuplicateSuppression);
        let mut state = self.state.lock();
        state.refused_entries += u64::from(refused);
        let index = applied.index;
        // What a waiter for this very entry learns, and what it must have expected.
        let (applied_as, settled) = match command {
            KvCommand::Noop => {
                state.machine.advance(index);
                (None, None)
            }
            KvCommand::Register { proposed } => {
                let client = state.machine.register(index, proposed);
                (
                    Some(Expect::Register(applied.term)),
                    Some(Settled::Registered(client)),
                )
            }
            KvCommand::Op {
                client,
                seq,
                proposed,
                op,
            } => {
                let result = state
                    .machine
                    .apply(index, client, seq, &op, proposed, suppress);
                (
                    Some(Expect::Op(client, seq)),
                    Some(Settled::Applied(result)),
                )
            }
        };
        let mut woken = Vec::new();
        for waiter in state.waiters.values_mut() {
            if waiter.outcome.is_some() || waiter.index > index {
                continue;
            }
            waiter.outcome = Some(match (waiter.expect, &settled) {
                (Expect::Reached, _) => Settled::Reached,
                (expected, Some(settled))
                    if waiter.index == index && applied_as == Some(expected) =>
                {
                    settled.clone()
                }
                _ => Settled::Displaced,
            });
            woken.push(waiter.signal.clone());
        }
        drop(state);
        for signal in woken {
            signal.notify();
        }
    }
}
