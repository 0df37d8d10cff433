//! Running the suite's simulations: which seeds a test runs, the watchdog setting, and the replay
//! command printed on failure. The run itself is [`threadsim::simulation`].

use std::time::Duration;
use threadsim::{Engine, Run, Scheduler};
pub use threadsim::{Sim, SimFailure};

/// Environment variable that replaces a test's seeds with one seed.
pub const SEED_VARIABLE: &str = "INTERLEAVE_SEED";
/// Environment variable that adds a range of seeds (`FIRST..=LAST`) to a test's own list.
pub const SEEDS_VARIABLE: &str = "INTERLEAVE_SEEDS";
/// Environment variable: seconds of real time without simulated progress before the watchdog
/// fails a run on real threads (default 60).
pub const WATCHDOG_VARIABLE: &str = "INTERLEAVE_WATCHDOG_SECS";

/// The seeds a test runs: the one in [`SEED_VARIABLE`] if set; else `defaults` followed by the
/// range in [`SEEDS_VARIABLE`], if set (`INTERLEAVE_SEEDS=1000..=1099` runs 100 more).
pub fn seeds(defaults: &[u64]) -> Vec<u64> {
    if let Ok(text) = std::env::var(SEED_VARIABLE) {
        match text.trim().parse() {
            Ok(seed) => return vec![seed],
            Err(_) => panic!("{SEED_VARIABLE}={text:?} is not an unsigned integer"),
        }
    }
    let mut seeds = defaults.to_vec();
    if let Ok(text) = std::env::var(SEEDS_VARIABLE) {
        let range = text.trim().split_once("..=").and_then(|(first, last)| {
            Some((
                first.trim().parse::<u64>().ok()?,
                last.trim().parse::<u64>().ok()?,
            ))
        });
        match range {
            Some((first, last)) if first <= last && last - first < 1_000_000 => {
                seeds.extend(first..=last)
            }
            _ => panic!(
                "{SEEDS_VARIABLE}={text:?} is not a range FIRST..=LAST of at most a million seeds"
            ),
        }
    }
    seeds
}

/// The one-line command that reruns `test` with `seed`.
pub fn replay_command(test: &str, seed: u64) -> String {
    format!("{SEED_VARIABLE}={seed} cargo test --release -p sim --test main -- {test} --exact")
}

/// The watchdog period: [`WATCHDOG_VARIABLE`] if set, else 60 s. A value that is not a whole
/// number of seconds from 1 to 86,400 is an error naming the variable.
pub fn watchdog_limit() -> Result<Duration, String> {
    parse_watchdog(std::env::var(WATCHDOG_VARIABLE).ok().as_deref())
}

fn parse_watchdog(text: Option<&str>) -> Result<Duration, String> {
    match text {
        None => Ok(Duration::from_secs(60)),
        Some(text) => match text.trim().parse::<u64>() {
            Ok(secs) if (1..=86_400).contains(&secs) => Ok(Duration::from_secs(secs)),
            _ => Err(format!(
                "{WATCHDOG_VARIABLE}={text:?} is not a whole number of seconds from 1 to 86400"
            )),
        },
    }
}

/// Scheduling steps after which a controlled run fails (`schedule cap: ...`): shuttle keeps every
/// step of a run (16 bytes each), so this caps a run's schedule at 1.5 GiB (2 GiB of vector
/// capacity at most), whatever the seed or the variant does. Above the ~59M steps of the
/// longest run the command allows (a 600 s key-value seed).
pub const MAX_CONTROLLED_STEPS: u64 = 100_000_000;

/// The engine this build runs simulations on by default: real threads under the watchdog
/// ([`WATCHDOG_VARIABLE`]), or, in the shuttle build, controlled executions with the random
/// scheduler.
pub fn default_engine() -> Engine {
    if threadsim::sync::CONTROLLED_EXECUTIONS {
        Engine::Controlled {
            scheduler: Scheduler::Random,
            max_steps: MAX_CONTROLLED_STEPS,
            livelock_switches: runspec::bounds::DEFAULT_LIVELOCK_SWITCHES,
        }
    } else {
        Engine::OsThreads {
            watchdog: watchdog_limit().unwrap_or_else(|message| panic!("{message}")),
        }
    }
}

/// Runs `body` as the registered main thread of a fresh simulation with `seed` on the
/// [`default_engine`]; see [`threadsim::simulate`].
pub fn simulate<F, T>(seed: u64, body: F) -> Result<T, SimFailure>
where
    F: FnOnce(&Sim) -> T + Send + 'static,
    T: Send + 'static,
{
    simulate_on(seed, &default_engine(), body).result
}

/// [`simulate`] on `engine`, returning the trace and schedule too.
pub fn simulate_on<F, T>(seed: u64, engine: &Engine, body: F) -> Run<T>
where
    F: FnOnce(&Sim) -> T + Send + 'static,
    T: Send + 'static,
{
    threadsim::simulate(seed, engine, body)
}

/// Runs `body` once per seed of [`seeds`]`(defaults)`; on the first failure panics with the
/// seed, the failure and the command that replays it.
pub fn run_seeds<F>(test: &str, defaults: &[u64], body: F)
where
    F: Fn(&Sim) + Send + Sync + 'static,
{
    let body = std::sync::Arc::new(body);
    for seed in seeds(defaults) {
        let body = body.clone();
        if let Err(failure) = simulate(seed, move |sim| body(sim)) {
            panic!(
                "simulation {test} failed with seed {}:\n{}\nreplay: {}",
                failure.seed,
                failure.message,
                replay_command(test, failure.seed)
            );
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn the_replay_command_names_the_seed_and_the_test() {
        assert_eq!(
            replay_command("m::t", 11),
            "INTERLEAVE_SEED=11 cargo test --release -p sim --test main -- m::t --exact"
        );
    }

    #[test]
    fn a_watchdog_setting_out_of_range_is_an_error_naming_the_variable() {
        assert_eq!(parse_watchdog(None), Ok(Duration::from_secs(60)));
        assert_eq!(parse_watchdog(Some(" 5 ")), Ok(Duration::from_secs(5)));
        for bad in ["0", "-1", "abc", "1e3", "100000"] {
            let error = parse_watchdog(Some(bad)).expect_err(bad);
            assert!(error.contains(WATCHDOG_VARIABLE), "{error}");
        }
    }
}
