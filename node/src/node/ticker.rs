//! The ticker: starts an election when the election deadline passes without a heartbeat.

use super::shared::Shared;
use super::Step;
use crate::observer::Role;

/// One pass of the ticker. The deadline is read and acted on under one lock acquisition, so a
/// heartbeat that pushed the deadline forward is never missed (no check-then-act across a lock
/// release). Returns when to look again.
pub(super) fn step(shared: &Shared) -> Step {
    let mut inner = shared.lock();
    if inner.killed {
        return Step::Exit;
    }
    if inner.core.role() != Role::Leader && shared.clock.now() >= inner.election_deadline {
        let effects = inner.core.start_election();
        shared.execute(&mut inner, effects);
    }
    Step::WaitUntil((inner.core.role() != Role::Leader).then_some(inner.election_deadline))
}

/// Runs until the node is killed.
pub(super) fn run(shared: &Shared) {
    while let Step::WaitUntil(deadline) = step(shared) {
        shared.ticker_wake.wait_until(deadline);
    }
}
