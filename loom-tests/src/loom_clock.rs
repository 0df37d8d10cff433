//! [`LoomClock`]: a [`Clock`] for loom, which has no time. `now` never moves; a wait with a
//! deadline returns at once unless its permit is set (so a timeout may fire at any point, here at
//! the earliest); a wait without a deadline blocks on a loom condvar until notified.

use node::clock::{SignalId, ThreadTicket};
use node::sync::{Arc, Condvar, Mutex};
use node::{Clock, Instant, Wake};

/// A clock whose time stands still.
#[derive(Default)]
pub struct LoomClock {
    slots: Mutex<Vec<Option<bool>>>,
    changed: Arc<Condvar>,
}

impl LoomClock {
    /// A clock with no signals.
    pub fn new() -> LoomClock {
        LoomClock::default()
    }
}

impl Clock for LoomClock {
    fn now(&self) -> Instant {
        Instant::ZERO
    }

    fn signal_create(&self, _label: &str) -> SignalId {
        let mut slots = self.slots.lock();
        slots.push(Some(false));
        SignalId(slots.len() - 1)
    }

    fn signal_destroy(&self, id: SignalId) {
        self.slots.lock()[id.0] = None;
    }

    fn signal_wait(&self, id: SignalId, deadline: Option<Instant>) -> Wake {
        let mut slots = self.slots.lock();
        loop {
            let permit = slots[id.0].as_mut().expect("live signal");
            if *permit {
                *permit = false;
                return Wake::Notified;
            }
            if deadline.is_some() {
                return Wake::TimedOut;
            }
            slots = self.changed.wait(slots);
        }
    }

    fn signal_notify(&self, id: SignalId) {
        if let Some(permit) = self.slots.lock()[id.0].as_mut() {
            *permit = true;
        }
        self.changed.notify_all();
    }

    fn thread_register(&self, _name: &str) -> ThreadTicket {
        ThreadTicket(0)
    }

    fn thread_unregister(&self, _ticket: ThreadTicket) {}
}
