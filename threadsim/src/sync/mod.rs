//! The one place where the concurrency mode is chosen.
//!
//! Code that imports `threadsim::sync::…` (and never `std::sync`, `std::thread`, `loom` or
//! `shuttle` directly) runs unchanged on real threads (parking_lot primitives), under loom
//! (`RUSTFLAGS="--cfg loom"`) and under shuttle (`RUSTFLAGS="--cfg shuttle"`).
//!
//! The API is the intersection of the three backends, made poison-free: [`Mutex::lock`] returns the
//! guard, and [`Condvar::wait`] takes and returns it. There are no timed waits here on purpose:
//! neither loom nor shuttle models time, so every timed wait goes through [`crate::Clock`].
//!
//! Two more switches, for the lock-contention benchmark: `--cfg interleave_std_mutex` uses the
//! std primitives instead of parking_lot, and `--cfg interleave_lock_stats` counts how often a
//! lock was contended and how long threads waited for it ([`lock_stats`]); without it the
//! counters are never touched.

#[cfg(all(loom, shuttle))]
compile_error!("choose one of `--cfg loom` and `--cfg shuttle`, not both");

#[cfg(not(any(loom, shuttle, interleave_std_mutex)))]
mod backend {
    pub use std::sync::atomic;
    pub use std::sync::Arc;
    pub use std::thread;

    /// A mutual-exclusion lock that does not poison.
    #[derive(Debug, Default)]
    pub struct Mutex<T>(parking_lot::Mutex<T>);
    /// The guard of a [`Mutex`].
    pub type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        /// A new unlocked mutex holding `value`.
        pub fn new(value: T) -> Self {
            Mutex(parking_lot::Mutex::new(value))
        }
        /// Blocks until the lock is held.
        pub fn lock(&self) -> MutexGuard<'_, T> {
            if super::lock_stats::ENABLED {
                if let Some(guard) = self.0.try_lock() {
                    super::lock_stats::record_uncontended();
                    return guard;
                }
                let waited = super::lock_stats::Stopwatch::start();
                let guard = self.0.lock();
                waited.record_contended();
                return guard;
            }
            self.0.lock()
        }
    }

    /// A condition variable paired with [`Mutex`].
    #[derive(Debug, Default)]
    pub struct Condvar(parking_lot::Condvar);

    impl Condvar {
        /// A new condition variable.
        pub fn new() -> Self {
            Condvar(parking_lot::Condvar::new())
        }
        /// Releases the lock, waits for a notification, and takes the lock again.
        pub fn wait<'a, T>(&self, mut guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
            self.0.wait(&mut guard);
            guard
        }
        /// Wakes one waiter.
        pub fn notify_one(&self) {
            self.0.notify_one();
        }
        /// Wakes every waiter.
        pub fn notify_all(&self) {
            self.0.notify_all();
        }
    }
}

#[cfg(any(loom, shuttle, interleave_std_mutex))]
mod backend {
    #[cfg(loom)]
    use loom as model;
    #[cfg(shuttle)]
    use shuttle as model;
    #[cfg(all(interleave_std_mutex, not(any(loom, shuttle))))]
    use std as model;

    pub use model::sync::atomic;
    pub use model::thread;
    // Neither loom's nor shuttle's `Arc` can hold a trait object (`Arc<dyn Clock>`), and shuttle
    // does not model `Arc` at all; reference counts are not where our races are.
    pub use std::sync::Arc;

    /// A mutual-exclusion lock that does not poison.
    #[derive(Debug)]
    pub struct Mutex<T>(model::sync::Mutex<T>);
    /// The guard of a [`Mutex`].
    pub type MutexGuard<'a, T> = model::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        /// A new unlocked mutex holding `value`.
        pub fn new(value: T) -> Self {
            Mutex(model::sync::Mutex::new(value))
        }
        /// Blocks until the lock is held.
        #[track_caller]
        pub fn lock(&self) -> MutexGuard<'_, T> {
            let caller = std::panic::Location::caller();
            let _note = super::note_wait(|| super::Waiting::Lock(caller));
            if super::lock_stats::ENABLED {
                if let Ok(guard) = self.0.try_lock() {
                    super::lock_stats::record_uncontended();
                    return guard;
                }
                let waited = super::lock_stats::Stopwatch::start();
                let guard = self
                    .0
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                waited.record_contended();
                return guard;
            }
            self.0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        }
    }

    impl<T: Default> Default for Mutex<T> {
        fn default() -> Self {
            Mutex::new(T::default())
        }
    }

    /// A condition variable paired with [`Mutex`].
    #[derive(Debug)]
    pub struct Condvar(model::sync::Condvar);

    impl Default for Condvar {
        fn default() -> Self {
            Condvar::new()
        }
    }

    impl Condvar {
        /// A new condition variable.
        pub fn new() -> Self {
            Condvar(model::sync::Condvar::new())
        }
        /// Releases the lock, waits for a notification, and takes the lock again.
        pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
            self.0
                .wait(guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        }
        /// Wakes one waiter.
        pub fn notify_one(&self) {
            self.0.notify_one();
        }
        /// Wakes every waiter.
        pub fn notify_all(&self) {
            self.0.notify_all();
        }
    }
}

pub use backend::{atomic, thread, Arc, Condvar, Mutex, MutexGuard};

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    #[test]
    fn a_twin_source_path_is_shown_as_the_original() {
        assert_eq!(
            super::tidy_path("twins/node-shuttle/../../node/src/node/shared.rs"),
            "node/src/node/shared.rs"
        );
        assert_eq!(super::tidy_path("../x/./y.rs"), "../x/y.rs");
    }
}

#[cfg(shuttle)]
mod controlled;
#[cfg(not(shuttle))]
#[path = "no_controlled.rs"]
mod controlled;

pub(crate) use controlled::run as run_controlled;
pub(crate) use controlled::{note_time, note_traced, note_wait};
/// True in a `--cfg loom` or `--cfg shuttle` build, whose primitives work only inside a model
/// (loom's `model`, shuttle's `check_*`): code outside one, such as the doc examples, checks this
/// and does nothing, so `RUSTFLAGS="--cfg loom" cargo test` runs the models alone.
pub const MODEL_CHECKER_BUILD: bool = cfg!(any(loom, shuttle));
/// Whether this build can run controlled executions (shuttle's scheduler, one seed deciding
/// every thread switch): true in shuttle builds only.
pub const CONTROLLED_EXECUTIONS: bool = controlled::AVAILABLE;

/// What a task is about to wait for, noted for deadlock reports in controlled executions.
#[derive(Clone, Debug)]
pub(crate) enum Waiting {
    /// The lock taken at this source location (noted by the shuttle backend's `lock`).
    #[cfg_attr(not(any(loom, shuttle, interleave_std_mutex)), allow(dead_code))]
    Lock(&'static std::panic::Location<'static>),
    /// A clock signal, with the deadline of the wait if it has one.
    Signal {
        /// The signal's label.
        label: std::sync::Arc<str>,
        /// When the wait times out.
        deadline: Option<crate::Instant>,
    },
}

/// `a/b/../../c/d.rs` as `c/d.rs`: the twin packages compile sources through such paths.
fn tidy_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            "." => {}
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

impl std::fmt::Display for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Waiting::Lock(location) => write!(
                f,
                "the lock taken at {}:{}",
                tidy_path(location.file()),
                location.line()
            ),
            Waiting::Signal {
                label,
                deadline: None,
            } => write!(f, "signal '{label}' (no deadline)"),
            Waiting::Signal {
                label,
                deadline: Some(deadline),
            } => write!(f, "signal '{label}' (until {deadline})"),
        }
    }
}

/// Counts of lock acquisitions, for the lock-contention benchmark. Only recorded when built with
/// `--cfg interleave_lock_stats`; otherwise [`lock_stats::ENABLED`] is a constant `false` and
/// the compiler removes the recording entirely.
pub mod lock_stats {
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Whether lock statistics are recorded in this build.
    pub const ENABLED: bool = cfg!(interleave_lock_stats);

    static UNCONTENDED: AtomicU64 = AtomicU64::new(0);
    static CONTENDED: AtomicU64 = AtomicU64::new(0);
    static WAITED_NANOS: AtomicU64 = AtomicU64::new(0);

    /// What the node's locks went through since the last [`reset`].
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct LockStats {
        /// Acquisitions that found the lock free.
        pub uncontended: u64,
        /// Acquisitions that had to wait.
        pub contended: u64,
        /// Total time spent waiting, in nanoseconds.
        pub waited_nanos: u64,
    }

    /// The counts so far (all zero unless [`ENABLED`]).
    pub fn snapshot() -> LockStats {
        LockStats {
            uncontended: UNCONTENDED.load(Ordering::Relaxed),
            contended: CONTENDED.load(Ordering::Relaxed),
            waited_nanos: WAITED_NANOS.load(Ordering::Relaxed),
        }
    }

    /// Sets every count back to zero.
    pub fn reset() {
        for counter in [&UNCONTENDED, &CONTENDED, &WAITED_NANOS] {
            counter.store(0, Ordering::Relaxed);
        }
    }

    pub(super) fn record_uncontended() {
        UNCONTENDED.fetch_add(1, Ordering::Relaxed);
    }

    /// Times a contended acquisition (real time: benchmarks only, never in a simulation).
    pub(super) struct Stopwatch(std::time::Instant);

    impl Stopwatch {
        #[allow(clippy::disallowed_methods)] // measures real lock waits when statistics are on
        pub(super) fn start() -> Stopwatch {
            Stopwatch(std::time::Instant::now())
        }

        pub(super) fn record_contended(self) {
            CONTENDED.fetch_add(1, Ordering::Relaxed);
            let nanos = u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX);
            WAITED_NANOS.fetch_add(nanos, Ordering::Relaxed);
        }
    }
}
