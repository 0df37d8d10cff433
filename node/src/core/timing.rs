//! The rules that depend on time: the randomized election timer (Raft §5.2), the leader lease
//! that refuses disruptive votes (thesis §4.2.3), check-quorum (thesis §6.2) and the heartbeat
//! schedule. The shell's ticker calls [`RaftCore::tick`] and sleeps until
//! [`RaftCore::next_tick`]; each heartbeater asks [`RaftCore::heartbeat`].

use super::{Effect, Effects, RaftCore, RoleState};
use crate::broken;
use crate::config::Config;
use crate::messages::Request;
use crate::mutation::Mutation;
use crate::NodeId;
use threadsim::{DetRng, Instant};

/// What the core keeps about time.
#[derive(Clone, Debug)]
pub(super) struct Timers {
    rng: DetRng,
    /// A follower or candidate starts an election when this passes.
    pub(super) election_deadline: Instant,
    /// When the election timer was last reset.
    pub(super) reset_at: Instant,
    /// When this node last heard from a leader of its current term (or, as leader, last had a
    /// quorum): votes are refused for one minimum election timeout after it.
    leader_contact_at: Option<Instant>,
    /// The time the ticker was last told to wait until.
    ticker_waits_until: Option<Instant>,
}

impl Timers {
    pub(super) fn new(config: &Config, now: Instant) -> Timers {
        let mut rng = DetRng::new(config.seed);
        let timeout = rng.duration_ms(config.election_timeout_min, config.election_timeout_max);
        Timers {
            rng,
            election_deadline: now + timeout,
            reset_at: now,
            // A node that starts may have acknowledged a leader just before it went down, and
            // that leader's lease counts on it: it refuses votes for a minimum election timeout,
            // as if it had just heard from the leader (what `lease.rs` relies on).
            leader_contact_at: Some(now),
            ticker_waits_until: None,
        }
    }

    /// A follower forgets the lease of a leadership it held.
    pub(super) fn lost_leadership(&mut self) {
        self.leader_contact_at = None;
    }
}

/// What a heartbeater should do for one peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeartbeatDue {
    /// Send this heartbeat now.
    Send(Request),
    /// Nothing is due before this time (`None`: not leader, nothing until woken).
    WaitUntil(Option<Instant>),
}

impl RaftCore {
    /// Draws a new election deadline from `now`; if it falls before the time the ticker waits
    /// until, the ticker must be woken.
    pub(super) fn reset_election_timer(&mut self, now: Instant, effects: &mut Effects) {
        let drawn = self.timers.rng.duration_ms(
            self.config.election_timeout_min,
            self.config.election_timeout_max,
        );
        let at_minimum = crate::fault_points::fires(
            crate::fault_points::FaultPoint::ElectionTimeoutAtMinimum,
            now,
        );
        let timeout = if at_minimum {
            self.config.election_timeout_min
        } else {
            drawn
        };
        self.timers.election_deadline = now + timeout;
        self.timers.reset_at = now;
        if self
            .timers
            .ticker_waits_until
            .is_some_and(|waits| self.timers.election_deadline < waits)
        {
            effects.push(Effect::WakeTicker);
        }
    }

    /// The current election deadline.
    pub fn election_deadline(&self) -> Instant {
        self.timers.election_deadline
    }

    /// When the election timer was last reset.
    pub fn election_timer_reset_at(&self) -> Instant {
        self.timers.reset_at
    }

    /// The node's configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether a follower or candidate's election deadline has passed at `now`.
    pub fn election_due(&self, now: Instant) -> bool {
        self.leader().is_none() && now >= self.timers.election_deadline
    }

    /// Whether `now` is within the lease of the last leader contact, or this node leads: a vote
    /// request for a newer term is then refused without adopting the term (thesis §4.2.3), so a
    /// server cut off from the leader cannot disrupt a working cluster. A leader is the leader it
    /// hears from (as etcd's is in its lease): were it to grant, in a cluster of three a node
    /// cut off from the leader alone would win with the leader's own vote. A leader that lost
    /// its majority steps down by check-quorum, and then its lease is that of its last contact.
    pub fn within_lease(&self, now: Instant) -> bool {
        matches!(self.role, RoleState::Leader(_))
            || self
                .timers
                .leader_contact_at
                .is_some_and(|contact| now < contact + self.config.election_timeout_min)
    }

    /// Records contact with a leader of the current term (as follower) at `now`.
    pub(super) fn heard_from_leader(&mut self, now: Instant) {
        self.timers.leader_contact_at = Some(now);
    }

    /// What time decides at `now`: a leader that has not heard from a majority within the quorum
    /// timeout steps down (check-quorum); a follower or candidate whose election deadline passed
    /// starts a pre-vote.
    pub fn tick(&mut self, now: Instant) -> Effects {
        let mut effects = Effects::default();
        self.step_down_if_removed(now, &mut effects);
        self.end_transfer_if_expired(now);
        if let RoleState::Leader(leader) = &self.role {
            let window = self.config.leader_quorum_timeout;
            let answered = leader
                .answered_at
                .iter()
                .filter(|&(_, &at)| now < at + window)
                .map(|(&peer, _)| peer);
            let heard_from_majority = self.quorum().counts(answered.chain([self.id]));
            if heard_from_majority || self.has(Mutation::NoCheckQuorum) {
                self.timers.leader_contact_at = Some(now);
                return effects;
            }
            crate::coverage::reached(crate::coverage::Point::CheckQuorumStepDown);
            let term = self.term();
            self.become_follower(term, now, &mut effects);
        }
        if self.has(Mutation::TickerLockstep) {
            effects.extend(broken::ticker_lockstep::tick(self, now));
        } else if self.election_due(now) && !self.may_campaign() {
            // A learner, or a node outside the configuration, does not campaign: it waits for
            // a leader to reach it (or to add it).
            self.reset_election_timer(now, &mut effects);
        } else if self.election_due(now) {
            effects.extend(self.start_pre_vote(now));
        }
        effects
    }

    /// When the ticker should call [`RaftCore::tick`] next, after a tick at `now`: a leader
    /// checks its quorum every minimum election timeout; anyone else at the election deadline.
    /// Remembered, so a deadline drawn earlier later wakes the ticker ([`Effect::WakeTicker`]).
    pub fn next_tick(&mut self, now: Instant) -> Instant {
        let next = if self.leader().is_some() {
            let check_quorum = now + self.config.election_timeout_min;
            self.transfer_deadline()
                .map_or(check_quorum, |until| until.min(check_quorum))
        } else if self.has(Mutation::TickerLockstep) {
            broken::ticker_lockstep::next_poll(now)
        } else {
            self.timers.election_deadline
        };
        self.timers.ticker_waits_until = Some(next);
        next
    }

    /// The heartbeat for `peer` at `now`, if one is due (every heartbeat interval, and at once
    /// when a ReadIndex round waits for this peer's answer): an AppendEntries with no entries
    /// that carries the commit index, checks the follower's log at `next_index - 1`, and tags
    /// the read round in flight.
    pub fn heartbeat(&mut self, peer: NodeId, now: Instant) -> HeartbeatDue {
        let interval = self.config.heartbeat_interval;
        let member = self.membership().contains(peer);
        let RoleState::Leader(leader) = &mut self.role else {
            return HeartbeatDue::WaitUntil(None);
        };
        if !member {
            // Not in the configuration: nothing to send until a change adds it.
            return HeartbeatDue::WaitUntil(Some(now + interval));
        }
        let due = leader.heartbeat_due.get(&peer).copied().unwrap_or(now);
        let read_round_waits = leader.reads.waits_for(peer);
        if now < due && !read_round_waits {
            return HeartbeatDue::WaitUntil(Some(due));
        }
        leader.heartbeat_due.insert(peer, now + interval);
        let next_index = leader
            .progress
            .get(&peer)
            .expect("progress for every peer")
            .next_index;
        // A peer that needs compacted entries is checked where the log starts: it answers that
        // it lacks them, and its replicator sends the snapshot.
        let next_index = next_index.max(self.state.log.snapshot_index().next());
        let mut args = self.append_request(next_index, 0);
        if let RoleState::Leader(leader) = &mut self.role {
            args.read_round = leader.reads.stamp(peer);
        }
        args.sent_at = now;
        HeartbeatDue::Send(Request::AppendEntries(args))
    }

    /// As leader, `peer` answered in the current term at `now` (check-quorum counts it).
    pub(super) fn peer_answered(&mut self, peer: NodeId, now: Instant) {
        if let RoleState::Leader(leader) = &mut self.role {
            leader.answered_at.insert(peer, now);
        }
    }
}
