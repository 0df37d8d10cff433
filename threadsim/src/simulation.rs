//! Running one simulation: a seed, a fake clock, an event trace and the registered main thread,
//! on one of two [`Engine`]s:
//!
//! - **OS threads**: every thread is a real thread and the operating system schedules them; a
//!   real-time watchdog turns a stall or a deadlock into a failure with a report of every thread.
//!   Real preemption, but the interleaving is not reproducible.
//! - **Controlled**: every thread is a shuttle task on one OS thread, and a scheduler seeded by
//!   the run's seed picks which runs next at every synchronization point, so the whole run (the
//!   schedule, and everything that follows from it) is a function of the seed. Only in builds with
//!   `cfg(shuttle)` ([`crate::sync::CONTROLLED_EXECUTIONS`]).

use crate::fake_clock::FakeClock;
use crate::panic_message::panic_message;
use crate::rng::DetRng;
use crate::schedule::{ScheduleSummary, Scheduler};
use crate::sync::Arc;
use crate::trace::{Trace, TraceLog, DEFAULT_TRACE_LIMIT};
use crate::{Clock, ClockRef};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

/// One simulation run: its seed, its fake clock, its root random stream and its event trace.
pub struct Sim {
    seed: u64,
    clock: Arc<FakeClock>,
    rng: DetRng,
    trace: Trace,
}

impl Sim {
    /// A simulation with `seed`, a fresh fake clock and a fresh trace, for callers that run the
    /// body themselves (under shuttle, where shuttle owns every thread). The caller registers its
    /// own thread with the clock.
    pub fn new(seed: u64) -> Sim {
        Sim::with_trace(seed, Trace::with_limit(DEFAULT_TRACE_LIMIT))
    }

    fn with_trace(seed: u64, trace: Trace) -> Sim {
        Sim {
            seed,
            clock: Arc::new(FakeClock::new()),
            rng: DetRng::new(seed),
            trace,
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
    /// The run's event trace.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Arms this run's [fault points](crate::fault_points) from its seed.
    pub fn arm_fault_points(&self) {
        crate::fault_points::arm(self.seed, &self.trace);
    }
}

/// How a simulation's threads are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Real threads scheduled by the operating system; the watchdog fails a run that makes no
    /// simulated progress for this long.
    OsThreads {
        /// The watchdog period (real time).
        watchdog: Duration,
    },
    /// Every thread a shuttle task, switched by `scheduler` seeded by the run's seed.
    Controlled {
        /// The scheduler.
        scheduler: Scheduler,
        /// The run fails after this many scheduling steps in all (which bounds the memory of the
        /// schedule shuttle records).
        max_steps: u64,
        /// The run fails as a livelock after this many thread switches with neither simulated
        /// time nor the trace moving (threads that keep running without ever all blocking stop
        /// the fake clock).
        livelock_switches: u64,
    },
}

/// A finished simulation: the body's value or the failure, the trace, and for a controlled run
/// its schedule.
#[derive(Debug)]
pub struct Run<T> {
    /// The body's value, or why the run failed.
    pub result: Result<T, SimFailure>,
    /// Everything the run recorded.
    pub trace: TraceLog,
    /// The schedule of a controlled run.
    pub schedule: Option<ScheduleSummary>,
    /// The [coverage points](crate::coverage) the run reached, and how often.
    pub coverage: crate::coverage::Counts,
    /// The [fault points](crate::fault_points) that fired, and how often (none unless the run
    /// armed them).
    pub faults_fired: crate::coverage::Counts,
}

/// Runs `body` as the registered main thread (`sim-main`) of a fresh simulation with `seed` on
/// `engine`. A controlled engine in a build without shuttle, or OS threads in a shuttle build,
/// fails the run with a message saying so.
pub fn simulate<F, T>(seed: u64, engine: &Engine, body: F) -> Run<T>
where
    F: FnOnce(&Sim) -> T + Send + 'static,
    T: Send + 'static,
{
    let trace = Trace::with_limit(DEFAULT_TRACE_LIMIT);
    let context = std::sync::Arc::new(crate::context::RunContext::default());
    let _entered = crate::context::enter(Some(context.clone()));
    match *engine {
        Engine::OsThreads { watchdog } => {
            let result = if crate::sync::CONTROLLED_EXECUTIONS {
                Err(SimFailure {
                    seed,
                    message:
                        "this build runs every thread under shuttle: use the controlled engine"
                            .into(),
                })
            } else {
                run_on_threads(Sim::with_trace(seed, trace.clone()), watchdog, body)
            };
            Run {
                result,
                trace: trace.take(),
                schedule: None,
                coverage: crate::context::lock(&context.coverage).clone(),
                faults_fired: crate::fault_points::fired(),
            }
        }
        Engine::Controlled {
            scheduler,
            max_steps,
            livelock_switches,
        } => {
            let run_trace = trace.clone();
            let (result, schedule) = crate::sync::run_controlled(
                seed,
                scheduler,
                max_steps,
                livelock_switches,
                move || {
                    let sim = Sim::with_trace(seed, run_trace);
                    let clock = sim.clock.clone();
                    let ticket = clock.thread_register("sim-main");
                    let value = body(&sim);
                    drop(sim);
                    clock.thread_unregister(ticket);
                    value
                },
            );
            let trace = trace.take();
            let result = result.map_err(|message| SimFailure {
                seed,
                message: with_last_events(message, &trace),
            });
            Run {
                result,
                trace,
                schedule: Some(schedule),
                coverage: crate::context::lock(&context.coverage).clone(),
                faults_fired: crate::fault_points::fired(),
            }
        }
    }
}

/// Trace events a livelock report ends with: what the threads did last before time stood still.
const LIVELOCK_EVENTS: usize = 8;

/// A livelock's report with the trace's last events after it (what each thread was doing); any
/// other failure as it is.
fn with_last_events(message: String, trace: &crate::trace::TraceLog) -> String {
    if !message.starts_with("livelock") {
        return message;
    }
    let last = &trace.events[trace.events.len().saturating_sub(LIVELOCK_EVENTS)..];
    let mut out = format!(
        "{message}
the trace's last {} events:",
        last.len()
    );
    for event in last {
        out.push_str(&format!("\n  {event}"));
    }
    out
}

/// Why a simulation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimFailure {
    /// The seed of the failed run.
    pub seed: u64,
    /// What went wrong (panic message, violated invariant, deadlock or watchdog report).
    pub message: String,
}

/// Runs `body` as the registered main thread of a fresh simulation with `seed`, on real threads,
/// and waits for it with a real-time watchdog: a deadlock (every thread waiting with nothing left
/// to wake them) or a stall (no simulated progress for `limit` of real time) fails the run with a
/// report of every thread and what it waits on. A panic in `body` fails the run with its message.
pub fn simulate_on_threads<F, T>(seed: u64, limit: Duration, body: F) -> Result<T, SimFailure>
where
    F: FnOnce(&Sim) -> T + Send + 'static,
    T: Send + 'static,
{
    run_on_threads(Sim::new(seed), limit, body)
}

fn run_on_threads<F, T>(sim: Sim, limit: Duration, body: F) -> Result<T, SimFailure>
where
    F: FnOnce(&Sim) -> T + Send + 'static,
    T: Send + 'static,
{
    let seed = sim.seed;
    let clock = sim.clock.clone();
    let (done_sender, done) = mpsc::channel();
    let ticket = clock.thread_register("sim-main");
    let context = crate::context::current();
    let main = std::thread::Builder::new()
        .name("sim-main".to_string())
        .spawn(move || {
            let _entered = crate::context::enter(context);
            let outcome = catch_unwind(AssertUnwindSafe(|| body(&sim)));
            let clock = sim.clock.clone();
            drop(sim);
            clock.thread_unregister(ticket);
            let _ = done_sender.send(outcome.map_err(|payload| panic_message(&*payload)));
        })
        .expect("spawn the simulation's main thread");

    let mut last = clock.progress();
    let mut still_for = Duration::ZERO;
    let poll = Duration::from_millis(100).min(limit);
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
        if crate::abandon::runs_abandoned() {
            // Its threads are left to the process, which is about to end.
            return Err(SimFailure {
                seed,
                message: crate::abandon::ABANDONED.to_string(),
            });
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

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::clock::spawn;
    use crate::sync::Mutex;

    #[test]
    fn a_thread_sleeping_while_holding_a_lock_stalls_time_and_the_watchdog_names_it() {
        let failure = simulate_on_threads(7, Duration::from_secs(1), |sim| {
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
        let failure =
            simulate_on_threads(11, Duration::from_secs(60), |_| -> () { panic!("boom") })
                .expect_err("the panic must fail the run");
        assert_eq!((failure.seed, failure.message.as_str()), (11, "boom"));
    }
}
