//! [`SystemClock`]: real time, for running outside a simulation.
//!
//! This is the one place that reads the system clock and uses timed condvar waits;
//! it is only meaningful on real threads, so the std primitives are used directly.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::{Clock, SignalId, ThreadTicket, Wake};
use crate::Instant;
use std::sync::{Condvar, Mutex, MutexGuard, RwLock};
use std::time::Duration;

/// A clock backed by the operating system's monotonic clock.
pub struct SystemClock {
    epoch: std::time::Instant,
    /// Read on every wait and notify, written only when a signal is created or destroyed.
    signals: RwLock<Vec<Option<std::sync::Arc<Permit>>>>,
}

#[derive(Default)]
struct Permit {
    state: Mutex<PermitState>,
    changed: Condvar,
}

#[derive(Default)]
struct PermitState {
    set: bool,
    /// Whether the owner is blocked on `changed`: a notify without a waiter sets the permit and
    /// makes no system call.
    waiting: bool,
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
            signals: RwLock::new(Vec::new()),
        }
    }

    fn permit(&self, id: SignalId) -> std::sync::Arc<Permit> {
        self.signals
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())[id.0]
            .clone()
            .expect("signal used after it was destroyed")
    }

    fn write_signals(
        &self,
    ) -> std::sync::RwLockWriteGuard<'_, Vec<Option<std::sync::Arc<Permit>>>> {
        self.signals
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
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
        let mut signals = self.write_signals();
        let permit = Some(std::sync::Arc::new(Permit::default()));
        if let Some(free) = signals.iter().position(Option::is_none) {
            signals[free] = permit;
            return SignalId(free);
        }
        signals.push(permit);
        SignalId(signals.len() - 1)
    }

    fn signal_destroy(&self, id: SignalId) {
        self.write_signals()[id.0] = None;
    }

    fn signal_wait(&self, id: SignalId, deadline: Option<Instant>) -> Wake {
        let permit = self.permit(id);
        let mut state = lock(&permit.state);
        let wake = loop {
            if state.set {
                state.set = false;
                break Wake::Notified;
            }
            state.waiting = true;
            match deadline {
                None => {
                    state = permit
                        .changed
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner())
                }
                Some(deadline) => {
                    let left = deadline.saturating_since(self.now());
                    if left == Duration::ZERO {
                        break Wake::TimedOut;
                    }
                    state = permit
                        .changed
                        .wait_timeout(state, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        };
        state.waiting = false;
        wake
    }

    fn signal_notify(&self, id: SignalId) {
        let permit = self.permit(id);
        let mut state = lock(&permit.state);
        state.set = true;
        // Cleared here, so the notifies that follow before the owner runs make no system call.
        let waiting = std::mem::replace(&mut state.waiting, false);
        drop(state);
        if waiting {
            // After the unlock, so the woken thread does not block on the permit's mutex.
            permit.changed.notify_one();
        }
    }

    fn thread_register(&self, _name: &str) -> ThreadTicket {
        ThreadTicket(0)
    }

    fn thread_unregister(&self, _ticket: ThreadTicket) {}
}

#[cfg(all(test, not(any(loom, shuttle))))]
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
    fn a_notify_wakes_a_thread_already_waiting() {
        let clock: ClockRef = Arc::new(SystemClock::new());
        let signal = Arc::new(Signal::new(&clock, "test"));
        // With a deadline first: a lost wake-up then fails after 5 s instead of hanging.
        for deadline in [Some(clock.now() + Duration::from_secs(5)), None] {
            let waiter = {
                let signal = signal.clone();
                spawn(&clock, "waiter", move || signal.wait_until(deadline))
            };
            // The waiter is most likely blocked by now (the system-call path), else it finds the
            // permit set (the permit path); either way it must return Notified.
            std::thread::sleep(Duration::from_millis(20));
            signal.notify();
            assert_eq!(waiter.join(), Wake::Notified);
        }
    }

    #[test]
    fn join_waits_for_the_thread() {
        let clock: ClockRef = Arc::new(SystemClock::new());
        let handle = spawn(&clock, "worker", || 41 + 1);
        assert_eq!(handle.join(), 42);
    }
}
