//! [`Signal`]: a clock-aware permit that a thread waits on, with an optional deadline.

use super::{ClockRef, SignalId};
use crate::Instant;

/// Why a wait on a [`Signal`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The signal was notified (the permit was consumed).
    Notified,
    /// The deadline passed first.
    TimedOut,
}

/// A permit owned by one waiting thread and notified by others; every wait goes through the
/// clock, so a fake clock counts the waiter as durably blocked.
pub struct Signal {
    clock: ClockRef,
    id: SignalId,
}

impl Signal {
    /// A new signal on `clock`; `label` names it in stall reports.
    pub fn new(clock: &ClockRef, label: &str) -> Signal {
        Signal {
            clock: clock.clone(),
            id: clock.signal_create(label),
        }
    }

    /// Sets the permit and wakes the waiter, if any. Cheap; call it after releasing locks.
    pub fn notify(&self) {
        self.clock.signal_notify(self.id);
    }

    /// Blocks until notified.
    pub fn wait(&self) {
        let wake = self.clock.signal_wait(self.id, None);
        assert_eq!(wake, Wake::Notified, "a wait without deadline timed out");
    }

    /// Blocks until notified or until `deadline` (if any) passes.
    pub fn wait_until(&self, deadline: Option<Instant>) -> Wake {
        self.clock.signal_wait(self.id, deadline)
    }

    /// The clock this signal belongs to.
    pub fn clock(&self) -> &ClockRef {
        &self.clock
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        self.clock.signal_destroy(self.id);
    }
}

impl std::fmt::Debug for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signal").field("id", &self.id).finish()
    }
}
