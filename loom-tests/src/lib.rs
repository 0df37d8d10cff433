//! Support for the loom models: a clock loom can run, and a persister that remembers every save
//! so a crash can be taken at any point.
//!
//! The models themselves are in `tests/`, one binary each (a loom deadlock aborts its whole
//! binary). They only build and run with `RUSTFLAGS="--cfg loom"`; without it this crate is
//! empty.
#![deny(missing_docs)]

#[cfg(loom)]
mod loom_clock;
#[cfg(loom)]
mod recording_persister;

#[cfg(loom)]
pub use loom_clock::LoomClock;
#[cfg(loom)]
pub use recording_persister::RecordingPersister;
