//! A worker pool whose callers wait for their job's result with a timeout: a small piece of
//! threaded code of the kind `threadsim` exists for, written once against its seams and tested
//! three ways (see `tests/`):
//!
//! - `fake_clock.rs`: on real threads under [`threadsim::FakeClock`]: jobs that take simulated
//!   seconds finish in microseconds, and a timeout fires exactly when simulated time says so;
//! - `loom.rs` (`RUSTFLAGS="--cfg loom"`): every interleaving of a submit, a worker and a
//!   shutdown, including a deliberately broken pool whose lost wake-up loom reports;
//! - `shuttle.rs` (`RUSTFLAGS="--cfg shuttle"`): several callers and workers under shuttle's
//!   random scheduler, with the fake clock.
//!
//! Every timed wait goes through the [`threadsim::Clock`], every lock through
//! [`threadsim::sync`], every thread through [`threadsim::spawn`]: that is all it takes.
#![deny(missing_docs)]

use std::collections::VecDeque;
use threadsim::clock::{spawn, ClockJoinHandle, ClockRef, Signal};
use threadsim::sync::{Arc, Mutex};
use threadsim::Wake;

/// A job: runs on a worker thread and produces a number.
pub type Job = Box<dyn FnOnce() -> u64 + Send>;

/// Why a caller got no result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The job did not finish before the caller's deadline (it may still run).
    TimedOut,
    /// The pool was shut down.
    ShutDown,
}

/// Where a job's result goes: the caller waits on `ready`.
struct Slot {
    result: Mutex<Option<u64>>,
    ready: Signal,
}

struct Queue {
    jobs: VecDeque<(Job, Arc<Slot>)>,
    stopped: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    /// One wake-up signal per worker (a signal has one waiter).
    wake: Vec<Signal>,
    clock: ClockRef,
    /// The deliberately broken variant: wake the workers before the job is queued.
    notify_before_push: bool,
}

/// A fixed set of worker threads taking jobs from one queue.
pub struct Pool {
    shared: Arc<Shared>,
    workers: Mutex<Vec<ClockJoinHandle<()>>>,
}

impl Pool {
    /// A pool of `workers` threads on `clock`.
    pub fn new(clock: &ClockRef, workers: usize) -> Pool {
        Pool::build(clock, workers, false)
    }

    /// The broken pool: `submit` wakes the workers before it queues the job, so a worker that
    /// looks in between finds nothing, goes back to sleep, and the job waits forever (a lost
    /// wake-up). For the loom test that shows loom finds it.
    pub fn with_lost_wakeup(clock: &ClockRef, workers: usize) -> Pool {
        Pool::build(clock, workers, true)
    }

    fn build(clock: &ClockRef, workers: usize, notify_before_push: bool) -> Pool {
        assert!(workers > 0, "a pool needs a worker");
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                stopped: false,
            }),
            wake: (0..workers)
                .map(|i| Signal::new(clock, &format!("worker-{i} wake")))
                .collect(),
            clock: clock.clone(),
            notify_before_push,
        });
        let handles = (0..workers)
            .map(|i| {
                let shared = shared.clone();
                spawn(clock, format!("worker-{i}"), move || shared.work(i))
            })
            .collect();
        Pool {
            shared,
            workers: Mutex::new(handles),
        }
    }

    /// Runs `job` on a worker and waits for its result until `timeout` of the pool's clock has
    /// passed.
    pub fn run(&self, job: Job, timeout: std::time::Duration) -> Result<u64, Refused> {
        let slot = Arc::new(Slot {
            result: Mutex::new(None),
            ready: Signal::new(&self.shared.clock, "result"),
        });
        if self.shared.notify_before_push {
            self.shared.wake_all();
        }
        {
            let mut queue = self.shared.queue.lock();
            if queue.stopped {
                return Err(Refused::ShutDown);
            }
            queue.jobs.push_back((job, slot.clone()));
        }
        if !self.shared.notify_before_push {
            self.shared.wake_all();
        }
        let deadline = self.shared.clock.now() + timeout;
        loop {
            if let Some(result) = *slot.result.lock() {
                return Ok(result);
            }
            if self.shared.queue.lock().stopped {
                return Err(Refused::ShutDown);
            }
            if slot.ready.wait_until(Some(deadline)) == Wake::TimedOut {
                return slot.result.lock().ok_or(Refused::TimedOut);
            }
        }
    }

    /// Stops the workers (a job already running finishes) and joins them.
    pub fn shutdown(&self) {
        self.shared.queue.lock().stopped = true;
        self.shared.wake_all();
        for worker in std::mem::take(&mut *self.workers.lock()) {
            worker.join();
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl Shared {
    fn wake_all(&self) {
        for signal in &self.wake {
            signal.notify();
        }
    }

    /// Worker `index`: take a job, run it without the lock, hand the result over; sleep on its
    /// signal when the queue is empty; exit once stopped.
    fn work(&self, index: usize) {
        loop {
            let next = {
                let mut queue = self.queue.lock();
                if queue.stopped {
                    return;
                }
                queue.jobs.pop_front()
            };
            match next {
                Some((job, slot)) => {
                    let result = job();
                    *slot.result.lock() = Some(result);
                    slot.ready.notify();
                }
                None => self.wake[index].wait(),
            }
        }
    }
}
