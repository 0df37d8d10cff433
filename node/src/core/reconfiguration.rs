//! Changing the configuration, one server at a time (Raft thesis §4.1-4.3, with the rule found
//! after it): which configuration is in force, which changes a leader takes, and what a node
//! outside the voters does not do (campaign, or keep leading once its removal is committed).

use super::{Effects, NotLeader, RaftCore};
use crate::membership::{InvalidChange, Membership, MembershipChange};
use crate::mutation::Mutation;
use crate::{LogIndex, NodeId, Term};
use threadsim::Instant;

/// Why a leader refused a change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChangeRefused {
    /// This node does not lead.
    #[error(transparent)]
    NotLeader(#[from] NotLeader),
    /// An entry of the leader's own term is not committed yet: a change now could be
    /// overwritten by a leader of an earlier configuration (raft-dev, 2015). Try again shortly.
    #[error("no entry of this leader's term is committed yet")]
    NoCommitInTerm,
    /// A change is already in flight: its entry at this index is not committed.
    #[error("the change at {0} is not committed yet")]
    ChangeInFlight(LogIndex),
    /// The change makes no sense for the current configuration.
    #[error(transparent)]
    Invalid(#[from] InvalidChange),
    /// The node is not one this cluster may have (not among the nodes every node knows).
    #[error("{0} is not a node of this cluster")]
    UnknownNode(NodeId),
    /// The learner to promote does not hold every committed entry yet: as a voter it would
    /// hold back commits until it caught up. Try again once it has.
    #[error("{node} has not caught up: it holds up to {matched}, and {commit} is committed")]
    NotCaughtUp {
        /// The learner.
        node: NodeId,
        /// The last index it is known to hold.
        matched: LogIndex,
        /// The leader's commit index.
        commit: LogIndex,
    },
}

impl RaftCore {
    /// The configuration in force: the latest in the log, committed or not; else the one the
    /// snapshot covers; else the bootstrap one.
    pub fn membership(&self) -> Membership {
        match self.state.log.last_configuration() {
            Some((index, entry)) => decode(index, &entry.command),
            None => self.snapshot_membership(),
        }
    }

    /// The configuration in force at `index` (at most the log's last index): the latest at or
    /// before it.
    pub fn membership_at(&self, index: LogIndex) -> Membership {
        match self.state.log.last_configuration_at(index) {
            Some((at, entry)) => decode(at, &entry.command),
            None => self.snapshot_membership(),
        }
    }

    /// The configuration the log's compacted prefix ends in.
    fn snapshot_membership(&self) -> Membership {
        if self.state.snapshot.is_empty() {
            return self.bootstrap.clone();
        }
        Membership::unwrap_snapshot(&self.state.snapshot)
            .expect("a snapshot the node stored carries its configuration")
            .0
    }

    /// Whether this node votes in the configuration in force.
    pub fn is_voter(&self) -> bool {
        self.membership().is_voter(self.id)
    }

    /// Whether this node starts elections: a voter does, and so does a node that voted in the
    /// configuration before an uncommitted change that took its vote away (thesis §4.2.2: it
    /// may still be needed until that change commits; were it not to campaign, a two-voter
    /// cluster whose leader demoted itself and crashed before the other voter heard would
    /// stay without a leader for good). It then needs a majority of the new voters.
    pub fn may_campaign(&self) -> bool {
        if self.is_voter() {
            return true;
        }
        match self.state.log.last_configuration() {
            Some((index, _)) if index > self.commit_index => {
                self.membership_at(index.prev()).is_voter(self.id)
            }
            _ => false,
        }
    }

    /// As leader, appends the configuration `change` makes of the one in force. Refused unless
    /// an entry of this leader's term is committed (else a leader of an earlier configuration
    /// could still overwrite it: the bug found after the dissertation), and while an earlier
    /// change is uncommitted (single-server changes are safe one at a time). The new
    /// configuration is in force as soon as it is appended.
    pub fn change_membership(
        &mut self,
        change: MembershipChange,
    ) -> Result<(LogIndex, Term, Effects), ChangeRefused> {
        if let Some(refused) = self.refusal_as_leader() {
            return Err(ChangeRefused::NotLeader(refused));
        }
        let node = match change {
            MembershipChange::AddLearner(node)
            | MembershipChange::Promote(node)
            | MembershipChange::Demote(node)
            | MembershipChange::Remove(node) => node,
        };
        if node != self.id && !self.peers.contains(&node) {
            return Err(ChangeRefused::UnknownNode(node));
        }
        let own_term_committed = self.state.log.term_at(self.commit_index) == Some(self.term());
        if !own_term_committed && !self.has(Mutation::ChangeBeforeOwnTermCommit) {
            return Err(ChangeRefused::NoCommitInTerm);
        }
        if let Some((index, _)) = self.state.log.last_configuration() {
            if index > self.commit_index && !self.has(Mutation::TwoChangesInFlight) {
                return Err(ChangeRefused::ChangeInFlight(index));
            }
        }
        if let MembershipChange::Promote(learner) = change {
            self.refuse_unless_caught_up(learner)?;
        }
        let next = self.membership().after(change)?;
        Ok(self
            .append_own(next.encode())
            .expect("a leader appends its own configuration"))
    }

    /// As leader, refuses to promote `learner` while it lacks a committed entry (etcd refuses
    /// a learner that is not ready in the same way). The leader itself is never behind.
    fn refuse_unless_caught_up(&self, learner: NodeId) -> Result<(), ChangeRefused> {
        let Some(progress) = self.progress(learner) else {
            return Ok(());
        };
        if progress.match_index >= self.commit_index {
            return Ok(());
        }
        Err(ChangeRefused::NotCaughtUp {
            node: learner,
            matched: progress.match_index,
            commit: self.commit_index,
        })
    }

    /// A leader that is no longer a voter of the configuration in force, once that
    /// configuration is committed, hands over by stepping down (thesis §4.2.2): until then it
    /// led without counting itself.
    pub(super) fn step_down_if_removed(&mut self, now: Instant, effects: &mut Effects) {
        if self.leader().is_none() || self.is_voter() {
            return;
        }
        let committed = self
            .state
            .log
            .last_configuration()
            .is_none_or(|(index, _)| index <= self.commit_index);
        if committed {
            let term = self.term();
            self.become_follower(term, now, effects);
        }
    }
}

/// The configuration a log entry at `index` carries (the log tracks which ones do).
fn decode(index: LogIndex, command: &crate::Command) -> Membership {
    match Membership::decode(command) {
        Some(Ok(membership)) => membership,
        Some(Err(bad)) => panic!("the configuration entry at {index} is malformed: {bad}"),
        None => unreachable!("the log named {index} a configuration entry"),
    }
}
