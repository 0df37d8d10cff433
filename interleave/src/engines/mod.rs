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

use crate::outcome::SeedOutcome;
use crate::run_spec::{EngineChoice, WorkloadArgs};

mod controlled;
mod on_threads;

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
