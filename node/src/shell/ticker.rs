//! The ticker: tells the core the time when its next timer is due (an election deadline, a
//! check-quorum), and sleeps until the next one.

use super::state::Shell;
use super::Pass;
use crate::broken;
use crate::mutation::Mutation;

/// One pass of the ticker: the core's timer rules run at `now` under one lock acquisition, so a
/// heartbeat that pushed the deadline forward is never missed (no check-then-act across a lock
/// release). Returns when to look again.
pub(super) fn pass(shell: &Shell) -> Pass {
    let mut locked = shell.lock();
    if let Some(pass) = locked.gate() {
        return pass;
    }
    if shell.config.mutations.has(Mutation::TickerCheckThenAct) {
        return broken::ticker_check_then_act::ticker_pass(shell, locked);
    }
    let now = shell.clock.now();
    let effects = locked.core.tick(now);
    shell.execute(&mut locked, effects);
    Pass::WaitUntil(Some(locked.core.next_tick(now)))
}
