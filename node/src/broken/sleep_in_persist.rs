//! `sleep-in-persist`: an fsync delay slept while holding the node's lock (the hang of the
//! reference Go suite). Every other thread of the node queues on the lock, so nobody is durably
//! blocked and simulated time can never reach the sleeper's deadline.

use std::time::Duration;
use threadsim::ClockRef;

/// Sleeps a millisecond of simulated time (the caller holds the node's lock).
pub fn fsync_delay(clock: &ClockRef) {
    clock.sleep(Duration::from_millis(1));
}
