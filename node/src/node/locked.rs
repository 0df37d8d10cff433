//! [`Locked`]: the node's lock, held; the wake-ups asked for while it is held go out once it is
//! released.

use super::shared::{Inner, Shared};
use crate::sync::MutexGuard;
use std::ops::{Deref, DerefMut};

/// Which worker threads the effects executed under the lock asked to wake.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct OwedWakes {
    /// Every replicator (entries to send, a vote to request).
    pub peers: bool,
    /// The applier (the commit index moved).
    pub applier: bool,
    /// The ticker and the heartbeaters (the role changed).
    pub timers: bool,
}

/// The node's state with its lock held. Releasing it (dropping this) sends the wake-ups that
/// effects asked for meanwhile: a thread woken while the lock is still held would only find it
/// taken and wait again, and with eight clients and four replicators on two cores that wait is
/// a trip through the scheduler. A wake-up is a permit, so sending it after the release loses
/// nothing: the woken thread reads the state under the lock.
pub(super) struct Locked<'a> {
    shared: &'a Shared,
    guard: Option<MutexGuard<'a, Inner>>,
}

impl<'a> Locked<'a> {
    pub fn new(shared: &'a Shared, guard: MutexGuard<'a, Inner>) -> Locked<'a> {
        Locked {
            shared,
            guard: Some(guard),
        }
    }
}

impl Deref for Locked<'_> {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        self.guard.as_ref().expect("held until dropped")
    }
}

impl DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Inner {
        self.guard.as_mut().expect("held until dropped")
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let mut guard = self.guard.take().expect("dropped once");
        let owed = std::mem::take(&mut guard.owed_wakes);
        drop(guard);
        self.shared.send_wakes(owed);
    }
}
