//! Controlled executions (shuttle builds only): one run of a body under a scheduler seeded by the
//! run's seed, on the calling OS thread, so the schedule and everything that follows from it is
//! a function of the seed. Several OS threads may each run their own executions at once.

mod schedulers;
mod still_time;
mod witness;

use crate::schedule::{ScheduleSummary, Scheduler};
use shuttle::{Config, FailurePersistence, MaxSteps, Runner};
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::{Arc, Mutex, Once};

pub(crate) use witness::WaitNote;

/// This build can run controlled executions.
pub const AVAILABLE: bool = true;

/// Stack of every task: node and checker code is deeper than shuttle's 60 KiB default.
const STACK_SIZE: usize = 1 << 20;

std::thread_local! {
    /// Set while this OS thread runs a controlled execution: its panics are reported as the
    /// run's failure, not printed.
    static IN_EXECUTION: Cell<bool> = const { Cell::new(false) };
}

std::thread_local! {
    /// The simulated time the execution on this OS thread has reached (microseconds), for the
    /// random scheduler to draw each instant's choices from a stream of that instant's own.
    static SIMULATED_NOW: Cell<u64> = const { Cell::new(0) };
}

std::thread_local! {
    /// How many trace events the execution on this OS thread has recorded: work that shows.
    static TRACED: Cell<u64> = const { Cell::new(0) };
}

/// Notes that the run recorded a trace event (the trace calls it): threads that switch while
/// simulated time stands still but trace as they go are working, not livelocked (a node that
/// applies thousands of entries at one instant after a restart).
pub(crate) fn note_traced() {
    TRACED.set(TRACED.get() + 1);
}

/// Trace events recorded by the execution on this OS thread.
pub(super) fn traced() -> u64 {
    TRACED.get()
}

/// Notes that simulated time has reached `now` (the fake clock calls it as it advances).
pub(crate) fn note_time(now: crate::Instant) {
    SIMULATED_NOW.set(now.since_epoch().as_micros() as u64);
}

/// The simulated time this OS thread's execution has reached.
pub(super) fn simulated_now() -> u64 {
    SIMULATED_NOW.get()
}

/// Notes what the current task waits for (see [`witness`]).
pub(crate) fn note_wait(what: impl FnOnce() -> super::Waiting) -> WaitNote {
    witness::waiting(what())
}

/// Runs `body` once under `scheduler` seeded by `seed`, failing after `max_steps` scheduling
/// steps, or as a livelock after `livelock_switches` thread switches with neither simulated time
/// nor the trace moving. Returns the body's value or the failure (a panic's message, a deadlock
/// with what every task waits for, a livelock with the threads that kept running), and the
/// summary of the schedule it ran.
pub(crate) fn run<T, F>(
    seed: u64,
    scheduler: Scheduler,
    max_steps: u64,
    livelock_switches: u64,
    body: F,
) -> (Result<T, String>, ScheduleSummary)
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    quiet_panics_inside_executions();
    witness::reset();
    SIMULATED_NOW.set(0);
    TRACED.set(0);
    let summary = Rc::new(Cell::new(ScheduleSummary::default()));
    let livelock = Rc::new(RefCell::new(None));
    let scheduler = schedulers::Controlled::new(
        seed,
        scheduler,
        summary.clone(),
        livelock_switches,
        livelock.clone(),
    );
    let mut config = Config::new();
    config.stack_size = STACK_SIZE;
    config.failure_persistence = FailurePersistence::None;
    config.max_steps = MaxSteps::FailAfter(usize::try_from(max_steps).unwrap_or(usize::MAX));
    config.silence_warnings = true;
    let result: Arc<Mutex<Option<Result<T, String>>>> = Arc::default();
    let body = Mutex::new(Some(body));
    let slot = result.clone();
    let runner = Runner::new(scheduler, config);
    IN_EXECUTION.set(true);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        runner.run(move || {
            let body = lock(&body).take().expect("a controlled run executes once");
            // A panic of the body is the run's failure; caught here, shuttle sees a clean end.
            let value = panic::catch_unwind(AssertUnwindSafe(body))
                .map_err(|payload| crate::panic_message::panic_message(&*payload));
            *lock(&slot) = Some(value);
        })
    }));
    IN_EXECUTION.set(false);
    let summary = summary.get();
    let livelock = livelock.borrow_mut().take();
    let value = match outcome {
        // Stopped by the scheduler: the body never finished.
        Ok(_) if livelock.is_some() => Err(livelock.expect("just seen").to_string()),
        Ok(_) if lock(&result).is_none() && crate::abandon::runs_abandoned() => {
            Err(crate::abandon::ABANDONED.to_string())
        }
        Ok(_) => lock(&result)
            .take()
            .unwrap_or_else(|| Err("the execution ended without running its body".into())),
        // The body failed first: the threads it left behind could not go on without it (they
        // wait for a clock only it advanced), and that end is not the run's failure.
        Err(_) if matches!(*lock(&result), Some(Err(_))) => {
            lock(&result).take().expect("the body's failure, just seen")
        }
        Err(payload) => {
            let message = crate::panic_message::panic_message(&*payload);
            let waits = witness::report();
            if message.starts_with("deadlock") && !waits.lines.is_empty() {
                Err(format!(
                    "{}\n{}{message}",
                    deadlock_headline(&waits),
                    waits.lines
                ))
            } else if message.starts_with("exceeded max_steps bound") {
                Err(schedule_cap(max_steps))
            } else {
                Err(message)
            }
        }
    };
    (value, summary)
}

/// Bytes shuttle keeps per scheduling step of an execution (its `ScheduleStep`, for replay).
const BYTES_PER_STEP: u64 = 16;

/// Why a run that made `max_steps` scheduling steps in all was stopped: the memory of its
/// schedule, which shuttle keeps whole, is capped.
fn schedule_cap(max_steps: u64) -> String {
    format!(
        "schedule cap: {max_steps} scheduling steps in all, the most a deterministic run records \
         (shuttle keeps every step: about {} MiB): run shorter seeds, or --scheduler os",
        (max_steps * BYTES_PER_STEP) >> 20
    )
}

/// The first line of a deadlock report: why nothing can run.
fn deadlock_headline(waits: &witness::Report) -> String {
    if waits.on_locks == 0 {
        format!(
            "deadlock: all {} threads wait on the clock and none has a deadline or a waker left",
            waits.on_signals
        )
    } else {
        format!(
            "deadlock: no thread can run: {} wait for a lock, and simulated time cannot advance \
             while they do ({} more wait on the clock)",
            waits.on_locks, waits.on_signals
        )
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Shuttle installs a panic hook of its own on its first execution in a process, which prints
/// how to replay with shuttle's own tools; a failing run here is reported with its seed instead.
/// This puts a hook in its place that stays silent for panics inside a controlled execution and
/// hands every other panic to the hook that was there before.
fn quiet_panics_inside_executions() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        type Hook = dyn Fn(&panic::PanicHookInfo<'_>) + Send + Sync;
        let previous: Arc<Hook> = Arc::from(panic::take_hook());
        let forward = previous.clone();
        panic::set_hook(Box::new(move |info| forward(info)));
        // Shuttle's first execution wraps the hook above in its own.
        let summary = Rc::new(Cell::new(ScheduleSummary::default()));
        let scheduler =
            schedulers::Controlled::new(0, Scheduler::Random, summary, u64::MAX, Rc::default());
        let mut config = Config::new();
        config.failure_persistence = FailurePersistence::None;
        config.silence_warnings = true;
        Runner::new(scheduler, config).run(|| {});
        drop(panic::take_hook());
        panic::set_hook(Box::new(move |info| {
            if !IN_EXECUTION.get() {
                previous(info);
            }
        }));
    });
}
