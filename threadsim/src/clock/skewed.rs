//! [`SkewedClock`]: one machine's view of a shared clock, running at its own rate and able to
//! jump forward, for simulating clock skew between nodes.
//!
//! Local time is a piecewise-linear function of the underlying (true) time: from the last change
//! on, `local = base_local + (true - base_true) * rate`. A change of rate or a jump starts a new
//! piece at the current instant, so local time never goes back. Deadlines are local: a wait
//! converts its deadline to true time, and when the rate or offset changes while it waits, it is
//! woken (a re-arm, not a notification its caller sees) to convert the deadline again. So a
//! thread sleeping until local 1.000 s wakes exactly when its own clock reads 1.000 s, however
//! the clock was changed in between.
//!
//! The bookkeeping sits behind a `std` mutex held only to compute and record, never across a
//! call into the inner clock (under a controlled scheduler such a call can switch threads, and
//! a thread switched out while holding a lock the scheduler does not know would block the next
//! one for good). So wrapping a fake clock adds no thread switch to a controlled execution: a run
//! whose clocks keep rate 1 and never jump switches threads exactly as it would without it.

use super::{Clock, ClockRef, SignalId, ThreadTicket, Wake};
use crate::sync::Arc;
use crate::Instant;
use std::collections::BTreeMap;
use std::time::Duration;

/// A clock rate in parts per million of true time: 1,000,000 is exact, 900,000 runs at 0.9x.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RatePpm(pub u64);

impl RatePpm {
    /// The rate of a clock that keeps true time.
    pub const EXACT: RatePpm = RatePpm(PPM);
    /// The slowest rate a clock may run at (a tenth of true time).
    pub const SLOWEST: RatePpm = RatePpm(PPM / 10);
    /// The fastest rate a clock may run at (ten times true time).
    pub const FASTEST: RatePpm = RatePpm(PPM * 10);

    /// The rate as a factor of true time (1.0 is exact).
    pub fn factor(self) -> f64 {
        self.0 as f64 / PPM as f64
    }
}

impl std::fmt::Display for RatePpm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x", self.factor())
    }
}

const PPM: u64 = 1_000_000;

/// A clock that runs at its own rate over `inner`, and can jump forward.
pub struct SkewedClock {
    inner: ClockRef,
    state: std::sync::Mutex<State>,
}

struct State {
    rate: RatePpm,
    /// Local and true time at the start of the current piece.
    base_local: Instant,
    base_true: Instant,
    /// Per signal: a notification its owner has not consumed yet, and whether it waits now.
    signals: BTreeMap<SignalId, SignalState>,
}

#[derive(Default)]
struct SignalState {
    permit: bool,
    waiting: bool,
    /// Re-arms sent but not finished: the inner signal must outlive them.
    rearms_in_flight: u32,
    /// Its owner destroyed it while a re-arm was in flight: the last re-arm destroys it.
    destroyed: bool,
}

impl State {
    fn local(&self, true_now: Instant) -> Instant {
        let elapsed = micros(true_now.saturating_since(self.base_true));
        let scaled = elapsed * u128::from(self.rate.0) / u128::from(PPM);
        self.base_local + Duration::from_micros(u64::try_from(scaled).unwrap_or(u64::MAX))
    }

    /// The first true instant at which local time reaches `local`, but not before `true_now`.
    fn true_deadline(&self, local: Instant, true_now: Instant) -> Instant {
        if local <= self.local(true_now) {
            return true_now;
        }
        let ahead = micros(local.saturating_since(self.base_local));
        // Rounded up, so that local time at the returned instant is at least `local`.
        let scaled = (ahead * u128::from(PPM)).div_ceil(u128::from(self.rate.0));
        self.base_true + Duration::from_micros(u64::try_from(scaled).unwrap_or(u64::MAX))
    }
}

fn micros(duration: Duration) -> u128 {
    duration.as_micros()
}

impl SkewedClock {
    /// A clock that starts where `inner` is and keeps its rate until told otherwise.
    pub fn new(inner: ClockRef) -> Arc<SkewedClock> {
        let now = inner.now();
        Arc::new(SkewedClock {
            inner,
            state: std::sync::Mutex::new(State {
                rate: RatePpm::EXACT,
                base_local: now,
                base_true: now,
                signals: BTreeMap::new(),
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The clock's rate from now on.
    pub fn rate(&self) -> RatePpm {
        self.lock().rate
    }

    /// From now on the clock runs at `rate` (clamped to [`RatePpm::SLOWEST`] ..=
    /// [`RatePpm::FASTEST`]).
    pub fn set_rate(&self, rate: RatePpm) {
        let rate = rate.clamp(RatePpm::SLOWEST, RatePpm::FASTEST);
        self.change(|state, true_now| {
            state.base_local = state.local(true_now);
            state.base_true = true_now;
            state.rate = rate;
        });
    }

    /// The clock jumps `by` forward at once.
    pub fn jump(&self, by: Duration) {
        self.change(|state, true_now| {
            state.base_local = state.local(true_now) + by;
            state.base_true = true_now;
        });
    }

    /// Applies `change` and re-arms every timed wait in progress. A signal whose owner destroys
    /// it meanwhile is destroyed in the inner clock only once its re-arm is done.
    fn change(&self, change: impl FnOnce(&mut State, Instant)) {
        let true_now = self.inner.now();
        let waiting: Vec<SignalId> = {
            let mut state = self.lock();
            change(&mut state, true_now);
            state
                .signals
                .iter_mut()
                .filter(|(_, signal)| signal.waiting)
                .map(|(&id, signal)| {
                    signal.rearms_in_flight += 1;
                    id
                })
                .collect()
        };
        for id in waiting {
            self.inner.signal_notify(id);
            let finished = {
                let mut state = self.lock();
                let signal = state.signals.get_mut(&id).expect("kept while re-armed");
                signal.rearms_in_flight -= 1;
                let finished = signal.destroyed && signal.rearms_in_flight == 0;
                if finished {
                    state.signals.remove(&id);
                }
                finished
            };
            if finished {
                self.inner.signal_destroy(id);
            }
        }
    }
}

impl Clock for SkewedClock {
    fn now(&self) -> Instant {
        let true_now = self.inner.now();
        self.lock().local(true_now)
    }

    fn signal_create(&self, label: &str) -> SignalId {
        let id = self.inner.signal_create(label);
        self.lock().signals.insert(id, SignalState::default());
        id
    }

    fn signal_destroy(&self, id: SignalId) {
        {
            let mut state = self.lock();
            let signal = state.signals.get_mut(&id).expect("a live signal");
            if signal.rearms_in_flight > 0 {
                signal.destroyed = true;
                return;
            }
            state.signals.remove(&id);
        }
        self.inner.signal_destroy(id);
    }

    fn signal_wait(&self, id: SignalId, deadline: Option<Instant>) -> Wake {
        loop {
            let true_now = self.inner.now();
            let true_deadline = {
                let mut state = self.lock();
                let true_deadline = deadline.map(|local| state.true_deadline(local, true_now));
                let signal = state.signals.get_mut(&id).expect("a wait on a live signal");
                if std::mem::take(&mut signal.permit) {
                    return Wake::Notified;
                }
                signal.waiting = true;
                true_deadline
            };
            let wake = self.inner.signal_wait(id, true_deadline);
            let true_now = self.inner.now();
            let mut state = self.lock();
            let local_now = state.local(true_now);
            let signal = state.signals.get_mut(&id).expect("a wait on a live signal");
            signal.waiting = false;
            if std::mem::take(&mut signal.permit) {
                return Wake::Notified;
            }
            if wake == Wake::TimedOut && deadline.is_some_and(|local| local_now >= local) {
                return Wake::TimedOut;
            }
            // A re-arm after a change of rate or a jump, or a deadline that the clock's slowing
            // moved later: convert the deadline again.
        }
    }

    fn signal_notify(&self, id: SignalId) {
        if let Some(signal) = self.lock().signals.get_mut(&id) {
            signal.permit = true;
        }
        self.inner.signal_notify(id);
    }

    fn thread_register(&self, name: &str) -> ThreadTicket {
        self.inner.thread_register(name)
    }

    fn thread_unregister(&self, ticket: ThreadTicket) {
        self.inner.thread_unregister(ticket)
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::simulation::simulate_on_threads;
    use crate::{spawn, Signal};

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_fast_clock_reads_more_and_sleeps_less_true_time() {
        simulate_on_threads(1, Duration::from_secs(10), |sim| {
            let truth = sim.clock();
            let skewed = SkewedClock::new(truth.clone());
            skewed.set_rate(RatePpm(1_250_000));
            let local_start = skewed.now();
            let true_start = truth.now();
            skewed.sleep(ms(1000));
            assert_eq!(skewed.now() - local_start, ms(1000));
            assert_eq!(truth.now() - true_start, ms(800));
        })
        .expect("no stall");
    }

    #[test]
    fn a_change_while_waiting_moves_the_wake_up_to_the_local_deadline() {
        simulate_on_threads(2, Duration::from_secs(10), |sim| {
            let truth = sim.clock();
            let skewed = SkewedClock::new(truth.clone());
            let skewed_ref: ClockRef = skewed.clone();
            let sleeper = {
                let skewed_ref = skewed_ref.clone();
                spawn(&truth, "sleeper", move || {
                    let start = skewed_ref.now();
                    skewed_ref.sleep(ms(1000));
                    skewed_ref.now() - start
                })
            };
            truth.sleep(ms(100));
            // 100 ms of local time gone; the rest runs twice as fast, then jumps 200 ms.
            skewed.set_rate(RatePpm(2_000_000));
            truth.sleep(ms(100));
            skewed.jump(ms(200));
            let slept_local = sleeper.join();
            assert_eq!(slept_local, ms(1000));
            // 100 true ms at 1x, 100 at 2x (200 local), a 200 ms jump: 500 local ms in 200 true
            // ms; the last 500 local ms take 250 true ms.
            assert_eq!(truth.now().since_epoch(), ms(450));
        })
        .expect("no stall");
    }

    #[test]
    fn a_slowed_clock_does_not_time_out_early_and_notifications_still_count() {
        simulate_on_threads(3, Duration::from_secs(10), |sim| {
            let truth = sim.clock();
            let skewed = SkewedClock::new(truth.clone());
            let skewed_ref: ClockRef = skewed.clone();
            let signal = Arc::new(Signal::new(&skewed_ref, "woken"));
            let waiter = {
                let (signal, skewed_ref) = (signal.clone(), skewed_ref.clone());
                spawn(&truth, "waiter", move || {
                    let deadline = skewed_ref.now() + ms(1000);
                    let first = signal.wait_until(Some(deadline));
                    let second = signal.wait_until(Some(deadline));
                    (first, second, skewed_ref.now() >= deadline)
                })
            };
            truth.sleep(ms(500));
            skewed.set_rate(RatePpm(500_000));
            truth.sleep(ms(10));
            signal.notify();
            let (first, second, reached) = waiter.join();
            assert_eq!(
                (first, second, reached),
                (Wake::Notified, Wake::TimedOut, true)
            );
            // 500 local ms at 1x, the other 500 at 0.5x take 1000 true ms.
            assert_eq!(truth.now().since_epoch(), ms(1500));
        })
        .expect("no stall");
    }
}
