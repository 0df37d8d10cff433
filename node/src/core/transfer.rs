//! Handing leadership over (Raft thesis §3.10): a leader asked to hand over to a voter stops
//! taking proposals, brings the target's log up to its own, then tells it to start an election
//! at once (TimeoutNow). The target's log holds every entry the leader has, so it can win; its
//! vote requests say they come from a transfer, so voters that heard from the leader lately
//! vote all the same. The leader gives up its lease when it sends TimeoutNow (it never serves
//! a lease read again in its term), because those votes ignore the lease. A transfer that has
//! not ended within a minimum election timeout is abandoned, and proposals resume.

use super::{Effect, Effects, NotLeader, RaftCore, RoleState};
use crate::messages::{Response, TimeoutNowArgs, TimeoutNowReply};
use crate::mutation::Mutation;
use crate::NodeId;
use threadsim::Instant;

/// A transfer in progress, kept by the leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Transfer {
    /// The voter that is to lead.
    pub(super) target: NodeId,
    /// When the leader gives up and takes proposals again.
    pub(super) until: Instant,
    /// Whether TimeoutNow went out (once per transfer).
    pub(super) sent: bool,
}

/// Why a leader refused to hand over.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransferRefused {
    /// This node does not lead.
    #[error(transparent)]
    NotLeader(#[from] NotLeader),
    /// The target is the leader itself.
    #[error("{0} already leads")]
    AlreadyLeader(NodeId),
    /// The target does not vote in the configuration in force, so it could not be elected.
    #[error("{0} is not a voter")]
    NotAVoter(NodeId),
    /// The node is not one this cluster may have.
    #[error("{0} is not a node of this cluster")]
    UnknownNode(NodeId),
}

impl RaftCore {
    /// As leader at `now`, starts handing leadership to `target`: proposals and changes are
    /// refused (naming the target as leader) until the transfer ends or a minimum election
    /// timeout passes. A second request while one is in progress is refused as if the node
    /// did not lead.
    pub fn transfer_leadership(
        &mut self,
        now: Instant,
        target: NodeId,
    ) -> Result<Effects, TransferRefused> {
        if let Some(refused) = self.refusal_as_leader() {
            return Err(TransferRefused::NotLeader(refused));
        }
        if target == self.id {
            return Err(TransferRefused::AlreadyLeader(target));
        }
        if !self.peers.contains(&target) {
            return Err(TransferRefused::UnknownNode(target));
        }
        if !self.membership().is_voter(target) {
            return Err(TransferRefused::NotAVoter(target));
        }
        let until = now + self.config.election_timeout_min;
        let RoleState::Leader(leader) = &mut self.role else {
            unreachable!("checked above");
        };
        leader.transfer = Some(Transfer {
            target,
            until,
            sent: false,
        });
        let mut effects = Effects::default();
        // The ticker ends the transfer when it times out; the replicator brings the target up.
        effects.push(Effect::WakeTicker);
        effects.push(Effect::WakePeers);
        Ok(effects)
    }

    /// The node a transfer in progress hands over to (None: no transfer, or not leader).
    pub fn transferring_to(&self) -> Option<NodeId> {
        self.leader()?.transfer.map(|transfer| transfer.target)
    }

    /// Why this node may not append as leader now: it does not lead, or it hands over (then it
    /// names the target, where clients should go). `None`: it may.
    pub(super) fn refusal_as_leader(&self) -> Option<NotLeader> {
        match self.leader() {
            None => Some(NotLeader {
                leader_hint: self.leader_hint,
            }),
            Some(leader) => leader.transfer.map(|transfer| NotLeader {
                leader_hint: Some(transfer.target),
            }),
        }
    }

    /// TimeoutNow for `peer`, if it is the target of this leader's transfer and its log holds
    /// every entry of this one (matched to the last index), once. The leader's lease ends here.
    pub(super) fn next_timeout_now(&mut self, peer: NodeId) -> Option<TimeoutNowArgs> {
        let last_index = self.state.log.last_index();
        let last_term = self.state.log.last_term();
        let to_behind = self.has(Mutation::TransferToBehind);
        let (term, id) = (self.term(), self.id);
        let RoleState::Leader(leader) = &mut self.role else {
            return None;
        };
        let transfer = leader.transfer.as_mut()?;
        let caught_up = leader.progress[&peer].match_index == last_index;
        if transfer.target != peer || transfer.sent || !(caught_up || to_behind) {
            return None;
        }
        transfer.sent = true;
        leader.lease_given_up = true;
        self.lease_until = None;
        Some(TimeoutNowArgs {
            term,
            leader: id,
            last_log_index: last_index,
            last_log_term: last_term,
        })
    }

    /// Whether `peer` is the target of a transfer still waiting for its log to catch up: its
    /// replicator must look again after each answer.
    pub(super) fn transfer_waits_for(&self, peer: NodeId) -> bool {
        self.leader()
            .and_then(|leader| leader.transfer)
            .is_some_and(|transfer| transfer.target == peer && !transfer.sent)
    }

    /// Ends a transfer that ran out of time at `now`: proposals resume.
    pub(super) fn end_transfer_if_expired(&mut self, now: Instant) {
        if let RoleState::Leader(leader) = &mut self.role {
            if leader
                .transfer
                .is_some_and(|transfer| now >= transfer.until)
            {
                leader.transfer = None;
            }
        }
    }

    /// When a transfer in progress times out.
    pub(super) fn transfer_deadline(&self) -> Option<Instant> {
        self.leader()?.transfer.map(|transfer| transfer.until)
    }

    /// TimeoutNow from the leader of `args.term` at `now`: a voter of that term starts an
    /// election at once, with no pre-vote, its vote requests marked as a transfer's. Checked
    /// continuously: its log holds the leader's last entry (the leader sends TimeoutNow only
    /// then, and nothing but a leader of a newer term, which this node would have heard of,
    /// takes entries of the leader's term away); a target behind cannot win.
    pub(super) fn handle_timeout_now(&mut self, now: Instant, args: &TimeoutNowArgs) -> Effects {
        let mut effects = Effects::default();
        if args.term > self.term() {
            self.become_follower(args.term, now, &mut effects);
        }
        let current = args.term == self.term() && self.leader().is_none();
        let log = &self.state.log;
        let (last_term, last_index) = (log.last_term(), log.last_index());
        if current && (last_term, last_index) < (args.last_log_term, args.last_log_index) {
            effects.push(Effect::InvariantViolated(format!(
                "{}: told to take over by {} of {}, with its log at {last_index} of {last_term} \
                 behind the leader's at {} of {}",
                self.id, args.leader, args.term, args.last_log_index, args.last_log_term
            )));
        }
        if current && self.may_campaign() {
            crate::coverage::reached(crate::coverage::Point::TransferElectionStarted);
            effects.extend(self.start_election_as(now, true));
        }
        effects.push(Effect::Reply(Response::TimeoutNow(TimeoutNowReply {
            term: self.term(),
        })));
        effects
    }
}
