//! The one place this crate reads the machine's clock and sleeps on it: sockets, processes and
//! fault injection on a real machine run on real time (the node itself keeps its own `Clock`).

use std::time::{Duration, Instant};

/// Now, on the machine's monotonic clock.
#[allow(clippy::disallowed_methods)] // a real deployment's sockets time out in real time
pub fn now() -> Instant {
    Instant::now()
}

/// Sleeps until `deadline` (returns at once if it has passed).
#[allow(clippy::disallowed_methods)] // a real deployment's sockets time out in real time
pub fn sleep_until(deadline: Instant) {
    let left = deadline.saturating_duration_since(now());
    if !left.is_zero() {
        std::thread::sleep(left);
    }
}

/// What is left until `deadline`, at least a millisecond (socket timeouts refuse zero).
pub fn left_until(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(now())
        .max(Duration::from_millis(1))
}
