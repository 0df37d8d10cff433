//! Lease reads (Raft thesis §6.4.1): a leader serves reads from its own state, with no round,
//! while a lease holds.
//!
//! 1. A follower that hears from a leader refuses to vote for anyone else for one minimum election
//!    timeout of its own clock, counted from when the AppendEntries arrived (`timing.rs`); a node
//!    that starts refuses for as long, since it may have answered just before it went down.
//! 2. The leader notes, for each peer, the send time of the latest AppendEntries that peer
//!    answered in its term. Once a majority (counting itself) has answered requests sent at or
//!    after `t`, no successor can be elected before every one of those followers stops refusing,
//!    that is before `t + election_timeout_min` of the fastest of their clocks.
//! 3. Clocks drift within `max_clock_drift_ppm` (`d`): a leader's lease of
//!    `election_timeout_min * (1 - d) / (1 + d)` on its own clock ends, in true time, no later
//!    than `election_timeout_min / (1 + d)` after `t`, which is no later than the fastest
//!    follower stops refusing. So while `now < t + lease` no other leader can have committed
//!    anything, and the leader's state at its commit index is the latest.
//! 4. The lease belongs to the leadership: stepping down ends it, since the node may then vote
//!    for a successor itself (and it is one of the majority the lease counted on).
//!
//! As with ReadIndex, a read also needs an entry of the leader's own term committed, and is
//! served once the state machine has applied the commit index it saw.

use super::{Quorum, RaftCore, RoleState};
use crate::core::{NotLeader, ReadIndexError};
use crate::coverage::{reached, sometimes, Point};
use crate::mutation::Mutation;
use crate::{LogIndex, NodeId};
use std::time::Duration;
use threadsim::Instant;

const PPM: u128 = 1_000_000;

impl RaftCore {
    /// How long a lease lasts on this node's clock after the send time of the heartbeats that
    /// confirmed it: `election_timeout_min * (1 - d) / (1 + d)` for the drift bound `d`.
    pub fn lease_duration(&self) -> Duration {
        let min = self.config.election_timeout_min;
        if self.has(Mutation::LeaseWithoutDriftMargin) {
            return min;
        }
        let drift = u128::from(self.config.max_clock_drift_ppm);
        assert!(drift < PPM, "a drift bound of 100% or more leaves no lease");
        let micros = min.as_micros() * (PPM - drift) / (PPM + drift);
        Duration::from_micros(u64::try_from(micros).expect("a lease shorter than the timeout"))
    }

    /// The index a read may be served at from local state, with no round, at `now`: the commit
    /// index, if this node leads with an entry of its term committed and its lease holds.
    pub fn lease_read(&self, now: Instant) -> Result<LogIndex, ReadIndexError> {
        let leads = self.leader().is_some();
        let kept = self.has(Mutation::LeaseKeptAfterStepDown) && self.lease_holds(now);
        if !leads && !kept {
            return Err(ReadIndexError::NotLeader(NotLeader {
                leader_hint: self.leader_hint,
            }));
        }
        if leads && self.state.log.term_at(self.commit_index) != Some(self.term()) {
            reached(Point::ReadRefusedNoCommitInTerm);
            return Err(ReadIndexError::NoCommitInTerm);
        }
        if self.peers.is_empty() || self.lease_holds(now) {
            if let Some(until) = self.lease_until {
                reached(Point::LeaseReadServed);
                sometimes(
                    until - now < Duration::from_millis(1),
                    Point::LeaseReadInLastMillisecond,
                );
            }
            return Ok(self.commit_index);
        }
        reached(Point::LeaseReadExpired);
        Err(ReadIndexError::NoLease)
    }

    /// When the current lease ends (None: no lease).
    pub fn lease_until(&self) -> Option<Instant> {
        self.lease_until
    }

    fn lease_holds(&self, now: Instant) -> bool {
        self.lease_until.is_some_and(|until| now < until)
    }

    /// As leader, `peer` answered in this term, at `now`, an AppendEntries sent at `sent_at`:
    /// the lease extends to the latest send time a majority has answered, plus the lease.
    pub(super) fn lease_acknowledged(&mut self, peer: NodeId, sent_at: Instant, now: Instant) {
        let start = if self.has(Mutation::LeaseFromAnswerTime) {
            now
        } else {
            sent_at
        };
        let quorum = self.quorum();
        let needed = peers_for_majority(&quorum, self.id);
        let duration = self.lease_duration();
        let RoleState::Leader(leader) = &mut self.role else {
            return;
        };
        if leader.lease_given_up {
            return;
        }
        let latest = leader.lease_acks.entry(peer).or_insert(start);
        *latest = (*latest).max(start);
        let mut acks: Vec<Instant> = (leader.lease_acks.iter())
            .filter(|(&peer, _)| quorum.is_counted(peer))
            .map(|(_, &at)| at)
            .collect();
        acks.sort_unstable_by(|a, b| b.cmp(a));
        // The `needed`-th latest answer: every one of `needed` peers answered at or after it.
        if let Some(&confirmed) = acks.get(needed - 1) {
            let until = confirmed + duration;
            self.lease_until = Some(self.lease_until.map_or(until, |old| old.max(until)));
        }
    }
}

/// How many peers that count must answer for a majority, this node counted if it does.
fn peers_for_majority(quorum: &Quorum, id: NodeId) -> usize {
    let itself = usize::from(quorum.is_counted(id));
    let needed = (0..=quorum.cluster_size())
        .find(|&peers| quorum.is_majority(peers + itself))
        .expect("every voter together is a majority");
    needed.max(1)
}
