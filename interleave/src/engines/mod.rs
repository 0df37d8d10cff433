//! The two engines a seed can run on, behind one call: [`run_seed`].
//!
//! - **deterministic** (`--scheduler random` or `pct`): the twins `sim-shuttle`, `node-shuttle`
//!   and `threadsim-shuttle` (the same sources compiled with `cfg(shuttle)`): every thread of the
//!   cluster is a shuttle task on the worker's OS thread, and a scheduler seeded by the run's seed
//!   decides every thread switch. One seed decides the whole run.
//! - **OS threads** (`--scheduler os`): `sim`, `node` and `threadsim` as built: real threads,
//!   real preemption, interleavings the operating system picks (not reproducible).
//!
//! The glue between a [`RunSpec`] and a build of `sim` is written once (`seed.rs`) and compiled
//! once per build, each time with `engine_sim` and `engine_threadsim` naming that
//! build's crates. The run's specification and figures are `runspec`'s, the same in both builds;
//! the glue converts only the schedule and the trace, which the twins define again.

use crate::outcome::SeedOutcome;
use runspec::RunSpec;
use std::time::Duration;

mod controlled;
mod on_threads;

/// The watchdog of an OS-thread run (a deterministic one has none: its step limit ends a
/// livelock): how long a run may make no progress before it fails as a hang.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watchdog(pub Duration);

impl Default for Watchdog {
    /// 60 s, as `INTERLEAVE_WATCHDOG` unset.
    fn default() -> Watchdog {
        Watchdog(Duration::from_secs(60))
    }
}

/// Stops every seed under way on either engine at its next step, and every later one: each
/// fails with `threadsim::abandon::ABANDONED` (async-signal-safe: an atomic store in each
/// build of `threadsim`).
pub fn abandon_runs() {
    threadsim::abandon::abandon_runs();
    threadsim_shuttle::abandon::abandon_runs();
}

/// Runs `spec`, its events generated as it goes.
pub fn run_seed(spec: &RunSpec, watchdog: Watchdog) -> SeedOutcome {
    run_seed_following(spec, watchdog, None)
}

/// Runs `spec`, its events following `schedule` if given.
pub fn run_seed_following(
    spec: &RunSpec,
    watchdog: Watchdog,
    schedule: Option<&sim::schedule::Schedule>,
) -> SeedOutcome {
    if spec.scheduler.deterministic() {
        controlled::seed::run(spec, watchdog, schedule)
    } else {
        on_threads::seed::run(spec, watchdog, schedule)
    }
}
