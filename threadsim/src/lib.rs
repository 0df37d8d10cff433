//! Deterministic simulation for code that runs on real threads with locks, condition variables
//! and timeouts.
//!
//! Async code has paused clocks and simulators (tokio's `time::pause`, madsim, turmoil); threaded
//! code blocked in `Condvar::wait_timeout` or `thread::sleep` has none, and neither loom nor
//! shuttle models time. This crate gives threaded code a time seam it can be tested through:
//!
//! - [`sync`]: one facade that picks parking_lot, loom or shuttle primitives by `cfg`
//!   (`RUSTFLAGS="--cfg loom"` / `"--cfg shuttle"`), poison-free, with no timed waits.
//! - [`Clock`]: `now`, `sleep` and every timed wait, through [`Signal`]s (permits, like
//!   `thread::park`) and threads started with [`spawn`]. [`SystemClock`] is real time.
//! - [`FakeClock`]: simulated time that jumps to the next deadline only when every registered
//!   thread is durably blocked (Go's `testing/synctest` semantics), and reports who waits on what
//!   when it cannot move.
//! - [`ManualClock`]: time that moves only when a test says so, for driving code step by step
//!   (on one thread, or in a loom model).
//! - [`mod@channel`]: a bounded channel whose waits go through the clock.
//! - [`coverage`]: named states a run should reach now and then, counted per run;
//!   [`fault_points`]: places the code may misbehave as its environment allows, armed per run
//!   from the seed (BUGGIFY).
//! - [`DetRng`]: a seeded random source that splits into independent streams.
//! - [`simulation`]: a run with one seed, its fake clock and its event [`Trace`], on real threads
//!   under a watchdog or, in a shuttle build, as one controlled execution whose every thread
//!   switch is decided by the seed ([`Engine`]).
//!
//! # Example: a minute of timeouts in a millisecond
//!
//! Two threads wait with timeouts; one is woken before its deadline, the other times out. Under
//! the fake clock the run is instant, the times are exact, and a thread stuck on a lock would be
//! reported by name instead of hanging.
//!
//! ```
//! # if threadsim::sync::MODEL_CHECKER_BUILD { return; } // a loom or shuttle build runs only models
//! use std::time::Duration;
//! use threadsim::simulation::simulate_on_threads;
//! use threadsim::sync::Arc;
//! use threadsim::{spawn, Signal, Wake};
//!
//! simulate_on_threads(7, Duration::from_secs(10), |sim| {
//!     let clock = sim.clock();
//!     let started = clock.now();
//!     let answer = Arc::new(Signal::new(&clock, "answer"));
//!     let waiter = {
//!         let (clock, answer) = (clock.clone(), answer.clone());
//!         spawn(&sim.clock(), "waiter", move || {
//!             answer.wait_until(Some(clock.now() + Duration::from_secs(60)))
//!         })
//!     };
//!     clock.sleep(Duration::from_secs(30)); // simulated: returns at once
//!     answer.notify();
//!     assert_eq!(waiter.join(), Wake::Notified);
//!     assert_eq!(clock.now() - started, Duration::from_secs(30));
//!
//!     let unanswered = Signal::new(&clock, "never");
//!     let deadline = clock.now() + Duration::from_secs(60);
//!     assert_eq!(unanswered.wait_until(Some(deadline)), Wake::TimedOut);
//!     assert_eq!(clock.now(), deadline);
//! })
//! .expect("no deadlock, no stall");
//! ```
//!
//! The same code runs under loom and shuttle by building with `RUSTFLAGS="--cfg loom"` or
//! `"--cfg shuttle"` (use [`ManualClock`] in a loom model, the fake clock under shuttle); the
//! `worker-pool` example in this repository (`examples/worker-pool/`) is a pool whose callers
//! wait with timeouts, tested all three ways.
#![deny(missing_docs)]

pub mod abandon;
pub mod channel;
pub mod clock;
mod context;
pub mod coverage;
pub mod digest;
pub mod fake_clock;
pub mod fault_points;
pub mod isolated;
pub mod manual_clock;
pub mod panic_message;
pub mod rng;
pub mod schedule;
pub mod simulation;
pub mod sync;
pub mod time;
pub mod trace;

pub use channel::{channel, Receiver, Sender};
pub use clock::{spawn, Clock, ClockJoinHandle, ClockRef, Signal, SystemClock, Wake};
pub use digest::Digest;
pub use fake_clock::FakeClock;
pub use manual_clock::ManualClock;
pub use rng::DetRng;
pub use schedule::{ScheduleSummary, Scheduler};
pub use simulation::{simulate, Engine, Run, Sim, SimFailure};
pub use time::Instant;
pub use trace::{Level, Trace, TraceLog};
