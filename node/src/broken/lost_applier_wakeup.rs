//! `lost-applier-wakeup`: notify before the state change (condition-variable misuse). The
//! applier is woken in `start`, before the commit index moves, and not after the commit: it can
//! look too early, find nothing, go back to sleep, and miss the commit.

use threadsim::Signal;

/// The wake-up sent too early, before the lock is even taken.
pub fn wake_too_early(applier: &Signal) {
    applier.notify();
}
