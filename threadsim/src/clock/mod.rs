//! Time as the code under test sees it: `now`, sleeping, and every timed wait, behind one trait.
//!
//! Neither loom nor shuttle models time, and a fake clock can only advance simulated time when it
//! knows that every thread is *durably blocked* (sleeping or waiting on something only another
//! thread or the clock can end). So code under test never blocks on a std timeout: it blocks on a
//! [`Signal`] created by its clock, and its threads are spawned through [`spawn`] so the clock
//! knows who is running.

mod signal;
mod skewed;
mod system;
mod thread;

pub use signal::{Signal, Wake};
pub use skewed::{RatePpm, SkewedClock};
pub use system::SystemClock;
pub use thread::{spawn, ClockJoinHandle};

use crate::sync::Arc;
use crate::Instant;
use std::time::Duration;

/// Identifies one [`Signal`] inside the clock that created it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SignalId(pub usize);

/// Identifies one registered thread inside a clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadTicket(pub u64);

/// A shared handle to a clock.
pub type ClockRef = Arc<dyn Clock>;

/// The time seam. Implementations: [`SystemClock`] (real time) and the simulation's fake clock,
/// whose time advances only when every registered thread is durably blocked.
///
/// A signal is a permit (like `thread::park`): `notify` before `wait` makes the next `wait` return
/// at once, so "check the condition under the lock, release it, wait" cannot lose a wake-up. At most
/// one thread waits on a signal at a time.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> Instant;
    /// Creates a signal; `label` names it in stall reports ("applier", "ticker", ...).
    fn signal_create(&self, label: &str) -> SignalId;
    /// Destroys a signal nobody waits on any more.
    fn signal_destroy(&self, id: SignalId);
    /// Blocks until the signal is notified (consuming the permit) or `deadline` passes.
    fn signal_wait(&self, id: SignalId, deadline: Option<Instant>) -> Wake;
    /// Sets the signal's permit and wakes its waiter, if any.
    fn signal_notify(&self, id: SignalId);
    /// Counts a thread that is about to be spawned as running. Call before spawning.
    fn thread_register(&self, name: &str) -> ThreadTicket;
    /// Stops counting a thread that is about to exit.
    fn thread_unregister(&self, ticket: ThreadTicket);

    /// Blocks the calling thread for `duration` of this clock's time.
    fn sleep(&self, duration: Duration) {
        let id = self.signal_create("sleep");
        let deadline = self.now() + duration;
        while self.signal_wait(id, Some(deadline)) == Wake::Notified {}
        self.signal_destroy(id);
    }
}
