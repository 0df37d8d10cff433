//! The one place where the concurrency mode is chosen.
//!
//! Every other module imports `crate::sync::…` and never `std::sync`, `std::thread`, `loom` or
//! `shuttle` directly, so the same node code runs on real threads (parking_lot primitives), under
//! loom (`RUSTFLAGS="--cfg loom"`) and under shuttle (`RUSTFLAGS="--cfg shuttle"`).
//!
//! The API is the intersection of the three backends, made poison-free: [`Mutex::lock`] returns the
//! guard, and [`Condvar::wait`] takes and returns it. There are no timed waits here on purpose:
//! neither loom nor shuttle models time, so every timed wait goes through [`crate::Clock`].

#[cfg(all(loom, shuttle))]
compile_error!("choose one of `--cfg loom` and `--cfg shuttle`, not both");

#[cfg(not(any(loom, shuttle)))]
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

#[cfg(any(loom, shuttle))]
mod backend {
    #[cfg(loom)]
    use loom as model;
    #[cfg(shuttle)]
    use shuttle as model;

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
        pub fn lock(&self) -> MutexGuard<'_, T> {
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
