//! The ticker thread: starts an election when the election deadline passes without a heartbeat.

use super::shared::Shared;
use crate::observer::Role;

/// Runs until the node is killed. The deadline is read and acted on under one lock acquisition,
/// so a heartbeat that pushed the deadline forward is never missed (no check-then-act across a
/// lock release).
pub(super) fn run(shared: &Shared) {
    loop {
        let deadline = {
            let mut inner = shared.lock();
            if inner.killed {
                return;
            }
            if inner.core.role() != Role::Leader && shared.clock.now() >= inner.election_deadline {
                let effects = inner.core.start_election();
                shared.execute(&mut inner, effects);
            }
            (inner.core.role() != Role::Leader).then_some(inner.election_deadline)
        };
        shared.ticker_wake.wait_until(deadline);
    }
}
