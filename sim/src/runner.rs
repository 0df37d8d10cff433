//! Running one simulation: the seed, the registered main thread, the real-time watchdog, and the
//! replay command printed on failure.

use crate::fake_clock::FakeClock;
use node::rng::DetRng;
use node::sync::Arc;
use node::{Clock, ClockRef};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

/// Environment variable that replaces a test's seeds with one seed.
pub const SEED_VARIABLE: &str = "INTERLEAVE_SEED";
/// Environment variable that adds a range of seeds (`FIRST..=LAST`) to a test's own list.
pub const SEEDS_VARIABLE: &str = "INTERLEAVE_SEEDS";
/// Environment variable: seconds of real time without simulated progress before the watchdog
/// fails a run.
pub const WATCHDOG_VARIABLE: &str = "INTERLEAVE_WATCHDOG_SECS";

/// One simulation run: its seed, its fake clock and its root random stream.
pub struct Sim {
    seed: u64,
    clock: Arc<FakeClock>,
    rng: DetRng,
}

impl Sim {
    /// A simulation with `seed` and a fresh fake clock, for callers that run the body themselves
    /// (the shuttle tests, where shuttle owns every thread). The caller registers its own thread
    /// with the clock.
    pub fn new(seed: u64) -> Sim {
        Sim {
            seed,
            clock: Arc::new(FakeClock::new()),
            rng: DetRng::new(seed),
        }
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// The run's clock.
    pub fn clock(&self) -> ClockRef {
        self.clock.clone()
    }
    /// The fake clock itself (progress, stall reports).
    pub fn fake_clock(&self) -> &Arc<FakeClock> {
        &self.clock
    }
    /// An independent random stream for `purpose`, derived from the seed.
    pub fn rng(&self, purpose: u64) -> DetRng {
        self.rng.split(purpose)
    }
}

/// Why a simulation failed.
#[derive(Debug)]
pub struct SimFailure {
    /// The seed of the failed run.
    pub seed: u64,
    /// What went wrong (panic message, violated invariant or watchdog report).
    pub message: String,
}

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

fn watchdog_limit() -> Duration {
    let secs = std::env::var(WATCHDOG_VARIABLE)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    Duration::from_secs(secs)
}

/// Runs `body` as the registered main thread of a fresh simulation with `seed`, and waits for it
/// with a real-time watchdog: a deadlock (every thread waiting with nothing left to wake them) or
/// a stall (no simulated progress for [`WATCHDOG_VARIABLE`] seconds, default 60) fails the run
/// with a report of every thread and what it waits on.
pub fn simulate<F>(seed: u64, body: F) -> Result<(), SimFailure>
where
    F: FnOnce(&Sim) + Send + 'static,
{
    simulate_with_watchdog(seed, watchdog_limit(), body)
}

/// [`simulate`] with an explicit watchdog period.
pub fn simulate_with_watchdog<F>(seed: u64, limit: Duration, body: F) -> Result<(), SimFailure>
where
    F: FnOnce(&Sim) + Send + 'static,
{
    let clock = Arc::new(FakeClock::new());
    let sim = Sim {
        seed,
        clock: clock.clone(),
        rng: DetRng::new(seed),
    };
    let (done_sender, done) = mpsc::channel();
    let ticket = clock.thread_register("sim-main");
    let main = std::thread::Builder::new()
        .name("sim-main".to_string())
        .spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| body(&sim)));
            let clock = sim.clock.clone();
            drop(sim);
            clock.thread_unregister(ticket);
            let _ = done_sender.send(outcome.map_err(panic_message));
        })
        .expect("spawn the simulation's main thread");

    let mut last = clock.progress();
    let mut still_for = Duration::ZERO;
    let poll = Duration::from_millis(100);
    loop {
        match done.recv_timeout(poll) {
            Ok(outcome) => {
                main.join()
                    .expect("simulation main thread caught its own panic");
                return outcome.map_err(|message| SimFailure { seed, message });
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(SimFailure {
                    seed,
                    message: "simulation main thread vanished".into(),
                });
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let progress = clock.progress();
        if progress.deadlocked {
            return Err(SimFailure {
                seed,
                message: format!("deadlock\n{}", clock.report()),
            });
        }
        if progress == last {
            still_for += poll;
            if still_for >= limit {
                let message = format!(
                    "watchdog: no simulated progress for {limit:?} of real time (a thread is stuck on a \
                     lock or spinning)\n{}",
                    clock.report()
                );
                return Err(SimFailure { seed, message });
            }
        } else {
            last = progress;
            still_for = Duration::ZERO;
        }
    }
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

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "panic with a non-text payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use node::clock::spawn;
    use node::sync::Mutex;

    #[test]
    fn a_thread_sleeping_while_holding_a_lock_stalls_time_and_the_watchdog_names_it() {
        let failure = simulate_with_watchdog(7, Duration::from_secs(1), |sim| {
            let clock = sim.clock();
            let lock = Arc::new(Mutex::new(0u32));
            let holder_lock = lock.clone();
            let holder_clock = clock.clone();
            let _holder = spawn(&clock, "fsync-holder", move || {
                let mut guard = holder_lock.lock();
                holder_clock.sleep(Duration::from_millis(5));
                *guard += 1;
            });
            clock.sleep(Duration::from_millis(1));
            // Blocked on the mutex: not durably blocked, so time cannot reach the holder's deadline.
            *lock.lock() += 1;
        })
        .expect_err("the stall must fail the run");
        assert_eq!(failure.seed, 7);
        assert!(failure.message.contains("watchdog"), "{}", failure.message);
        assert!(
            failure
                .message
                .contains("fsync-holder: durably blocked on 'sleep'"),
            "{}",
            failure.message
        );
        assert!(
            failure.message.contains("sim-main: NOT durably blocked"),
            "{}",
            failure.message
        );
    }

    #[test]
    fn a_panic_in_the_body_fails_the_run_with_its_message_and_seed() {
        let failure = simulate(11, |_| panic!("boom")).expect_err("the panic must fail the run");
        assert_eq!((failure.seed, failure.message.as_str()), (11, "boom"));
        assert!(replay_command("m::t", 11).starts_with("INTERLEAVE_SEED=11 cargo test"));
    }
}
