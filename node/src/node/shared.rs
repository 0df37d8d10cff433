//! [`Shared`]: the state every thread of a node reaches, and the one place effects are executed.

use super::{Applied, NodeParams, NodeStatus, ReplicationStats};
use crate::config::Config;
use crate::core::{Effect, Effects, NotLeader, RaftCore};
use crate::messages::{Request, Response};
use crate::mutation::Mutation;
use crate::observer::{NodeEvent, Observer, Role};
use crate::persist::{Persister, StateEncoder};
use crate::transport::{RpcHandler, Transport};
use crate::{Command, LogIndex, NodeId, Term};
use std::collections::BTreeMap;
use threadsim::channel::Sender;
use threadsim::clock::{ClockRef, Signal};
use threadsim::rng::DetRng;
use threadsim::sync::{Arc, Mutex, MutexGuard};
use threadsim::Instant;

/// The state behind the node's lock.
pub(super) struct Inner {
    pub core: RaftCore,
    pub killed: bool,
    /// Paused like a stopped process: workers wait, requests go unanswered.
    pub paused: bool,
    /// A persist deferred by the `reply-before-persist` mutation.
    persist_owed: bool,
    /// As leader: entries appended by `start` that are not yet durable. They are written once
    /// per round, before the replicator sends them (any persist covers them too).
    own_entries_unsaved: bool,
    /// The stored form of the persistent state as of the last persist, so the next one encodes
    /// only the entries appended since.
    encoder: StateEncoder,
    pub election_deadline: Instant,
    /// When the election timer was last reset.
    pub timer_reset_at: Instant,
    /// When this node last heard from a leader of its current term (or, as leader, had a quorum).
    pub leader_contact_at: Option<Instant>,
    /// As leader: when each peer last answered in the current term (check-quorum).
    pub peer_answered_at: BTreeMap<NodeId, Instant>,
    pub heartbeat_due: BTreeMap<NodeId, Instant>,
    pub last_applied: LogIndex,
    /// A thread (the applier, or a handler delivering on its own thread) is handing entries to
    /// the service: at most one at a time, so they arrive in order.
    pub delivering: bool,
    /// Set while a handler executes effects: a commit advance is delivered by that handler
    /// after it releases the lock (`apply_due`) instead of waking the applier.
    delivers_itself: bool,
    /// The commit index advanced while `delivers_itself` was set.
    apply_due: bool,
    /// What the replicators have sent.
    pub sent: ReplicationStats,
    highest_commit_seen: LogIndex,
    highest_term_seen: Term,
    rng: DetRng,
}

impl Inner {
    /// What every worker checks first: exit once the node is dead, wait while it is paused.
    pub fn gate(&self) -> Option<super::Step> {
        if self.killed {
            Some(super::Step::Exit)
        } else if self.paused {
            Some(super::Step::WaitUntil(None))
        } else {
            None
        }
    }
}

pub(super) struct Shared {
    pub id: NodeId,
    pub clock: ClockRef,
    pub transport: Arc<dyn Transport>,
    pub config: Config,
    pub apply_sender: Sender<Applied>,
    pub ticker_wake: Signal,
    pub applier_wake: Signal,
    pub peer_wake: BTreeMap<NodeId, Signal>,
    pub heartbeat_wake: BTreeMap<NodeId, Signal>,
    persister: Arc<dyn Persister>,
    observer: Arc<dyn Observer>,
    inner: Mutex<Inner>,
}

impl Shared {
    pub fn new(params: NodeParams, core: RaftCore) -> Shared {
        let clock = params.clock;
        let id = params.id;
        let mut rng = DetRng::new(params.config.seed);
        let started = clock.now();
        let election_deadline = started + election_timeout(&params.config, &mut rng);
        let peer_wake = core
            .peers()
            .iter()
            .map(|&peer| {
                (
                    peer,
                    Signal::new(&clock, &format!("{id} worker for {peer}")),
                )
            })
            .collect();
        let heartbeat_wake = core
            .peers()
            .iter()
            .map(|&peer| {
                (
                    peer,
                    Signal::new(&clock, &format!("{id} heartbeats to {peer}")),
                )
            })
            .collect();
        let highest_term_seen = core.term();
        Shared {
            id,
            ticker_wake: Signal::new(&clock, &format!("{id} ticker")),
            applier_wake: Signal::new(&clock, &format!("{id} applier")),
            peer_wake,
            heartbeat_wake,
            clock,
            transport: params.transport,
            config: params.config,
            apply_sender: params.apply_sender,
            persister: params.persister,
            observer: params.observer,
            inner: Mutex::new(Inner {
                core,
                killed: false,
                paused: false,
                persist_owed: false,
                own_entries_unsaved: false,
                encoder: StateEncoder::new(),
                election_deadline,
                timer_reset_at: started,
                leader_contact_at: None,
                peer_answered_at: BTreeMap::new(),
                heartbeat_due: BTreeMap::new(),
                last_applied: LogIndex(0),
                delivering: false,
                delivers_itself: false,
                apply_due: false,
                sent: ReplicationStats::default(),
                highest_commit_seen: LogIndex(0),
                highest_term_seen,
                rng,
            }),
        }
    }

    pub fn peers(&self) -> Vec<NodeId> {
        self.peer_wake.keys().copied().collect()
    }

    /// The node's lock (a deadlock report names the caller's line).
    #[track_caller]
    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    pub fn start(&self, command: Command) -> Result<(LogIndex, Term), NotLeader> {
        if self.config.mutations.has(Mutation::LostApplierWakeup) {
            // Broken: the applier is told before the commit index moves.
            self.applier_wake.notify();
        }
        let mut inner = self.lock();
        if inner.killed || inner.paused {
            return Err(NotLeader { leader_hint: None });
        }
        let (index, term, effects) = inner.core.propose(command)?;
        if inner.core.peers().is_empty() {
            // Alone, the leader commits at once: the entry must be durable now.
            self.execute(&mut inner, effects);
        } else {
            // Raft thesis §10.2.1: the leader may write its own new entries in parallel with
            // replicating them, if it counts itself only for entries that are durable. Here
            // they are written once per round, before any follower can receive them (so no
            // majority can include the leader's copy before it is durable): entries that arrive
            // while a round is in flight share one write instead of one write each.
            inner.own_entries_unsaved = true;
            self.execute(&mut inner, effects.without_persist());
        }
        Ok((index, term))
    }

    /// Writes the leader's own new entries if `start` left any unwritten. Returns false if the
    /// write crashed (the node has stopped).
    pub fn save_own_entries(&self, inner: &mut Inner) -> bool {
        if !inner.own_entries_unsaved {
            return true;
        }
        if self.persist(inner).is_err() {
            self.stop(inner);
            return false;
        }
        true
    }

    pub fn status(&self) -> NodeStatus {
        let inner = self.lock();
        NodeStatus {
            term: inner.core.term(),
            role: inner.core.role(),
            commit_index: inner.core.commit_index(),
            last_applied: inner.last_applied,
            last_log_index: inner.core.persistent().log.last_index(),
            sent: inner.sent,
        }
    }

    /// Marks the node dead and wakes every thread so it can see that and exit.
    pub fn kill(&self) {
        let mut inner = self.lock();
        self.stop(&mut inner);
    }

    /// Marks the node dead, closes the apply channel (a blocked or later send fails) and wakes
    /// every worker so it sees that and exits. Shared by `kill` and a crash mid-write.
    fn stop(&self, inner: &mut Inner) {
        inner.killed = true;
        self.apply_sender.close();
        self.notify_workers();
    }

    /// Whether the node is dead (killed, or stopped itself after a crashed write).
    pub fn is_killed(&self) -> bool {
        self.lock().killed
    }

    /// Pauses or resumes every worker.
    pub fn set_paused(&self, paused: bool) {
        self.lock().paused = paused;
        self.notify_workers();
    }

    /// Wakes every worker thread (without taking the node's lock).
    fn notify_workers(&self) {
        self.ticker_wake.notify();
        self.applier_wake.notify();
        for signal in self.peer_wake.values().chain(self.heartbeat_wake.values()) {
            signal.notify();
        }
    }

    /// Carries out `effects` in order, under the lock, and returns the reply if there is one.
    pub fn execute(&self, inner: &mut Inner, effects: Effects) -> Option<Response> {
        assert!(!inner.killed, "{}: effects executed after kill", self.id);
        let mut reply = None;
        let defer_persist = inner.core.has(Mutation::ReplyBeforePersist);
        if std::mem::take(&mut inner.persist_owed) && self.persist(inner).is_err() {
            self.stop(inner);
            return None;
        }
        for effect in effects.into_vec() {
            match effect {
                Effect::Persist if defer_persist => inner.persist_owed = true,
                Effect::Persist => {
                    if self.persist(inner).is_err() {
                        // The machine crashed mid-write: nothing after this happens, no reply,
                        // and every thread exits.
                        self.stop(inner);
                        return None;
                    }
                }
                Effect::ResetElectionTimer => {
                    let now = self.clock.now();
                    inner.timer_reset_at = now;
                    inner.election_deadline = now + election_timeout(&self.config, &mut inner.rng);
                }
                Effect::RoleChanged(role) => {
                    let term = inner.core.term();
                    self.observer
                        .on_event(self.id, &NodeEvent::RoleChanged { term, role });
                    let now = self.clock.now();
                    if role == Role::Leader {
                        inner.heartbeat_due = self.peer_wake.keys().map(|&p| (p, now)).collect();
                        // A new leader gets one election timeout to hear from a quorum.
                        inner.peer_answered_at = self.peer_wake.keys().map(|&p| (p, now)).collect();
                        inner.leader_contact_at = Some(now);
                    } else {
                        inner.leader_contact_at = None;
                    }
                    self.ticker_wake.notify();
                    for signal in self.heartbeat_wake.values() {
                        signal.notify();
                    }
                }
                Effect::WakePeers => {
                    for signal in self.peer_wake.values() {
                        signal.notify();
                    }
                }
                Effect::CommitAdvanced(commit_index) => {
                    self.observer
                        .on_event(self.id, &NodeEvent::CommitAdvanced { commit_index });
                    if inner.core.has(Mutation::LostApplierWakeup) {
                        // Broken: no wake-up after the commit (the applier was told before).
                    } else if inner.delivers_itself {
                        inner.apply_due = true;
                    } else {
                        self.applier_wake.notify();
                    }
                }
                Effect::InvariantViolated(description) => self.report(description),
                Effect::Reply(response) => reply = Some(response),
            }
        }
        self.check_invariants(inner);
        reply
    }

    fn persist(&self, inner: &mut Inner) -> Result<(), crate::StorageError> {
        if inner.core.has(Mutation::SleepInPersist) {
            // Broken: an fsync delay slept with the node's lock held.
            self.clock.sleep(std::time::Duration::from_millis(1));
        }
        let state = inner.core.persistent();
        if inner.core.has(Mutation::ForgetVote) {
            let mut forgetful = state.clone();
            forgetful.voted_for = None;
            self.persister.save(&forgetful.encode())?;
        } else {
            inner.encoder.update(state);
            // Every update is saved (a failed save stops the node), so what the update kept is
            // what the persister holds.
            self.persister
                .save_changed(inner.encoder.bytes(), inner.encoder.unchanged())?;
        }
        inner.own_entries_unsaved = false;
        Ok(())
    }

    /// Takes up to `limit` committed entries not yet handed to the service.
    pub fn take_committed(&self, inner: &mut Inner, limit: usize) -> Vec<Applied> {
        let log = &inner.core.persistent().log;
        let ready = inner.core.commit_index().min(log.last_index());
        let upto = LogIndex(ready.0.min(inner.last_applied.0 + limit as u64));
        let batch: Vec<Applied> = (inner.last_applied.0 + 1..=upto.0)
            .map(|index| {
                let entry = log
                    .entry(LogIndex(index))
                    .expect("committed entry in the log");
                Applied {
                    index: LogIndex(index),
                    term: entry.term,
                    command: entry.command.clone(),
                }
            })
            .collect();
        if let Some(last) = batch.last() {
            inner.last_applied = last.index;
        }
        batch
    }

    /// Whether committed entries wait to be handed to the service.
    fn apply_pending(inner: &Inner) -> bool {
        let log = &inner.core.persistent().log;
        inner.core.commit_index().min(log.last_index()) > inner.last_applied
    }

    /// After a handler's effects advanced the commit index: hands the newly committed entries to
    /// the service from this thread, after releasing the lock, when that cannot block (nobody
    /// else is delivering and they fit in the apply channel); otherwise wakes the applier. A
    /// follower's commit index moves only in its AppendEntries handler, so this saves it a
    /// hand-off to the applier thread on every round.
    fn deliver_on_this_thread(&self, mut inner: MutexGuard<'_, Inner>) {
        if !std::mem::take(&mut inner.apply_due) {
            return;
        }
        let hand_off = !inner.core.has(Mutation::LostDeliveryHandoff);
        let room = if inner.delivering || inner.killed {
            0
        } else {
            self.apply_sender.room()
        };
        let batch = self.take_committed(
            &mut inner,
            room.min(self.config.max_entries_per_apply_batch),
        );
        if batch.is_empty() {
            if hand_off {
                self.applier_wake.notify();
            }
            return;
        }
        assert!(!inner.delivering, "{}: two threads delivering", self.id);
        inner.delivering = true;
        drop(inner);
        // Fits without blocking: while `delivering` is set this thread is the only sender, so
        // the room seen above can only have grown. A failed send means the node was killed
        // meanwhile (the channel is closed); nothing more is delivered then.
        let _ = self.apply_sender.send_all(batch);
        let mut inner = self.lock();
        assert!(inner.delivering, "{}: delivery token lost", self.id);
        inner.delivering = false;
        if Self::apply_pending(&inner) && hand_off {
            self.applier_wake.notify();
        }
    }

    fn check_invariants(&self, inner: &mut Inner) {
        if let Err(description) = inner.core.check_invariants() {
            self.report(description);
        }
        let (commit, term) = (inner.core.commit_index(), inner.core.term());
        if commit < inner.highest_commit_seen {
            self.report(format!(
                "{}: commit index went back from {} to {commit}",
                self.id, inner.highest_commit_seen
            ));
        }
        if term < inner.highest_term_seen {
            self.report(format!(
                "{}: term went back from {} to {term}",
                self.id, inner.highest_term_seen
            ));
        }
        if inner.last_applied > commit {
            self.report(format!(
                "{}: applied {} beyond commit index {commit}",
                self.id, inner.last_applied
            ));
        }
        inner.highest_commit_seen = inner.highest_commit_seen.max(commit);
        inner.highest_term_seen = inner.highest_term_seen.max(term);
    }

    /// Check-quorum: a leader that has not heard from a majority within the longest election
    /// timeout steps down. Returns whether it did.
    pub fn check_quorum(&self, inner: &mut Inner) -> bool {
        let now = self.clock.now();
        let window = self.config.leader_quorum_timeout;
        let answered = inner
            .peer_answered_at
            .values()
            .filter(|&&at| now < at + window)
            .count();
        if 2 * (answered + 1) > inner.core.peers().len() + 1 {
            inner.leader_contact_at = Some(now);
            return false;
        }
        let effects = inner.core.step_down();
        self.execute(inner, effects);
        true
    }

    /// Raft Figure 2, for all servers: a message carrying a higher term makes the receiver adopt
    /// it (and step down). Checked here in the shell, independently of the core's rules.
    pub fn check_term_adopted(&self, inner: &Inner, seen: Term, what: &str) {
        let term = inner.core.term();
        if term < seen {
            self.report(format!(
                "{}: saw {seen} in a {what} but stayed in {term} as {:?}",
                self.id,
                inner.core.role()
            ));
        }
    }

    /// Reports a broken invariant to the observer.
    pub fn report(&self, description: String) {
        self.observer
            .on_event(self.id, &NodeEvent::InvariantViolated { description });
    }
}

impl RpcHandler for Shared {
    fn handle(&self, request: Request) -> Option<Response> {
        let mut inner = self.lock();
        if inner.killed || inner.paused {
            return None;
        }
        let now = self.clock.now();
        let within_lease = inner
            .leader_contact_at
            .is_some_and(|contact| now < contact + self.config.election_timeout_min);
        let refused_within_lease = matches!(&request, Request::RequestVote(args) if within_lease && args.term > inner.core.term());
        let effects = if refused_within_lease {
            inner.core.refuse_vote_within_lease()
        } else {
            inner.core.handle_request(&request)
        };
        // (The apply-with-lock-held node delivers everything through its applier.)
        inner.delivers_itself = !inner.core.has(Mutation::ApplyWithLockHeld);
        let reply = self.execute(&mut inner, effects);
        inner.delivers_itself = false;
        if let (Request::AppendEntries(args), false) = (&request, inner.killed) {
            if args.term == inner.core.term() {
                inner.leader_contact_at = Some(now);
            }
        }
        if inner.killed {
            return None;
        }
        assert!(reply.is_some(), "{}: no reply to {request:?}", self.id);
        let pre_vote = matches!(&request, Request::RequestVote(args) if args.pre_vote);
        if !refused_within_lease && !pre_vote {
            // (The lease and pre-votes are the exceptions to Figure 2's rule, by design.)
            self.check_term_adopted(&inner, request.term(), "request");
        }
        self.deliver_on_this_thread(inner);
        reply
    }
}

fn election_timeout(config: &Config, rng: &mut DetRng) -> std::time::Duration {
    rng.duration_ms(config.election_timeout_min, config.election_timeout_max)
}
