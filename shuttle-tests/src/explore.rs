//! [`explore`]: one scenario under one of shuttle's schedulers, with replay.

use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, FailurePersistence, MaxSteps, Runner};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Environment variable naming a schedule file: every [`explore`] call replays that schedule
/// instead of exploring.
pub const SCHEDULE_VARIABLE: &str = "INTERLEAVE_SHUTTLE_SCHEDULE";

/// Environment variable setting the scheduler's seed, to explore other schedules than the
/// default run does (a failure's replay command names the seed it ran with).
pub const SEED_VARIABLE: &str = "INTERLEAVE_SHUTTLE_SEED";

/// The scheduler seed without [`SEED_VARIABLE`] (fixed, so the default run explores the same
/// schedules every time).
const DEFAULT_SCHEDULER_SEED: u64 = 0x1e4f_2026;

/// The scheduler seed: [`SEED_VARIABLE`] if set, else the default.
pub fn scheduler_seed() -> u64 {
    number_from_env(SEED_VARIABLE, DEFAULT_SCHEDULER_SEED, "a seed (a u64)")
}

/// The number in the environment variable `name` if set, else `default`; a value that does not
/// parse stops the test run with a message naming the variable and what it should hold.
fn number_from_env<T: std::str::FromStr>(name: &str, default: T, what: &str) -> T {
    match std::env::var(name) {
        Ok(value) => value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not {what}")),
        Err(_) => default,
    }
}

/// Which scheduler picks the schedules.
#[derive(Clone, Copy, Debug)]
pub enum Schedules {
    /// Uniformly random choice at every step.
    Random,
    /// Probabilistic concurrency testing with this bug depth.
    Pct {
        /// How many priority-change points a schedule gets.
        depth: usize,
    },
}

/// A failing schedule.
#[derive(Debug)]
pub struct Found {
    /// Schedules run up to and including the failing one.
    pub schedules: usize,
    /// The failure (panic message, invariant violation or shuttle's deadlock report).
    pub message: String,
    /// Where shuttle wrote the failing schedule.
    pub schedule_file: Option<PathBuf>,
    /// The one-line command that replays it.
    pub replay: String,
}

/// Iterations for a scenario: the environment variable `name` if set, else `default`.
pub fn iterations(name: &str, default: usize) -> usize {
    number_from_env(name, default, "a number of schedules")
}

/// Runs `scenario` under `schedules` for `iterations` schedules with the [`scheduler_seed`];
/// `test` names the calling test (for the replay command). Returns the number of schedules run,
/// or the first failure. With [`SCHEDULE_VARIABLE`] set, replays that schedule instead (and
/// panics as the failure did).
pub fn explore<F>(
    test: &str,
    schedules: Schedules,
    iterations: usize,
    scenario: F,
) -> Result<usize, Found>
where
    F: Fn() + Send + Sync + 'static,
{
    if let Ok(path) = std::env::var(SCHEDULE_VARIABLE) {
        shuttle::replay_from_file(scenario, path);
        return Ok(1);
    }
    explore_from_seed(test, schedules, scheduler_seed(), iterations, scenario)
}

/// [`explore`] with the scheduler seeded by `seed` (and no replay), for measuring how many
/// schedules a detector needs over many seeds.
pub fn explore_from_seed<F>(
    test: &str,
    schedules: Schedules,
    seed: u64,
    iterations: usize,
    scenario: F,
) -> Result<usize, Found>
where
    F: Fn() + Send + Sync + 'static,
{
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/shuttle-schedules")
        .join(test.replace("::", "-"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the schedule directory");
    let dir = dir.canonicalize().expect("the schedule directory exists");
    let mut config = Config::default();
    config.stack_size = 1 << 20;
    config.max_steps = MaxSteps::FailAfter(20_000_000);
    config.failure_persistence = FailurePersistence::File(Some(dir.clone()));
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let counted = move || {
        counter.fetch_add(1, Ordering::SeqCst);
        scenario();
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| match schedules {
        Schedules::Random => {
            Runner::new(RandomScheduler::new_from_seed(seed, iterations), config).run(counted)
        }
        Schedules::Pct { depth } => {
            Runner::new(PctScheduler::new_from_seed(seed, depth, iterations), config).run(counted)
        }
    }));
    let schedules = count.load(Ordering::SeqCst);
    match outcome {
        Ok(_) => Ok(schedules),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic with a non-text payload".into());
            let schedule_file = std::fs::read_dir(&dir)
                .ok()
                .and_then(|entries| entries.flatten().map(|e| e.path()).max());
            let replay = match &schedule_file {
                Some(file) => format!(
                    "{SCHEDULE_VARIABLE}={} RUSTFLAGS=\"--cfg shuttle\" CARGO_TARGET_DIR=target/shuttle \
                     cargo test --release -p shuttle-tests --test cluster -- {test} --exact",
                    file.display()
                ),
                None => "(no schedule was written)".into(),
            };
            Err(Found {
                schedules,
                message,
                schedule_file,
                replay,
            })
        }
    }
}
