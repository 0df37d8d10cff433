//! The Raft rules as plain functions over plain state.
//!
//! [`RaftCore`] holds no locks, spawns no threads and never reads a clock. Each handler changes the
//! state and returns the [`Effect`]s the shell must carry out, **in order**: persist before the
//! reply or send that depends on the persisted state, reset the election timer, wake the peer
//! workers, advance the commit index. The unit tests in `tests.rs` assert those lists.

mod election;
mod replication;
#[cfg(test)]
mod tests;

use crate::messages::{Request, Response};
use crate::mutation::{Mutation, MutationSet};
use crate::observer::Role;
use crate::persist::PersistentState;
use crate::{Command, LogIndex, NodeId, Term};
use std::collections::{BTreeMap, BTreeSet};

/// Something the shell must do after a handler returns, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Write current term, vote and log to stable storage before anything that follows.
    Persist,
    /// Draw a new randomized election deadline.
    ResetElectionTimer,
    /// The node's role or term changed.
    RoleChanged(Role),
    /// Peer workers have something to send (vote requests, new entries, heartbeats of a new leader).
    WakePeers,
    /// The commit index advanced to this index; the applier has work.
    CommitAdvanced(LogIndex),
    /// A local invariant broke (reachable only with a mutation on).
    InvariantViolated(String),
    /// The reply to the request being handled. Always last.
    Reply(Response),
}

/// The effects of one handler call, with `Persist` recorded at most once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects(Vec<Effect>);

impl Effects {
    fn push(&mut self, effect: Effect) {
        if effect == Effect::Persist && self.0.contains(&Effect::Persist) {
            return;
        }
        if let Some(Effect::Reply(_)) = self.0.last() {
            panic!("effect {effect:?} after the reply");
        }
        self.0.push(effect);
    }

    /// The effects in the order they must happen.
    pub fn into_vec(self) -> Vec<Effect> {
        self.0
    }

    /// The effects in the order they must happen.
    pub fn as_slice(&self) -> &[Effect] {
        &self.0
    }

    /// These effects without the persist (for a caller that writes later, before anything
    /// depends on the write).
    pub fn without_persist(self) -> Effects {
        Effects(
            self.0
                .into_iter()
                .filter(|e| *e != Effect::Persist)
                .collect(),
        )
    }
}

/// A leader's view of one follower's log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The next index to send.
    pub next_index: LogIndex,
    /// The highest index known to be replicated on the follower.
    pub match_index: LogIndex,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum RoleState {
    Follower,
    Candidate {
        votes: BTreeSet<NodeId>,
        requested: BTreeSet<NodeId>,
        /// Collecting pre-votes for `term + 1` rather than votes for `term`.
        pre_vote: bool,
    },
    Leader {
        progress: BTreeMap<NodeId, Progress>,
    },
}

/// `start` was called on a node that does not believe it is leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not leader (last known leader: {leader_hint:?})")]
pub struct NotLeader {
    /// The leader this node last heard from in its current term, if any.
    pub leader_hint: Option<NodeId>,
}

/// The protocol state of one node, and the Raft rules.
#[derive(Clone, Debug)]
pub struct RaftCore {
    id: NodeId,
    peers: Vec<NodeId>,
    state: PersistentState,
    role: RoleState,
    commit_index: LogIndex,
    leader_hint: Option<NodeId>,
    mutations: MutationSet,
    max_entries_per_append: usize,
}

impl RaftCore {
    /// A follower restored from `state`, with every volatile field at its initial value.
    pub fn new(
        id: NodeId,
        peers: Vec<NodeId>,
        state: PersistentState,
        mutations: MutationSet,
        max_entries_per_append: usize,
    ) -> RaftCore {
        assert!(!peers.contains(&id), "{id} is listed among its own peers");
        assert!(
            max_entries_per_append > 0,
            "max_entries_per_append must be positive"
        );
        let mut unique = peers.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), peers.len(), "duplicate peer ids in {peers:?}");
        RaftCore {
            id,
            peers: unique,
            state,
            role: RoleState::Follower,
            commit_index: LogIndex(0),
            leader_hint: None,
            mutations,
            max_entries_per_append,
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
            RoleState::Leader { .. } => Role::Leader,
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
    /// The leader this node last heard from in its current term.
    pub fn leader_hint(&self) -> Option<NodeId> {
        self.leader_hint
    }
    /// Whether `mutation` is switched on.
    pub fn has(&self, mutation: Mutation) -> bool {
        self.mutations.has(mutation)
    }
    /// The leader's progress for `peer` (None unless leader).
    pub fn progress(&self, peer: NodeId) -> Option<Progress> {
        match &self.role {
            RoleState::Leader { progress } => progress.get(&peer).copied(),
            _ => None,
        }
    }

    fn cluster_size(&self) -> usize {
        self.peers.len() + 1
    }

    fn is_majority(&self, count: usize) -> bool {
        2 * count > self.cluster_size()
    }

    /// Adopts `term` (if newer) and becomes a follower, reporting what changed.
    fn become_follower(&mut self, term: Term, effects: &mut Effects) {
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
        if term_changed || self.role != RoleState::Follower {
            self.role = RoleState::Follower;
            effects.push(Effect::RoleChanged(Role::Follower));
        }
    }

    /// Appends `command` if leader; returns its index and term, and what to do.
    pub fn propose(&mut self, command: Command) -> Result<(LogIndex, Term, Effects), NotLeader> {
        if !matches!(self.role, RoleState::Leader { .. }) {
            return Err(NotLeader {
                leader_hint: self.leader_hint,
            });
        }
        let term = self.term();
        let index = self.state.log.append(crate::Entry { term, command });
        let mut effects = Effects::default();
        effects.push(Effect::Persist);
        effects.push(Effect::WakePeers);
        self.advance_commit(&mut effects);
        Ok((index, term, effects))
    }

    /// Handles a request from another node; the last effect is the reply.
    pub fn handle_request(&mut self, request: &Request) -> Effects {
        match request {
            Request::RequestVote(args) => self.handle_request_vote(args),
            Request::AppendEntries(args) => self.handle_append_entries(args),
        }
    }

    /// What the replicator for `peer` should send now, if anything: a vote request (once per
    /// peer per candidacy) or AppendEntries carrying entries `peer` lacks. Heartbeats come from
    /// [`RaftCore::heartbeat_request`].
    pub fn next_request(&mut self, peer: NodeId) -> Option<Request> {
        assert!(
            self.peers.contains(&peer),
            "{peer} is not a peer of {}",
            self.id
        );
        match &mut self.role {
            RoleState::Follower => None,
            RoleState::Candidate { requested, .. } => requested
                .insert(peer)
                .then(|| Request::RequestVote(self.vote_request())),
            RoleState::Leader { progress } => {
                let next_index = progress[&peer].next_index;
                let has_entries = next_index <= self.state.log.last_index();
                has_entries.then(|| {
                    Request::AppendEntries(
                        self.append_request(next_index, self.max_entries_per_append),
                    )
                })
            }
        }
    }

    /// A heartbeat for `peer` if this node leads: an AppendEntries with no entries that carries
    /// the commit index and checks the follower's log at `next_index - 1`.
    pub fn heartbeat_request(&self, peer: NodeId) -> Option<Request> {
        match &self.role {
            RoleState::Leader { progress } => {
                let next_index = progress
                    .get(&peer)
                    .expect("progress for every peer")
                    .next_index;
                Some(Request::AppendEntries(self.append_request(next_index, 0)))
            }
            _ => None,
        }
    }

    /// Handles the outcome of a request sent to `peer`: its response, or `None` if none came.
    pub fn handle_response(
        &mut self,
        peer: NodeId,
        request: &Request,
        response: Option<&Response>,
    ) -> Effects {
        match (request, response) {
            (Request::RequestVote(args), None) => {
                let current = self.state.current_term;
                if let RoleState::Candidate {
                    requested,
                    pre_vote,
                    ..
                } = &mut self.role
                {
                    let asked_for = if *pre_vote { current.next() } else { current };
                    if args.pre_vote == *pre_vote && args.term == asked_for {
                        requested.remove(&peer);
                    }
                }
                Effects::default()
            }
            (Request::AppendEntries(_), None) => Effects::default(),
            (Request::RequestVote(args), Some(Response::RequestVote(reply))) => {
                self.handle_vote_reply(peer, args, reply)
            }
            (Request::AppendEntries(args), Some(Response::AppendEntries(reply))) => {
                self.handle_append_reply(peer, args, reply)
            }
            (request, Some(response)) => {
                panic!("response {response:?} does not answer request {request:?}")
            }
        }
    }

    /// Local invariants that hold after every handler on a correct node.
    pub fn check_invariants(&self) -> Result<(), String> {
        let last = self.state.log.last_index();
        if self.commit_index > last {
            return Err(format!(
                "{}: commit index {} beyond last log index {last}",
                self.id, self.commit_index
            ));
        }
        if let RoleState::Leader { .. } = self.role {
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
