//! The ticker: starts an election when the election deadline passes without a heartbeat.

use super::shared::{Inner, Shared};
use super::Step;
use crate::mutation::Mutation;
use crate::observer::Role;
use std::time::Duration;
use threadsim::Instant;

/// The broken ticker of [`Mutation::TickerLockstep`]: polls on a 10 ms grid shared by every node
/// and fires a fixed minimum timeout after the last reset, so nodes that lost their leader
/// together keep timing out together.
fn lockstep_step(shared: &Shared, inner: &mut Inner) -> Step {
    const POLL: Duration = Duration::from_millis(10);
    let now = shared.clock.now();
    if inner.core.role() != Role::Leader
        && now >= inner.timer_reset_at + shared.config.election_timeout_min
    {
        let effects = inner.core.start_pre_vote();
        shared.execute(inner, effects);
    }
    let poll = POLL.as_micros() as u64;
    let next_tick = Instant::from_epoch(Duration::from_micros(
        (now.since_epoch().as_micros() as u64 / poll + 1) * poll,
    ));
    Step::WaitUntil(Some(next_tick))
}

/// One pass of the ticker. A leader checks that it still hears from a quorum (and steps down if
/// not); anyone else starts an election once the election deadline has passed. The deadline is
/// read and acted on under one lock acquisition, so a heartbeat that pushed the deadline forward
/// is never missed (no check-then-act across a lock release). Returns when to look again.
pub(super) fn step(shared: &Shared) -> Step {
    let mut inner = shared.lock();
    if let Some(step) = inner.gate() {
        return step;
    }
    if inner.core.role() == Role::Leader && !shared.check_quorum(&mut inner) {
        let next_check = shared.clock.now() + shared.config.election_timeout_min;
        return Step::WaitUntil(Some(next_check));
    }
    if inner.core.has(Mutation::TickerLockstep) {
        return lockstep_step(shared, &mut inner);
    }
    if inner.core.has(Mutation::TickerCheckThenAct) {
        let expired =
            inner.core.role() != Role::Leader && shared.clock.now() >= inner.election_deadline;
        drop(inner);
        // Broken: the decision above is acted on under a new lock acquisition.
        inner = shared.lock();
        if expired && !inner.killed {
            start_pre_vote(shared, &mut inner);
        }
        return Step::WaitUntil(Some(inner.election_deadline));
    }
    if inner.core.role() != Role::Leader && shared.clock.now() >= inner.election_deadline {
        start_pre_vote(shared, &mut inner);
    }
    Step::WaitUntil(Some(inner.election_deadline))
}

/// Starts a pre-vote, checking (continuously, on every election start) that the election
/// deadline has passed: an election from a deadline that a heartbeat had pushed forward is a
/// check-then-act race.
fn start_pre_vote(shared: &Shared, inner: &mut Inner) {
    let now = shared.clock.now();
    if now < inner.election_deadline {
        shared.report(format!(
            "{}: election started at {now} although a heartbeat had pushed the deadline to {}",
            shared.id, inner.election_deadline
        ));
    }
    let effects = inner.core.start_pre_vote();
    shared.execute(inner, effects);
}
