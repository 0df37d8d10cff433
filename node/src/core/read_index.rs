//! ReadIndex (Raft thesis §6.4), batched: reads that wait at a leader share one confirmation
//! round.
//!
//! 1. A read needs a leader that has committed an entry of its own term (or its commit index
//!    may lag behind entries its predecessors committed); its read index is the commit index
//!    when it arrives.
//! 2. The leader confirms that it still leads with a round of AppendEntries sent after the read
//!    arrived and answered in its term by a majority (counting itself). A deposed leader that has
//!    not yet heard of its successor fails here, because the majority has moved on.
//! 3. Every read of a confirmed round may be served once the state machine has applied its read
//!    index.
//!
//! Rounds are numbered. Every AppendEntries a leader sends carries the number of the round in
//! flight (`read_round`), and the follower echoes it (etcd's heartbeat context): an answer in the
//! current term acknowledges that round. Reads that arrive while a round is in flight wait for the
//! next one, which starts when the current one is decided. A round needs no extra messages of its
//! own: heartbeaters send at once to peers that have not seen it ([`Effect::WakeHeartbeaters`]).

use super::{Effect, Effects, RaftCore, RoleState};
use crate::core::NotLeader;
use crate::mutation::Mutation;
use crate::{LogIndex, NodeId};
use std::collections::BTreeSet;

/// A read waiting at the leader for its round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReadTicket(pub u64);

/// Why a node could not give a read index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadIndexError {
    /// It is not leader (or it is killed or paused).
    #[error("{0}")]
    NotLeader(NotLeader),
    /// It leads, but has not yet committed an entry of its own term; propose one and retry.
    #[error("no entry of the leader's term is committed yet")]
    NoCommitInTerm,
    /// Its round did not reach a majority in this term (leadership lost, or no answer in time).
    #[error("could not confirm leadership with a majority")]
    NotConfirmed,
    /// It leads, but holds no lease: no majority has answered a heartbeat recent enough.
    #[error("no lease: a majority has not answered a recent enough heartbeat")]
    NoLease,
}

/// How a read ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Confirmed: serve it once this index is applied.
    Confirmed(LogIndex),
    /// Not confirmed.
    Failed(ReadIndexError),
}

/// A round: the reads it confirms and who has acknowledged it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Round {
    number: u64,
    reads: Vec<(ReadTicket, LogIndex)>,
    /// Peers the round's number has been sent to.
    sent_to: BTreeSet<NodeId>,
    /// Peers that answered it in the leader's term.
    acknowledged: BTreeSet<NodeId>,
}

/// A leader's ReadIndex rounds: at most one in flight, and the reads waiting for the next.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ReadRounds {
    in_flight: Option<Round>,
    waiting: Vec<(ReadTicket, LogIndex)>,
    last_number: u64,
    next_ticket: u64,
}

impl ReadRounds {
    /// The number of the round in flight, noted as sent to `peer` (0: no round).
    pub(super) fn stamp(&mut self, peer: NodeId) -> u64 {
        match &mut self.in_flight {
            Some(round) => {
                round.sent_to.insert(peer);
                round.number
            }
            None => 0,
        }
    }

    /// Whether the round in flight has not been sent to `peer` yet.
    pub(super) fn waits_for(&self, peer: NodeId) -> bool {
        self.in_flight
            .as_ref()
            .is_some_and(|round| !round.sent_to.contains(&peer))
    }

    /// Starts a round for the waiting reads if none is in flight; returns whether it did.
    fn start_round(&mut self) -> bool {
        if self.in_flight.is_some() || self.waiting.is_empty() {
            return false;
        }
        self.last_number += 1;
        self.in_flight = Some(Round {
            number: self.last_number,
            reads: std::mem::take(&mut self.waiting),
            ..Round::default()
        });
        true
    }

    /// Every read, in flight or waiting, ends with `error`.
    pub(super) fn fail_all(&mut self, error: ReadIndexError) -> Vec<(ReadTicket, ReadOutcome)> {
        let in_flight = self.in_flight.take().map(|round| round.reads);
        in_flight
            .into_iter()
            .flatten()
            .chain(std::mem::take(&mut self.waiting))
            .map(|(ticket, _)| (ticket, ReadOutcome::Failed(error)))
            .collect()
    }
}

impl RaftCore {
    /// A read arrives at this node: as leader with an entry of its term committed, it gets a
    /// ticket and its read index, and waits for the next round (its outcome comes as
    /// [`Effect::ReadsDone`]). The effects start the round if none is in flight.
    pub fn request_read(&mut self) -> Result<(ReadTicket, Effects), ReadIndexError> {
        let not_leader = ReadIndexError::NotLeader(NotLeader {
            leader_hint: self.leader_hint,
        });
        let term = self.term();
        let commit = self.commit_index;
        let committed_in_term = self.state.log.term_at(commit) == Some(term);
        let without_round = self.has(Mutation::ReadIndexWithoutRound);
        let lone = self.peers.is_empty();
        let RoleState::Leader(leader) = &mut self.role else {
            return Err(not_leader);
        };
        if !committed_in_term {
            crate::coverage::reached(crate::coverage::Point::ReadRefusedNoCommitInTerm);
            return Err(ReadIndexError::NoCommitInTerm);
        }
        leader.reads.next_ticket += 1;
        let ticket = ReadTicket(leader.reads.next_ticket);
        let mut effects = Effects::default();
        if without_round || lone {
            // Broken (or alone): no one to ask.
            effects.push(Effect::ReadsDone(vec![(
                ticket,
                ReadOutcome::Confirmed(commit),
            )]));
            return Ok((ticket, effects));
        }
        leader.reads.waiting.push((ticket, commit));
        if leader.reads.start_round() {
            effects.push(Effect::WakeHeartbeaters);
        }
        Ok((ticket, effects))
    }

    /// The reader of `ticket` gave up waiting: its read leaves the rounds.
    pub fn cancel_read(&mut self, ticket: ReadTicket) {
        if let RoleState::Leader(leader) = &mut self.role {
            let reads = &mut leader.reads;
            reads.waiting.retain(|(waiting, _)| *waiting != ticket);
            if let Some(round) = &mut reads.in_flight {
                round.reads.retain(|(waiting, _)| *waiting != ticket);
            }
        }
    }

    /// `peer` answered round `number` in the current term: a majority decides the round, and
    /// the reads waiting for the next one start it.
    pub(super) fn read_round_answered(&mut self, peer: NodeId, number: u64, effects: &mut Effects) {
        let quorum = self.quorum();
        let id = self.id;
        let RoleState::Leader(leader) = &mut self.role else {
            return;
        };
        let reads = &mut leader.reads;
        let Some(round) = reads.in_flight.as_mut().filter(|r| r.number == number) else {
            return;
        };
        round.acknowledged.insert(peer);
        if !quorum.counts(round.acknowledged.iter().copied().chain([id])) {
            return;
        }
        let confirmed = reads.in_flight.take().expect("the round just acknowledged");
        crate::coverage::reached(crate::coverage::Point::ReadRoundConfirmed);
        let done = confirmed
            .reads
            .into_iter()
            .map(|(ticket, index)| (ticket, ReadOutcome::Confirmed(index)))
            .collect::<Vec<_>>();
        if !done.is_empty() {
            effects.push(Effect::ReadsDone(done));
        }
        if reads.start_round() {
            effects.push(Effect::WakeHeartbeaters);
        }
    }
}
