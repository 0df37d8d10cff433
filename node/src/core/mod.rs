//! The Raft rules as plain functions over plain state.
//!
//! [`RaftCore`] holds no locks, spawns no threads and never reads a clock: it is told the time on
//! every input (`now`) and keeps every rule that depends on it: the randomized election deadline,
//! the leader lease that refuses disruptive votes, check-quorum, the heartbeat schedule and the
//! confirmation of ReadIndex rounds. Each input changes the state and returns the [`Effect`]s the
//! shell must carry out, **in order**: persist before the reply or send that depends on the
//! persisted state, wake the workers that have something to do, advance the commit index, answer
//! confirmed reads. The unit tests in `tests/` assert those lists, rule by rule.
//!
//! - `election.rs`: pre-vote, votes, becoming leader or follower (Raft §5.2, §5.4.1, thesis §9.6);
//! - `replication.rs`: AppendEntries on both sides and the commit rule (§5.3, §5.4.2);
//! - `timing.rs`: the election timer, the lease, check-quorum, heartbeats (thesis §4.2.3, §6.2);
//! - `read_index.rs`: ReadIndex rounds, batched (thesis §6.4);
//! - `lease.rs`: lease reads, safe while clocks drift within the configured bound (§6.4.1);
//! - `snapshot.rs`: compaction and InstallSnapshot (§7);
//! - `quorum.rs`: majority arithmetic, over the voters of the configuration in force;
//! - `reconfiguration.rs`: the configuration in force, and changing it one server at a time
//!   (thesis §4; the configuration itself is `crate::membership`);
//! - `transfer.rs`: handing leadership over (TimeoutNow, thesis §3.10).

mod election;
mod lease;
mod own_sync;
mod quorum;
mod read_index;
mod reconfiguration;
mod replication;
mod snapshot;
#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
mod timing;
mod transfer;

pub use crate::membership::{Membership, MembershipChange};
pub use quorum::Quorum;
pub use read_index::{ReadIndexError, ReadOutcome, ReadTicket};
pub use reconfiguration::ChangeRefused;
pub use timing::HeartbeatDue;
pub use transfer::TransferRefused;

use crate::config::Config;
use crate::messages::{Request, Response};
use crate::mutation::Mutation;
use crate::observer::Role;
use crate::persist::PersistentState;
use crate::{Command, LogIndex, NodeId, Term};
use read_index::ReadRounds;
use std::collections::{BTreeMap, BTreeSet};
use threadsim::Instant;
use timing::Timers;

/// Something the shell must do after the core returns, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Write current term, vote and log to stable storage before anything that follows.
    Persist,
    /// The ticker must look again: the next timer the core decides on moved earlier than the
    /// time the ticker was told to wait until.
    WakeTicker,
    /// The node's role or term changed.
    RoleChanged(Role),
    /// Replicators have something to send (vote requests, new entries, a new leader's entries).
    WakePeers,
    /// Heartbeaters must send now: a ReadIndex round waits for their answers.
    WakeHeartbeaters,
    /// The log changed: entries from `truncated_from` on were removed (if any), then entries
    /// from `appended_from` to the end were added (if any). Reported before any commit of them.
    LogChanged {
        /// The first index removed.
        truncated_from: Option<LogIndex>,
        /// The first index added.
        appended_from: Option<LogIndex>,
    },
    /// The commit index advanced to this index; the applier has work.
    CommitAdvanced(LogIndex),
    /// The service's snapshot up to `index` (of term `term`) replaced the log's prefix up to
    /// there (every entry of it applied and committed).
    LogCompacted {
        /// The last index the snapshot covers.
        index: LogIndex,
        /// The term of the entry there.
        term: Term,
    },
    /// The log gave way to a snapshot from the leader covering every entry up to `index` (of
    /// term `term`), which is now committed: the service must take the snapshot before any
    /// entry after it. The entries after `index` were kept if the log agreed at `index`
    /// (`kept_suffix`), and removed otherwise.
    SnapshotInstalled {
        /// The last index the snapshot covers.
        index: LogIndex,
        /// The term of the entry there.
        term: Term,
        /// Whether the entries after `index` were kept.
        kept_suffix: bool,
    },
    /// These reads are decided (confirmed with their read index, or failed).
    ReadsDone(Vec<(ReadTicket, ReadOutcome)>),
    /// A local invariant broke (reachable only with a mutation on).
    InvariantViolated(String),
    /// The reply to the request being handled. Always last.
    Reply(Response),
}

/// The effects of one call, with `Persist` recorded at most once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects(Vec<Effect>);

impl Effects {
    fn push(&mut self, effect: Effect) {
        if matches!(effect, Effect::Persist | Effect::WakeTicker) && self.0.contains(&effect) {
            return;
        }
        if let Some(Effect::Reply(_)) = self.0.last() {
            panic!("effect {effect:?} after the reply");
        }
        self.0.push(effect);
    }

    /// Adds an effect (for a broken variant's path outside the core).
    pub(crate) fn push_from_outside(&mut self, effect: Effect) {
        self.push(effect);
    }

    fn extend(&mut self, more: Effects) {
        for effect in more.0 {
            self.push(effect);
        }
    }

    /// The effects in the order they must happen.
    pub fn into_vec(self) -> Vec<Effect> {
        self.0
    }

    /// The effects in the order they must happen.
    pub fn as_slice(&self) -> &[Effect] {
        &self.0
    }

    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A leader's view of one follower's log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The next index to send.
    pub next_index: LogIndex,
    /// The highest index known to be replicated on the follower.
    pub match_index: LogIndex,
    /// While a snapshot goes to the follower in chunks: the snapshot's last index and how many
    /// of its bytes the follower said it holds.
    pub snapshot_sent: Option<(LogIndex, u64)>,
}

/// What a leader keeps about each follower.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LeaderState {
    progress: BTreeMap<NodeId, Progress>,
    /// When each peer's next heartbeat is due.
    heartbeat_due: BTreeMap<NodeId, Instant>,
    /// When each peer last answered in this term (check-quorum).
    answered_at: BTreeMap<NodeId, Instant>,
    /// ReadIndex rounds.
    reads: ReadRounds,
    /// Per peer, the send time of the latest AppendEntries it answered in this term (lease).
    lease_acks: BTreeMap<NodeId, Instant>,
    /// Its own entries from this index on are written but not known durable (see `own_sync.rs`).
    own_unsynced_from: Option<LogIndex>,
    /// A transfer of leadership in progress (see `transfer.rs`).
    transfer: Option<transfer::Transfer>,
    /// It sent TimeoutNow in this term: no lease any more (see `transfer.rs`).
    lease_given_up: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum RoleState {
    Follower,
    Candidate {
        votes: BTreeSet<NodeId>,
        requested: BTreeSet<NodeId>,
        /// Collecting pre-votes for `term + 1` rather than votes for `term`.
        pre_vote: bool,
        /// Started by TimeoutNow (see `transfer.rs`).
        transfer: bool,
    },
    Leader(Box<LeaderState>),
}

/// `start` was called on a node that does not believe it is leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not leader (last known leader: {leader_hint:?})")]
pub struct NotLeader {
    /// The leader this node last heard from in its current term, if any.
    pub leader_hint: Option<NodeId>,
}

/// Why [`RaftCore::propose`] refused a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProposeError {
    /// This node does not believe it leads.
    #[error(transparent)]
    NotLeader(#[from] NotLeader),
    /// The command is longer than [`crate::persist::MAX_COMMAND_BYTES`]: no stored form or
    /// message could carry it, so it is refused before it reaches the log.
    #[error("a command of {bytes} bytes is over the limit of {limit} bytes")]
    TooLarge {
        /// The command's length.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The command starts with [`crate::membership::MEMBERSHIP_PREFIX`], which only the node's own
    /// configuration entries may ([`RaftCore::change_membership`] makes them).
    #[error("a command may not start with the bytes reserved for configuration entries")]
    Reserved,
}

/// The protocol state of one node, and the Raft rules.
#[derive(Clone, Debug)]
pub struct RaftCore {
    id: NodeId,
    /// Every other node this one may ever talk to (a configuration picks among them).
    peers: Vec<NodeId>,
    /// The configuration before the first entry, the same on every node: in force while
    /// neither the log nor a snapshot holds one.
    bootstrap: Membership,
    state: PersistentState,
    role: RoleState,
    commit_index: LogIndex,
    leader_hint: Option<NodeId>,
    config: Config,
    timers: Timers,
    /// As leader: entries appended by `propose` that are not yet durable. They are written once
    /// per round, before any follower can receive them (Raft thesis §10.2.1).
    own_entries_unsaved: bool,
    /// Whether a leader's proposals are synced apart from the lock and counted toward a commit
    /// only once synced (see `own_sync.rs`).
    own_entries_synced_apart: bool,
    /// As leader: reads may be served locally until this time (see `lease.rs`).
    lease_until: Option<Instant>,
    /// As follower: the chunks of a snapshot received so far (see `snapshot.rs`).
    incoming_snapshot: Option<snapshot::IncomingSnapshot>,
}

impl RaftCore {
    /// A follower restored from `state` at time `now`, with every volatile field at its initial
    /// value and an election deadline drawn from `config`'s seed; this node and every one of
    /// its peers vote until the log says otherwise.
    pub fn new(
        id: NodeId,
        peers: Vec<NodeId>,
        state: PersistentState,
        config: Config,
        now: Instant,
    ) -> RaftCore {
        let everyone = Membership::of_voters(peers.iter().copied().chain([id]));
        RaftCore::with_membership(id, peers, everyone, state, config, now)
    }

    /// [`RaftCore::new`] for a cluster that starts in `bootstrap` (the configuration before
    /// the first entry, the same on every node: only nodes among `peers` and this one).
    pub fn with_membership(
        id: NodeId,
        peers: Vec<NodeId>,
        bootstrap: Membership,
        state: PersistentState,
        config: Config,
        now: Instant,
    ) -> RaftCore {
        assert!(!peers.contains(&id), "{id} is listed among its own peers");
        assert!(
            config.max_entries_per_append > 0 && config.max_bytes_per_append > 0,
            "max_entries_per_append and max_bytes_per_append must be positive"
        );
        let mut unique = peers.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), peers.len(), "duplicate peer ids in {peers:?}");
        assert!(
            bootstrap
                .members()
                .all(|member| member == id || unique.contains(&member)),
            "{bootstrap} names a node that is not among {id}'s peers {unique:?}"
        );
        let timers = Timers::new(&config, now);
        // What a snapshot covers was committed before it was taken.
        let commit_index = state.log.snapshot_index();
        RaftCore {
            id,
            bootstrap,
            peers: unique,
            state,
            role: RoleState::Follower,
            commit_index,
            leader_hint: None,
            config,
            timers,
            own_entries_unsaved: false,
            own_entries_synced_apart: false,
            lease_until: None,
            incoming_snapshot: None,
        }
    }

    /// This node.
    pub fn id(&self) -> NodeId {
        self.id
    }
    /// The other nodes, sorted.
    pub fn peers(&self) -> &[NodeId] {
        &self.peers
    }
    /// The current term.
    pub fn term(&self) -> Term {
        self.state.current_term
    }
    /// The current role.
    pub fn role(&self) -> Role {
        match self.role {
            RoleState::Follower => Role::Follower,
            RoleState::Candidate { pre_vote: true, .. } => Role::PreCandidate,
            RoleState::Candidate { .. } => Role::Candidate,
            RoleState::Leader(_) => Role::Leader,
        }
    }
    /// The highest index known to be committed.
    pub fn commit_index(&self) -> LogIndex {
        self.commit_index
    }
    /// The state that must be persisted.
    pub fn persistent(&self) -> &PersistentState {
        &self.state
    }
    /// Whether `mutation` is switched on.
    pub fn has(&self, mutation: Mutation) -> bool {
        self.config.mutations.has(mutation)
    }
    /// The leader's progress for `peer` (None unless leader).
    pub fn progress(&self, peer: NodeId) -> Option<Progress> {
        self.leader()
            .and_then(|leader| leader.progress.get(&peer).copied())
    }
    /// The cluster's majority arithmetic, under the configuration in force.
    pub fn quorum(&self) -> Quorum {
        let membership = self.membership();
        let mut quorum = Quorum::of_voters(membership.voters());
        if self.has(Mutation::HalfIsMajority) {
            quorum = quorum.with_half_as_majority();
        }
        if self.has(Mutation::LearnerCounted) {
            quorum = quorum.also_counting(membership.learners().iter().copied());
        }
        if self.has(Mutation::RemovedVotesCounted) {
            let removed = (self.peers.iter().copied()).filter(|&peer| !membership.contains(peer));
            quorum = quorum.also_counting(removed);
        }
        quorum
    }

    fn leader(&self) -> Option<&LeaderState> {
        match &self.role {
            RoleState::Leader(leader) => Some(leader),
            _ => None,
        }
    }

    /// Adopts `term` (if newer) at `now` and becomes a follower, reporting what changed. A
    /// leader's pending reads fail, and its election timer starts afresh (as etcd's does): its
    /// deadline passed long ago, and campaigning at once would race the node whose term deposed
    /// it.
    fn become_follower(&mut self, term: Term, now: Instant, effects: &mut Effects) {
        assert!(
            term >= self.state.current_term,
            "term would go back from {} to {term}",
            self.term()
        );
        let term_changed = term > self.state.current_term;
        if term_changed {
            self.state.current_term = term;
            self.state.voted_for = None;
            self.leader_hint = None;
            effects.push(Effect::Persist);
        }
        let was_leader = matches!(self.role, RoleState::Leader(_));
        if let RoleState::Leader(leader) = &mut self.role {
            let failed = leader.reads.fail_all(ReadIndexError::NotConfirmed);
            if !failed.is_empty() {
                crate::coverage::reached(crate::coverage::Point::ReadsFailedOnStepDown);
                effects.push(Effect::ReadsDone(failed));
            }
        }
        if term_changed || self.role != RoleState::Follower {
            self.role = RoleState::Follower;
            self.timers.lost_leadership();
            if !self.has(Mutation::LeaseKeptAfterStepDown) {
                self.lease_until = None;
            }
            if was_leader {
                self.reset_election_timer(now, effects);
            }
            effects.push(Effect::RoleChanged(Role::Follower));
        }
    }

    /// Appends `command` if leader; returns its index and term, and what to do. The new entry is
    /// written before any follower receives it (see [`RaftCore::next_request`]); a node whose
    /// own copy is a majority commits it at once, so it is written now. A command over
    /// [`crate::persist::MAX_COMMAND_BYTES`] is refused whatever the role.
    pub fn propose(&mut self, command: Command) -> Result<(LogIndex, Term, Effects), ProposeError> {
        let limit = crate::persist::MAX_COMMAND_BYTES;
        if command.0.len() > limit {
            return Err(ProposeError::TooLarge {
                bytes: command.0.len(),
                limit,
            });
        }
        if crate::membership::is_membership(&command) {
            return Err(ProposeError::Reserved);
        }
        self.append_own(command)
    }

    /// Appends `command` as leader (see [`RaftCore::propose`]).
    /// While it hands leadership over, a leader refuses as if it did not lead, naming the
    /// target (see `transfer.rs`).
    fn append_own(&mut self, command: Command) -> Result<(LogIndex, Term, Effects), ProposeError> {
        if let Some(refused) = self.refusal_as_leader() {
            return Err(ProposeError::NotLeader(refused));
        }
        let term = self.term();
        let index = self.state.log.append(crate::Entry { term, command });
        let mut effects = Effects::default();
        effects.push(Effect::LogChanged {
            truncated_from: None,
            appended_from: Some(index),
        });
        if self.peers.is_empty() || self.quorum().counts([self.id]) {
            // Its own copy is a majority (a node alone, or the only voter among learners): it
            // commits at once, so it is written now.
            effects.push(Effect::Persist);
        } else {
            self.own_entries_unsaved = true;
            self.own_entry_unsynced(index);
        }
        effects.push(Effect::WakePeers);
        self.advance_commit(&mut effects);
        Ok((index, term, effects))
    }

    /// Handles a request from another node at time `now`; the last effect is the reply. A
    /// request whose term is above [`Term::HIGHEST`] is refused and changes nothing
    /// ([`crate::well_formed`]).
    pub fn handle_request(&mut self, now: Instant, request: &Request) -> Effects {
        if request.term() > Term::HIGHEST {
            let mut effects = Effects::default();
            effects.push(Effect::Reply(crate::well_formed::refusal(
                request,
                self.term(),
            )));
            return effects;
        }
        match request {
            Request::RequestVote(args) => self.handle_request_vote(now, args),
            Request::AppendEntries(args) => self.handle_append_entries(now, args),
            Request::InstallSnapshot(args) => self.handle_install_snapshot(now, args),
            Request::TimeoutNow(args) => self.handle_timeout_now(now, args),
        }
    }

    /// Handles the outcome of a request sent to `peer`: its response, or `None` if none came.
    /// A response whose term is above [`Term::HIGHEST`] counts as none.
    pub fn handle_response(
        &mut self,
        now: Instant,
        peer: NodeId,
        request: &Request,
        response: Option<&Response>,
    ) -> Effects {
        let response = response.filter(|response| response.term() <= Term::HIGHEST);
        match (request, response) {
            (Request::RequestVote(args), None) => {
                self.vote_request_lost(peer, args);
                Effects::default()
            }
            (
                Request::AppendEntries(_) | Request::InstallSnapshot(_) | Request::TimeoutNow(_),
                None,
            ) => Effects::default(),
            (Request::RequestVote(args), Some(Response::RequestVote(reply))) => {
                self.handle_vote_reply(now, peer, args, reply)
            }
            (Request::AppendEntries(args), Some(Response::AppendEntries(reply))) => {
                self.handle_append_reply(now, peer, args, reply)
            }
            (Request::InstallSnapshot(args), Some(Response::InstallSnapshot(reply))) => {
                self.handle_install_snapshot_reply(now, peer, args, reply)
            }
            (Request::TimeoutNow(_), Some(Response::TimeoutNow(reply))) => {
                // The target's election speaks for itself; a newer term deposes this node.
                let mut effects = Effects::default();
                if reply.term > self.term() {
                    self.become_follower(reply.term, now, &mut effects);
                }
                effects
            }
            (request, Some(response)) => {
                panic!("response {response:?} does not answer request {request:?}")
            }
        }
    }

    /// Local invariants that hold after every call on a correct node.
    pub fn check_invariants(&self) -> Result<(), String> {
        let last = self.state.log.last_index();
        if self.commit_index > last {
            return Err(format!(
                "{}: commit index {} beyond last log index {last}",
                self.id, self.commit_index
            ));
        }
        if self.commit_index < self.state.log.snapshot_index() {
            return Err(format!(
                "{}: commit index {} behind the snapshot's last index {}",
                self.id,
                self.commit_index,
                self.state.log.snapshot_index()
            ));
        }
        if let RoleState::Leader(_) = self.role {
            if self.state.voted_for != Some(self.id) {
                return Err(format!(
                    "{}: leader of {} did not vote for itself",
                    self.id,
                    self.term()
                ));
            }
        }
        Ok(())
    }
}
