//! `ticker-check-then-act`: the ticker reads "is the election due?" under one lock acquisition
//! and starts the election under the next, so a heartbeat that pushed the deadline forward in
//! between is ignored (check-then-act across a lock release). The core's own check reports it:
//! an election started before its deadline.

use crate::observer::Role;
use crate::shell::{Locked, Pass, Shell};
use threadsim::sync::MutexGuard;

/// The broken ticker pass (entered with the node's lock held).
pub fn ticker_pass(shell: &Shell, locked: MutexGuard<'_, Locked>) -> Pass {
    let due = locked.core.election_due(shell.clock.now());
    drop(locked);
    let mut locked = shell.lock();
    let now = shell.clock.now();
    if due && !locked.stopped && locked.core.role() != Role::Leader {
        let effects = locked.core.start_pre_vote(now);
        shell.execute(&mut locked, effects);
    }
    Pass::WaitUntil(Some(locked.core.next_tick(now)))
}
