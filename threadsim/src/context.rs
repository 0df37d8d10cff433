//! The run a thread belongs to: what [`crate::coverage`] counts into and which
//! [`crate::fault_points`] are armed. Set by [`crate::simulate`] on the OS thread that runs the
//! simulation and handed by [`crate::spawn`] to every thread started from there (a controlled
//! execution's tasks all run on its OS thread), so runs on parallel workers stay apart. Outside a
//! simulation there is none, and both do nothing.
//!
//! Nothing here goes through the sync facade: a std mutex is not a scheduling point under
//! shuttle, so keeping count does not change the run.

use crate::{DetRng, Trace};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// How often each named point (a coverage point, a fault point) was met in one run.
pub type Counts = BTreeMap<&'static str, u64>;

/// What one run keeps beside its threads.
#[derive(Debug, Default)]
pub(crate) struct RunContext {
    /// How often each coverage point was reached.
    pub coverage: Mutex<Counts>,
    /// The armed fault points (none until the run arms them).
    pub faults: Mutex<Option<ArmedFaults>>,
}

/// A run's armed fault points (see [`crate::fault_points`]).
pub(crate) struct ArmedFaults {
    /// The arming decisions' stream (split by each site's name).
    pub arming: DetRng,
    /// The firing decisions' stream.
    pub firing: DetRng,
    /// Where firings are recorded.
    pub trace: Trace,
    /// How often each site fired.
    pub fired: Counts,
}

impl std::fmt::Debug for ArmedFaults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArmedFaults")
            .field("fired", &self.fired)
            .finish()
    }
}

/// Locks one of the context's parts; a panic elsewhere does not hide the counts.
pub(crate) fn lock<T>(part: &Mutex<T>) -> MutexGuard<'_, T> {
    part.lock().unwrap_or_else(PoisonError::into_inner)
}

std::thread_local! {
    /// The run this OS thread belongs to, if any.
    static CURRENT: RefCell<Option<Arc<RunContext>>> = const { RefCell::new(None) };
}

/// Calls `f` with the current run's context, if the thread belongs to a run.
pub(crate) fn with<R>(f: impl FnOnce(&RunContext) -> R) -> Option<R> {
    CURRENT.with_borrow(|current| current.as_deref().map(f))
}

/// The current run's context, for a thread being started to join.
pub(crate) fn current() -> Option<Arc<RunContext>> {
    CURRENT.with_borrow(Clone::clone)
}

/// Makes `context` this OS thread's run until the guard is dropped (the previous one comes
/// back then).
pub(crate) fn enter(context: Option<Arc<RunContext>>) -> Entered {
    let previous = CURRENT.replace(context);
    Entered { previous }
}

/// Restores the thread's previous run on drop.
pub(crate) struct Entered {
    previous: Option<Arc<RunContext>>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        CURRENT.set(self.previous.take());
    }
}
