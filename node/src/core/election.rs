//! Leader election: starting an election, granting votes, counting them (Raft §5.2, §5.4.1).

use super::{Effect, Effects, RaftCore, RoleState};
use crate::messages::{RequestVoteArgs, RequestVoteReply, Response};
use crate::mutation::Mutation;
use crate::observer::Role;
use crate::NodeId;
use std::collections::{BTreeMap, BTreeSet};

impl RaftCore {
    /// The election timeout fired: ask the peers whether they would vote for this node in the
    /// next term (pre-vote) before changing anything. Only a majority of yes starts the election.
    pub fn start_pre_vote(&mut self) -> Effects {
        assert!(
            !matches!(self.role, RoleState::Leader { .. }),
            "{}: a leader does not start elections",
            self.id
        );
        self.leader_hint = None;
        self.role = RoleState::Candidate {
            votes: BTreeSet::from([self.id]),
            requested: BTreeSet::new(),
            pre_vote: true,
        };
        let mut effects = Effects::default();
        effects.push(Effect::ResetElectionTimer);
        effects.push(Effect::RoleChanged(Role::PreCandidate));
        if self.is_majority(1) {
            for effect in self.start_election().into_vec() {
                effects.push(effect);
            }
        } else {
            effects.push(Effect::WakePeers);
        }
        effects
    }

    /// Becomes a candidate in the next term and votes for itself.
    pub fn start_election(&mut self) -> Effects {
        assert!(
            !matches!(self.role, RoleState::Leader { .. }),
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
        };
        let mut effects = Effects::default();
        effects.push(Effect::Persist);
        effects.push(Effect::ResetElectionTimer);
        effects.push(Effect::RoleChanged(Role::Candidate));
        if self.is_majority(1) {
            self.become_leader(&mut effects);
        } else {
            effects.push(Effect::WakePeers);
        }
        effects
    }

    /// Refuses a vote request without adopting its term, because this node heard from a current
    /// leader less than a minimum election timeout ago (Raft thesis §4.2.3): a server cut off
    /// from the leader cannot disrupt a working cluster by bumping terms.
    pub fn refuse_vote_within_lease(&self) -> Effects {
        let mut effects = Effects::default();
        effects.push(Effect::Reply(Response::RequestVote(RequestVoteReply {
            term: self.term(),
            vote_granted: false,
        })));
        effects
    }

    /// A leader that no longer hears from a majority steps down (check-quorum), so a leader cut
    /// off from its followers stops accepting commands it can never commit.
    pub fn step_down(&mut self) -> Effects {
        let mut effects = Effects::default();
        let term = self.term();
        self.become_follower(term, &mut effects);
        effects
    }

    pub(super) fn vote_request(&self) -> RequestVoteArgs {
        let pre_vote = matches!(self.role, RoleState::Candidate { pre_vote: true, .. });
        RequestVoteArgs {
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

    pub(super) fn handle_request_vote(&mut self, args: &RequestVoteArgs) -> Effects {
        let mut effects = Effects::default();
        if args.pre_vote {
            // Would this node vote for the candidate in `args.term`? Nothing changes here.
            let log = &self.state.log;
            let up_to_date =
                (args.last_log_term, args.last_log_index) >= (log.last_term(), log.last_index());
            let grant = args.term > self.term()
                && (up_to_date || self.has(Mutation::VoteWithoutUpToDateCheck));
            effects.push(Effect::Reply(Response::RequestVote(RequestVoteReply {
                term: self.term(),
                vote_granted: grant,
            })));
            return effects;
        }
        if args.term > self.term() {
            self.become_follower(args.term, &mut effects);
        }
        let log = &self.state.log;
        let up_to_date =
            (args.last_log_term, args.last_log_index) >= (log.last_term(), log.last_index());
        let free_to_vote = self
            .state
            .voted_for
            .is_none_or(|voted| voted == args.candidate);
        let grant = args.term == self.term()
            && free_to_vote
            && (up_to_date || self.has(Mutation::VoteWithoutUpToDateCheck));
        if grant {
            if self.state.voted_for != Some(args.candidate) {
                self.state.voted_for = Some(args.candidate);
                effects.push(Effect::Persist);
            }
            effects.push(Effect::ResetElectionTimer);
        }
        effects.push(Effect::Reply(Response::RequestVote(RequestVoteReply {
            term: self.term(),
            vote_granted: grant,
        })));
        effects
    }

    pub(super) fn handle_vote_reply(
        &mut self,
        peer: NodeId,
        args: &RequestVoteArgs,
        reply: &RequestVoteReply,
    ) -> Effects {
        let mut effects = Effects::default();
        if reply.term > self.term() {
            self.become_follower(reply.term, &mut effects);
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
        let won = match &mut self.role {
            RoleState::Candidate {
                votes, pre_vote, ..
            } if *pre_vote == args.pre_vote => {
                votes.insert(peer);
                let count = votes.len();
                self.is_majority(count)
            }
            _ => false,
        };
        if won && args.pre_vote {
            for effect in self.start_election().into_vec() {
                effects.push(effect);
            }
        } else if won {
            self.become_leader(&mut effects);
        }
        effects
    }

    fn become_leader(&mut self, effects: &mut Effects) {
        let next_index = self.state.log.last_index().next();
        let progress = self
            .peers
            .iter()
            .map(|&peer| {
                (
                    peer,
                    super::Progress {
                        next_index,
                        match_index: crate::LogIndex(0),
                    },
                )
            })
            .collect::<BTreeMap<_, _>>();
        self.role = RoleState::Leader { progress };
        self.leader_hint = Some(self.id);
        effects.push(Effect::RoleChanged(Role::Leader));
        effects.push(Effect::WakePeers);
        self.advance_commit(effects);
    }
}
