//! [`ManualClock`]: a [`Clock`] whose time moves only when the caller says so, for tests that
//! drive code one step at a time (a unit test on one thread, a loom model, which has no time).
//! `now` moves only on [`ManualClock::advance`]; a wait whose deadline has passed returns at once
//! (unless its permit is set), any other wait blocks on a condvar of the sync facade until
//! notified or until time is advanced past its deadline. So a worker that waits for a future
//! deadline is blocked, not spinning, and the test decides exactly when a timeout may fire.

use crate::clock::{SignalId, ThreadTicket};
use crate::sync::{Arc, Condvar, Mutex};
use crate::{Clock, Instant, Wake};

/// A clock whose time moves only when the test says so. Clones share one clock.
#[derive(Clone, Default)]
pub struct ManualClock {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    slots: Mutex<Vec<Option<bool>>>,
    now: Mutex<Instant>,
    changed: Condvar,
}

impl ManualClock {
    /// A clock with no signals.
    pub fn new() -> ManualClock {
        ManualClock::default()
    }

    /// Moves time forward by `by` and wakes every waiter so it can see its deadline pass.
    pub fn advance(&self, by: std::time::Duration) {
        // Taken with the signals' lock, so a waiter between its check and its wait cannot miss it.
        let _slots = self.inner.slots.lock();
        let mut now = self.inner.now.lock();
        *now = *now + by;
        self.inner.changed.notify_all();
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.inner.now.lock()
    }

    fn signal_create(&self, _label: &str) -> SignalId {
        let mut slots = self.inner.slots.lock();
        slots.push(Some(false));
        SignalId(slots.len() - 1)
    }

    fn signal_destroy(&self, id: SignalId) {
        self.inner.slots.lock()[id.0] = None;
    }

    fn signal_wait(&self, id: SignalId, deadline: Option<Instant>) -> Wake {
        let mut slots = self.inner.slots.lock();
        loop {
            let permit = slots[id.0].as_mut().expect("live signal");
            if *permit {
                *permit = false;
                return Wake::Notified;
            }
            if deadline.is_some_and(|deadline| deadline <= *self.inner.now.lock()) {
                return Wake::TimedOut;
            }
            slots = self.inner.changed.wait(slots);
        }
    }

    fn signal_notify(&self, id: SignalId) {
        if let Some(permit) = self.inner.slots.lock()[id.0].as_mut() {
            *permit = true;
        }
        self.inner.changed.notify_all();
    }

    fn thread_register(&self, _name: &str) -> ThreadTicket {
        ThreadTicket(0)
    }

    fn thread_unregister(&self, _ticket: ThreadTicket) {}
}
