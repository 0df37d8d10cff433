//! The two engines a seed can run on, behind one call: [`run_seed`].
//!
//! - **deterministic** (`--scheduler random` or `pct`): the twins `sim-shuttle`, `node-shuttle`
//!   and `threadsim-shuttle` (the same sources compiled with `cfg(shuttle)`): every thread of the
//!   cluster is a shuttle task on the worker's OS thread, and a scheduler seeded by the run's seed
//!   decides every thread switch. One seed decides the whole run.
//! - **OS threads** (`--scheduler os`): `sim`, `node` and `threadsim` as built: real threads,
//!   real preemption, interleavings the operating system picks (not reproducible).
//!
//! The glue between the command line and a build of `sim` is written once (`seed.rs`) and
//! compiled once per build, each time with `engine_sim`, `engine_node` and `engine_threadsim`
//! naming that build's crates.

use crate::cli::WorkloadArgs;
use crate::outcome::SeedOutcome;
use std::time::Duration;

mod controlled;
mod on_threads;

/// Which scheduler runs the cluster's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SchedulerKind {
    /// Deterministic: a uniformly random runnable thread at every step, seeded by the seed.
    Random,
    /// Deterministic: probabilistic concurrency testing (a few priority changes at random
    /// steps), seeded by the seed.
    Pct,
    /// Real OS threads scheduled by the operating system: real preemption, not reproducible.
    Os,
    /// `random` with one stream for the whole run instead of one per simulated instant (not on
    /// the command line: the shrinking benchmark measures what the per-instant streams are worth).
    #[value(skip)]
    RandomOneStream,
}

impl SchedulerKind {
    /// Whether one seed decides the whole run.
    pub fn deterministic(self) -> bool {
        self != SchedulerKind::Os
    }

    /// The value as typed on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Random => "random",
            SchedulerKind::Pct => "pct",
            SchedulerKind::Os => "os",
            SchedulerKind::RandomOneStream => "random-one-stream",
        }
    }
}

/// An engine and its settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineChoice {
    /// The scheduler.
    pub scheduler: SchedulerKind,
    /// PCT's bug depth.
    pub pct_depth: u64,
    /// The watchdog of OS-thread runs.
    pub watchdog: Duration,
}

impl EngineChoice {
    /// How the engine is described in output.
    pub fn describe(&self) -> String {
        match self.scheduler {
            SchedulerKind::Random => "deterministic (random scheduler)".to_string(),
            SchedulerKind::Pct => format!("deterministic (PCT, depth {})", self.pct_depth),
            SchedulerKind::Os => "OS threads (not reproducible)".to_string(),
            SchedulerKind::RandomOneStream => {
                "deterministic (random scheduler, one stream)".to_string()
            }
        }
    }
}

/// Runs one seed of `workload` on `engine`, its events generated as it goes.
pub fn run_seed(engine: &EngineChoice, workload: &WorkloadArgs, seed: u64) -> SeedOutcome {
    run_seed_following(engine, workload, seed, None)
}

/// Runs one seed of `workload` on `engine`, its events following `schedule` if given.
pub fn run_seed_following(
    engine: &EngineChoice,
    workload: &WorkloadArgs,
    seed: u64,
    schedule: Option<&sim::schedule::Schedule>,
) -> SeedOutcome {
    if engine.scheduler.deterministic() {
        controlled::seed::run(engine, workload, seed, schedule)
    } else {
        on_threads::seed::run(engine, workload, seed, schedule)
    }
}
