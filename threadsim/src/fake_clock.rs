//! [`FakeClock`]: simulated time with the semantics of Go's `testing/synctest`.
//!
//! Time advances, jumping straight to the next deadline, only when every registered thread is
//! *durably blocked*: waiting on a clock [`Signal`](crate::Signal) (sleeping, waiting for a
//! notification, a channel, a join). A thread blocked on a mutex, or running, is not durably
//! blocked, so time stands still until it gets there.
//!
//! Accounting is waker-side: whoever wakes a waiter (a notifier, or the thread that advances
//! time) un-counts it in the same critical section, so there is never a moment where a woken
//! thread still counts as blocked and time could jump past work it is about to do.
//!
//! There is no driver thread: the thread whose wait (or exit) makes everyone durably blocked
//! advances time itself. Everything sits under one mutex; each signal has its own condvar, so a
//! wake-up wakes exactly one thread.

use crate::clock::{SignalId, ThreadTicket};
use crate::sync::{thread, Arc, Condvar, Mutex, MutexGuard, Waiting};
use crate::{Clock, Instant, Wake};
use std::collections::{BTreeMap, BTreeSet};

/// A clock whose time moves only when every registered thread is durably blocked.
pub struct FakeClock {
    state: Mutex<State>,
}

struct Slot {
    label: std::sync::Arc<str>,
    permit: bool,
    waiting: bool,
    waiter: Option<String>,
    deadline: Option<Instant>,
    wake: Arc<Condvar>,
}

#[derive(Default)]
struct State {
    now: Instant,
    registered: BTreeMap<ThreadTicket, String>,
    next_ticket: u64,
    durably_blocked: usize,
    slots: Vec<Option<Slot>>,
    free_slots: Vec<usize>,
    timers: BTreeSet<(Instant, SignalId)>,
    time_steps: u64,
    deadlock: Option<String>,
}

/// How far a simulation has come, for progress displays and the watchdog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockProgress {
    /// Simulated time.
    pub now: Instant,
    /// How many times time has jumped forward.
    pub time_steps: u64,
    /// Whether every thread is durably blocked with no deadline left (nothing can ever run).
    pub deadlocked: bool,
}

impl Default for FakeClock {
    fn default() -> Self {
        FakeClock::new()
    }
}

impl FakeClock {
    /// A clock at simulated time zero with no registered threads.
    pub fn new() -> FakeClock {
        FakeClock {
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Where the simulation is.
    pub fn progress(&self) -> ClockProgress {
        let state = self.lock();
        ClockProgress {
            now: state.now,
            time_steps: state.time_steps,
            deadlocked: state.deadlock.is_some(),
        }
    }

    /// A description of every registered thread and every waiter, for stall reports.
    pub fn report(&self) -> String {
        let state = self.lock();
        let mut out = format!(
            "simulated time {}; {} registered threads, {} durably blocked\n",
            state.now,
            state.registered.len(),
            state.durably_blocked
        );
        if let Some(deadlock) = &state.deadlock {
            out.push_str(&format!("deadlock: {deadlock}\n"));
        }
        let names: Vec<&str> = state.registered.values().map(String::as_str).collect();
        out.push_str(&format!("registered: {}\n", names.join(", ")));
        let waiting: BTreeSet<&str> = state
            .slots
            .iter()
            .flatten()
            .filter(|s| s.waiting)
            .filter_map(|s| s.waiter.as_deref())
            .collect();
        for slot in state.slots.iter().flatten().filter(|slot| slot.waiting) {
            let deadline = slot
                .deadline
                .map_or("no deadline".to_string(), |d| format!("until {d}"));
            let who = slot.waiter.as_deref().unwrap_or("<unnamed>");
            out.push_str(&format!(
                "  {who}: durably blocked on '{}' ({deadline})\n",
                slot.label
            ));
        }
        for name in names.iter().filter(|name| !waiting.contains(*name)) {
            out.push_str(&format!(
                "  {name}: NOT durably blocked (running, or blocked on a lock)\n"
            ));
        }
        out
    }
}

impl State {
    fn slot(&mut self, id: SignalId) -> &mut Slot {
        self.slots[id.0]
            .as_mut()
            .expect("signal used after it was destroyed")
    }

    /// Wakes the waiter of `id` and un-counts it (waker-side accounting).
    fn wake(&mut self, id: SignalId) {
        let slot = self.slot(id);
        debug_assert!(slot.waiting);
        slot.waiting = false;
        slot.waiter = None;
        let deadline = slot.deadline.take();
        let wake = slot.wake.clone();
        if let Some(deadline) = deadline {
            self.timers.remove(&(deadline, id));
        }
        assert!(
            self.durably_blocked > 0,
            "waking {id:?} with no thread counted as blocked"
        );
        self.durably_blocked -= 1;
        wake.notify_one();
    }

    /// If every registered thread is durably blocked, jumps to the next deadline and wakes
    /// everyone due then.
    fn advance_if_quiescent(&mut self) {
        assert!(
            self.durably_blocked <= self.registered.len(),
            "{} threads durably blocked but only {} registered: a thread waited on the fake clock \
             without being spawned through threadsim::spawn",
            self.durably_blocked,
            self.registered.len()
        );
        while !self.registered.is_empty() && self.durably_blocked == self.registered.len() {
            let Some(&(deadline, _)) = self.timers.first() else {
                self.deadlock = Some(format!(
                    "all {} threads wait with no deadline and nobody left to wake them",
                    self.registered.len()
                ));
                return;
            };
            assert!(
                deadline >= self.now,
                "timer {deadline} in the past (now {})",
                self.now
            );
            self.now = deadline;
            self.time_steps += 1;
            crate::sync::note_time(deadline);
            while let Some(&(due, id)) = self.timers.first() {
                if due != deadline {
                    break;
                }
                self.wake(id);
            }
        }
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        self.lock().now
    }

    fn signal_create(&self, label: &str) -> SignalId {
        let mut state = self.lock();
        let slot = Slot {
            label: label.into(),
            permit: false,
            waiting: false,
            waiter: None,
            deadline: None,
            wake: Arc::new(Condvar::new()),
        };
        match state.free_slots.pop() {
            Some(free) => {
                state.slots[free] = Some(slot);
                SignalId(free)
            }
            None => {
                state.slots.push(Some(slot));
                SignalId(state.slots.len() - 1)
            }
        }
    }

    fn signal_destroy(&self, id: SignalId) {
        let mut state = self.lock();
        let slot = state.slots[id.0].take().expect("signal destroyed twice");
        assert!(
            !slot.waiting,
            "signal '{}' destroyed while a thread waits on it",
            slot.label
        );
        state.free_slots.push(id.0);
    }

    fn signal_wait(&self, id: SignalId, deadline: Option<Instant>) -> Wake {
        let mut state = self.lock();
        let now = state.now;
        let slot = state.slot(id);
        if slot.permit {
            slot.permit = false;
            return Wake::Notified;
        }
        if deadline.is_some_and(|deadline| deadline <= now) {
            return Wake::TimedOut;
        }
        assert!(!slot.waiting, "two threads wait on signal '{}'", slot.label);
        slot.waiting = true;
        slot.deadline = deadline;
        slot.waiter = Some(thread::current().name().unwrap_or("<unnamed>").to_string());
        let wake = slot.wake.clone();
        if let Some(deadline) = deadline {
            state.timers.insert((deadline, id));
        }
        state.durably_blocked += 1;
        let _note = crate::sync::note_wait(|| Waiting::Signal {
            label: state.slot(id).label.clone(),
            deadline,
        });
        state.advance_if_quiescent();
        while state.slot(id).waiting {
            state = wake.wait(state);
        }
        let slot = state.slot(id);
        if slot.permit {
            slot.permit = false;
            Wake::Notified
        } else {
            Wake::TimedOut
        }
    }

    fn signal_notify(&self, id: SignalId) {
        let mut state = self.lock();
        let slot = state.slot(id);
        slot.permit = true;
        if slot.waiting {
            state.wake(id);
        }
    }

    fn thread_register(&self, name: &str) -> ThreadTicket {
        let mut state = self.lock();
        let ticket = ThreadTicket(state.next_ticket);
        state.next_ticket += 1;
        state.registered.insert(ticket, name.to_string());
        ticket
    }

    fn thread_unregister(&self, ticket: ThreadTicket) {
        let mut state = self.lock();
        state
            .registered
            .remove(&ticket)
            .expect("thread unregistered twice");
        state.advance_if_quiescent();
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::clock::{spawn, ClockRef};
    use crate::Signal;
    use std::time::Duration;

    fn with_registered_main<T>(
        clock: &Arc<FakeClock>,
        body: impl FnOnce(ClockRef) -> T + Send + 'static,
    ) -> T
    where
        T: Send + 'static,
    {
        let clock_ref: ClockRef = clock.clone();
        let handle = {
            let ticket = clock.thread_register("test-main");
            let clock_ref = clock_ref.clone();
            std::thread::Builder::new()
                .name("test-main".into())
                .spawn(move || {
                    let value = body(clock_ref.clone());
                    clock_ref.thread_unregister(ticket);
                    value
                })
                .unwrap()
        };
        handle.join().unwrap()
    }

    #[test]
    fn sleepers_wake_in_deadline_order_and_time_jumps() {
        let clock = Arc::new(FakeClock::new());
        let order = with_registered_main(&clock, |clock| {
            let log = Arc::new(Mutex::new(Vec::new()));
            let handles: Vec<_> = [30u64, 10, 20]
                .into_iter()
                .map(|ms| {
                    let (clock2, log) = (clock.clone(), log.clone());
                    spawn(&clock, format!("sleeper-{ms}"), move || {
                        clock2.sleep(Duration::from_millis(ms));
                        log.lock().push((ms, clock2.now()));
                    })
                })
                .collect();
            for handle in handles {
                handle.join();
            }
            let order = log.lock().clone();
            order
        });
        let expected: Vec<_> = [10u64, 20, 30]
            .iter()
            .map(|&ms| (ms, Instant::from_epoch(Duration::from_millis(ms))))
            .collect();
        assert_eq!(order, expected);
    }

    #[test]
    fn time_does_not_advance_while_a_thread_is_runnable() {
        let clock = Arc::new(FakeClock::new());
        let observed = with_registered_main(&clock, |clock| {
            let signal = Arc::new(Signal::new(&clock, "go"));
            let waiter_signal = signal.clone();
            let waiter = spawn(&clock, "waiter", move || {
                // Would time out at 1 s, but the notification comes at simulated time 0.
                waiter_signal.wait_until(Some(Instant::from_epoch(Duration::from_secs(1))))
            });
            // Busy work on this thread: the waiter is blocked, but this thread is not, so time
            // must stay at zero.
            let mut spins = 0u64;
            for i in 0..100_000u64 {
                spins = spins.wrapping_add(i);
            }
            assert_eq!(
                clock.now(),
                Instant::ZERO,
                "time moved while a thread was running {spins}"
            );
            signal.notify();
            waiter.join()
        });
        assert_eq!(observed, Wake::Notified);
    }

    #[test]
    fn a_wait_with_no_deadline_and_nobody_to_wake_is_reported_as_deadlock() {
        let clock = Arc::new(FakeClock::new());
        let clock_ref: ClockRef = clock.clone();
        let ticket = clock.thread_register("stuck");
        let stuck_clock = clock_ref.clone();
        std::thread::Builder::new()
            .name("stuck".into())
            .spawn(move || {
                let signal = Signal::new(&stuck_clock, "never notified");
                signal.wait();
                stuck_clock.thread_unregister(ticket);
            })
            .unwrap();
        while !clock.progress().deadlocked {
            std::thread::yield_now();
        }
        let report = clock.report();
        assert!(
            report.contains("stuck: durably blocked on 'never notified'"),
            "{report}"
        );
    }
}
