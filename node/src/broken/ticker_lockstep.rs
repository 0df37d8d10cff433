//! `ticker-lockstep`: the ticker polls every 10 ms on a grid shared by every node and fires a
//! fixed minimum timeout after the last reset, which erases the randomness of election timeouts
//! (Raft §5.2): nodes that lost their leader together keep timing out together and split the
//! vote forever (the lockstep bug fake time exposed in the reference suite).

use crate::core::{Effects, RaftCore};
use crate::observer::Role;
use std::time::Duration;
use threadsim::Instant;

const POLL: Duration = Duration::from_millis(10);

/// The broken timer rule at `now`: an election a fixed minimum timeout after the last reset.
pub fn tick(core: &mut RaftCore, now: Instant) -> Effects {
    let fixed = core.election_timer_reset_at() + core.config().election_timeout_min;
    if core.role() != Role::Leader && now >= fixed {
        core.start_pre_vote_unchecked(now)
    } else {
        Effects::default()
    }
}

/// The next point of the shared 10 ms grid after `now`.
pub fn next_poll(now: Instant) -> Instant {
    let poll = POLL.as_micros() as u64;
    Instant::from_epoch(Duration::from_micros(
        (now.since_epoch().as_micros() as u64 / poll + 1) * poll,
    ))
}
