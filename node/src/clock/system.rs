//! [`SystemClock`]: real time, for running the node outside a simulation.
//!
//! This is the one place in the node that reads the system clock and uses timed condvar waits;
//! it is only meaningful on real threads, so the std primitives are used directly.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::{Clock, SignalId, ThreadTicket, Wake};
use crate::Instant;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// A clock backed by the operating system's monotonic clock.
pub struct SystemClock {
    epoch: std::time::Instant,
    signals: Mutex<Vec<Option<std::sync::Arc<Permit>>>>,
}

#[derive(Default)]
struct Permit {
    set: Mutex<bool>,
    changed: Condvar,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SystemClock {
    /// A clock whose epoch is now.
    pub fn new() -> SystemClock {
        SystemClock {
            epoch: std::time::Instant::now(),
            signals: Mutex::new(Vec::new()),
        }
    }

    fn permit(&self, id: SignalId) -> std::sync::Arc<Permit> {
        lock(&self.signals)[id.0]
            .clone()
            .expect("signal used after it was destroyed")
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::from_epoch(self.epoch.elapsed())
    }

    fn signal_create(&self, _label: &str) -> SignalId {
        let mut signals = lock(&self.signals);
        let permit = Some(std::sync::Arc::new(Permit::default()));
        if let Some(free) = signals.iter().position(Option::is_none) {
            signals[free] = permit;
            return SignalId(free);
        }
        signals.push(permit);
        SignalId(signals.len() - 1)
    }

    fn signal_destroy(&self, id: SignalId) {
        lock(&self.signals)[id.0] = None;
    }

    fn signal_wait(&self, id: SignalId, deadline: Option<Instant>) -> Wake {
        let permit = self.permit(id);
        let mut set = lock(&permit.set);
        loop {
            if *set {
                *set = false;
                return Wake::Notified;
            }
            match deadline {
                None => set = permit.changed.wait(set).unwrap_or_else(|p| p.into_inner()),
                Some(deadline) => {
                    let left = deadline.saturating_since(self.now());
                    if left == Duration::ZERO {
                        return Wake::TimedOut;
                    }
                    set = permit
                        .changed
                        .wait_timeout(set, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        }
    }

    fn signal_notify(&self, id: SignalId) {
        let permit = self.permit(id);
        *lock(&permit.set) = true;
        permit.changed.notify_one();
    }

    fn thread_register(&self, _name: &str) -> ThreadTicket {
        ThreadTicket(0)
    }

    fn thread_unregister(&self, _ticket: ThreadTicket) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{spawn, ClockRef, Signal};
    use crate::sync::Arc;

    #[test]
    fn notify_before_wait_is_not_lost_and_deadline_times_out() {
        let clock: ClockRef = Arc::new(SystemClock::new());
        let signal = Signal::new(&clock, "test");
        signal.notify();
        assert_eq!(signal.wait_until(Some(clock.now())), Wake::Notified);
        let deadline = clock.now() + Duration::from_millis(5);
        assert_eq!(signal.wait_until(Some(deadline)), Wake::TimedOut);
        assert!(clock.now() >= deadline);
    }

    #[test]
    fn join_waits_for_the_thread() {
        let clock: ClockRef = Arc::new(SystemClock::new());
        let handle = spawn(&clock, "worker", || 41 + 1);
        assert_eq!(handle.join(), 42);
    }
}
