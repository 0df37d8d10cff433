//! Leader election: pre-vote (thesis §9.6), starting an election, granting votes with the
//! up-to-date check (Raft §5.2, §5.4.1) and the lease (thesis §4.2.3), counting them, and
//! becoming leader.

use super::read_index::ReadRounds;
use super::{Effect, Effects, LeaderState, Progress, RaftCore, RoleState};
use crate::coverage::{reached, sometimes, Point};
use crate::messages::{RequestVoteArgs, RequestVoteReply, Response};
use crate::mutation::Mutation;
use crate::observer::Role;
use crate::{LogIndex, NodeId};
use std::collections::{BTreeMap, BTreeSet};
use threadsim::Instant;

impl RaftCore {
    /// The election timeout fired at `now`: ask the peers whether they would vote for this node
    /// in the next term (pre-vote) before changing anything. Only a majority of yes starts the
    /// election. Checked continuously: an election whose deadline had not passed (a heartbeat
    /// pushed it forward) is a check-then-act race in the caller.
    pub fn start_pre_vote(&mut self, now: Instant) -> Effects {
        assert!(
            !matches!(self.role, RoleState::Leader(_)),
            "{}: a leader does not start elections",
            self.id
        );
        let mut effects = Effects::default();
        if now < self.timers.election_deadline {
            effects.push(Effect::InvariantViolated(format!(
                "{}: election started at {now} although a heartbeat had pushed the deadline to {}",
                self.id, self.timers.election_deadline
            )));
        }
        effects.extend(self.start_pre_vote_unchecked(now));
        effects
    }

    /// [`RaftCore::start_pre_vote`] without the deadline check, for the broken lockstep ticker,
    /// whose elections ignore the randomized deadline by design.
    pub(crate) fn start_pre_vote_unchecked(&mut self, now: Instant) -> Effects {
        assert!(
            !matches!(self.role, RoleState::Leader(_)),
            "{}: a leader does not start elections",
            self.id
        );
        if self.has(Mutation::NoPreVote) {
            return self.start_election(now);
        }
        let mut effects = Effects::default();
        self.leader_hint = None;
        self.role = RoleState::Candidate {
            votes: BTreeSet::from([self.id]),
            requested: BTreeSet::new(),
            pre_vote: true,
            transfer: false,
        };
        self.reset_election_timer(now, &mut effects);
        effects.push(Effect::RoleChanged(Role::PreCandidate));
        if self.quorum().counts([self.id]) {
            effects.extend(self.start_election(now));
        } else {
            effects.push(Effect::WakePeers);
        }
        effects
    }

    /// Becomes a candidate in the next term and votes for itself.
    pub fn start_election(&mut self, now: Instant) -> Effects {
        self.start_election_as(now, false)
    }

    /// [`RaftCore::start_election`], for a leader's transfer if `transfer` (its vote requests
    /// say so, and voters do not refuse them for the leader's lease).
    pub(super) fn start_election_as(&mut self, now: Instant, transfer: bool) -> Effects {
        assert!(
            !matches!(self.role, RoleState::Leader(_)),
            "{}: a leader does not start elections",
            self.id
        );
        self.state.current_term = self.term().next();
        self.state.voted_for = Some(self.id);
        self.leader_hint = None;
        self.role = RoleState::Candidate {
            votes: BTreeSet::from([self.id]),
            requested: BTreeSet::new(),
            pre_vote: false,
            transfer,
        };
        let mut effects = Effects::default();
        effects.push(Effect::Persist);
        self.reset_election_timer(now, &mut effects);
        effects.push(Effect::RoleChanged(Role::Candidate));
        if self.quorum().counts([self.id]) {
            self.become_leader(now, &mut effects);
        } else {
            effects.push(Effect::WakePeers);
        }
        effects
    }

    /// A vote request for `peer` (once per peer per candidacy), if this node is a candidate.
    pub(super) fn next_vote_request(&mut self, peer: NodeId) -> Option<RequestVoteArgs> {
        let RoleState::Candidate { requested, .. } = &mut self.role else {
            return None;
        };
        requested.insert(peer).then(|| self.vote_request())
    }

    fn vote_request(&self) -> RequestVoteArgs {
        let pre_vote = matches!(self.role, RoleState::Candidate { pre_vote: true, .. });
        let transfer = matches!(self.role, RoleState::Candidate { transfer: true, .. });
        RequestVoteArgs {
            transfer,
            pre_vote,
            term: if pre_vote {
                self.term().next()
            } else {
                self.term()
            },
            candidate: self.id,
            last_log_index: self.state.log.last_index(),
            last_log_term: self.state.log.last_term(),
        }
    }

    /// A vote request to `peer` got no answer: it may be asked again in this candidacy.
    pub(super) fn vote_request_lost(&mut self, peer: NodeId, args: &RequestVoteArgs) {
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
    }

    /// Whether a candidate whose last entry is `args` is at least as up to date as this log.
    fn candidate_up_to_date(&self, args: &RequestVoteArgs) -> bool {
        let log = &self.state.log;
        let up_to_date =
            (args.last_log_term, args.last_log_index) >= (log.last_term(), log.last_index());
        up_to_date || self.has(Mutation::VoteWithoutUpToDateCheck)
    }

    pub(super) fn handle_request_vote(&mut self, now: Instant, args: &RequestVoteArgs) -> Effects {
        let mut effects = Effects::default();
        let reply = |core: &RaftCore, granted| {
            Effect::Reply(Response::RequestVote(RequestVoteReply {
                term: core.term(),
                vote_granted: granted,
            }))
        };
        if args.pre_vote {
            // Would this node vote for the candidate in `args.term`? Nothing changes here.
            let leased = self.within_lease(now) && !self.has(Mutation::PreVoteIgnoresLease);
            let grant = args.term > self.term() && !leased && self.candidate_up_to_date(args);
            sometimes(
                args.term > self.term() && leased,
                Point::PreVoteRefusedByLease,
            );
            effects.push(reply(self, grant));
            return effects;
        }
        if args.term > self.term() && self.within_lease(now) && !args.transfer {
            // Heard from a current leader less than a minimum election timeout ago: refuse
            // without adopting the term.
            reached(Point::VoteRefusedByLease);
            effects.push(reply(self, false));
            return effects;
        }
        if args.term > self.term() {
            self.become_follower(args.term, now, &mut effects);
        }
        let free_to_vote = self
            .state
            .voted_for
            .is_none_or(|voted| voted == args.candidate);
        let up_to_date = self.candidate_up_to_date(args);
        let grant = args.term == self.term() && free_to_vote && up_to_date;
        if args.term == self.term() {
            sometimes(!free_to_vote, Point::VoteRefusedAlreadyVoted);
            sometimes(free_to_vote && !up_to_date, Point::VoteRefusedLogBehind);
        }
        if grant {
            if self.state.voted_for != Some(args.candidate) {
                self.state.voted_for = Some(args.candidate);
                effects.push(Effect::Persist);
            }
            self.reset_election_timer(now, &mut effects);
        }
        effects.push(reply(self, grant));
        effects
    }

    pub(super) fn handle_vote_reply(
        &mut self,
        now: Instant,
        peer: NodeId,
        args: &RequestVoteArgs,
        reply: &RequestVoteReply,
    ) -> Effects {
        let mut effects = Effects::default();
        if reply.term > self.term() {
            reached(Point::CandidateDeposedByReply);
            self.become_follower(reply.term, now, &mut effects);
            return effects;
        }
        let asked_for = if args.pre_vote {
            self.term().next()
        } else {
            self.term()
        };
        if args.term != asked_for || !reply.vote_granted {
            return effects;
        }
        let quorum = self.quorum();
        let won = match &mut self.role {
            RoleState::Candidate {
                votes, pre_vote, ..
            } if *pre_vote == args.pre_vote => {
                votes.insert(peer);
                quorum.counts(votes.iter().copied())
            }
            _ => false,
        };
        if won && args.pre_vote {
            reached(Point::PreVoteWon);
            effects.extend(self.start_election(now));
        } else if won {
            self.become_leader(now, &mut effects);
        }
        effects
    }

    /// Becomes leader at `now`: every follower's next index is just past this log, a heartbeat
    /// to each is due at once, and the new leader gets one quorum timeout to hear from a majority.
    fn become_leader(&mut self, now: Instant, effects: &mut Effects) {
        let dropped = if self.has(Mutation::LeaderDropsUncommittedTail) {
            let commit_index = self.commit_index;
            crate::broken::leader_drops_uncommitted_tail::drop_tail(
                &mut self.state.log,
                commit_index,
            )
        } else {
            Effects::default()
        };
        sometimes(
            self.state.log.last_index() > self.commit_index,
            Point::NewLeaderWithUncommittedTail,
        );
        let next_index = self.state.log.last_index().next();
        let progress = Progress {
            next_index,
            match_index: LogIndex(0),
            snapshot_sent: None,
        };
        self.role = RoleState::Leader(Box::new(LeaderState {
            progress: each_peer(&self.peers, progress),
            heartbeat_due: each_peer(&self.peers, now),
            answered_at: each_peer(&self.peers, now),
            reads: ReadRounds::default(),
            lease_acks: BTreeMap::new(),
            own_unsynced_from: None,
            transfer: None,
            lease_given_up: false,
        }));
        self.leader_hint = Some(self.id);
        self.heard_from_leader(now);
        effects.push(Effect::RoleChanged(Role::Leader));
        effects.extend(dropped);
        effects.push(Effect::WakePeers);
        self.advance_commit(effects);
    }

    /// A leader that no longer hears from a majority steps down (check-quorum), so a leader cut
    /// off from its followers stops accepting commands it can never commit.
    pub fn step_down(&mut self, now: Instant) -> Effects {
        let mut effects = Effects::default();
        let term = self.term();
        self.become_follower(term, now, &mut effects);
        effects
    }
}

/// `value` for every one of `peers`.
fn each_peer<T: Copy>(peers: &[NodeId], value: T) -> BTreeMap<NodeId, T> {
    peers.iter().map(|&peer| (peer, value)).collect()
}
