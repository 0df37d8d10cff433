//! The glue compiled against the twins: controlled executions under shuttle's scheduler.

use sim_shuttle as engine_sim;
use threadsim_shuttle as engine_threadsim;

// The same glue, compiled against this build on purpose (see `mod.rs`).
#[allow(clippy::duplicate_mod)]
#[path = "seed.rs"]
pub mod seed;

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::{engine_threadsim, seed};
    use crate::verify::Verification;
    use engine_threadsim::{Engine, Scheduler};
    use std::time::Duration;

    /// A run with a thread that reads the operating system's clock (uncontrolled
    /// nondeterminism): how long it sleeps, and so when its event lands in the trace and which
    /// thread switches follow, depends on the wall clock.
    fn run_reading_the_os_clock(seed: u64) -> crate::outcome::SeedOutcome {
        let engine = Engine::Controlled {
            scheduler: Scheduler::Random,
            max_steps: 1_000_000,
            livelock_switches: 1_000_000,
        };
        let run = engine_threadsim::simulate(seed, &engine, |sim| {
            let clock = sim.clock();
            let trace = sim.trace().clone();
            let sleeper = engine_threadsim::spawn(&clock, "reads-the-os-clock", {
                let clock = clock.clone();
                move || {
                    #[allow(clippy::disallowed_methods)] // the nondeterminism under test
                    let nanos = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |elapsed| elapsed.subsec_nanos());
                    clock.sleep(Duration::from_micros(u64::from(nanos % 1_000_000)));
                    trace.record(clock.now(), engine_threadsim::Level::Info, "woke".into());
                }
            });
            clock.sleep(Duration::from_millis(1));
            sim.trace()
                .record(clock.now(), engine_threadsim::Level::Info, "main".into());
            sleeper.join();
            panic!("the failure whose replay is checked");
        });
        seed::record(seed, run).1
    }

    #[test]
    fn a_run_that_reads_the_os_clock_is_reported_as_nondeterministic() {
        let first = run_reading_the_os_clock(5);
        assert_eq!(
            first.failure.as_deref(),
            Some("the failure whose replay is checked")
        );
        let verification = Verification::compare(&first, run_reading_the_os_clock(5), true);
        assert!(verification.diverged(), "{verification:?}");
        let report = verification.describe(&first);
        assert!(
            report.starts_with("NONDETERMINISM") && report.contains("the trace"),
            "{report}"
        );
    }

    #[test]
    fn a_run_with_only_seeded_choices_replays_identically() {
        let run = |seed| {
            let engine = Engine::Controlled {
                scheduler: Scheduler::Random,
                max_steps: 1_000_000,
                livelock_switches: 1_000_000,
            };
            let run = engine_threadsim::simulate(seed, &engine, |sim| {
                let clock = sim.clock();
                let mut rng = sim.rng(1);
                let workers: Vec<_> = (0..4)
                    .map(|i| {
                        let (clock, trace) = (clock.clone(), sim.trace().clone());
                        let pause = Duration::from_micros(rng.range_inclusive(1, 1000));
                        engine_threadsim::spawn(&clock.clone(), format!("worker-{i}"), move || {
                            clock.sleep(pause);
                            trace.record(
                                clock.now(),
                                engine_threadsim::Level::Info,
                                format!("{i}"),
                            );
                        })
                    })
                    .collect();
                for worker in workers {
                    worker.join();
                }
                panic!("the failure whose replay is checked");
            });
            seed::record(seed, run).1
        };
        let first = run(5);
        assert_eq!(first.trace.events.len(), 4);
        assert!(Verification::compare(&first, run(5), true).holds());
    }

    /// Two threads that switch `rounds` times each at simulated time zero (yielding, never
    /// blocking), then sleep; `None`: forever.
    fn two_spinners(
        seed: u64,
        rounds: Option<u32>,
        livelock_switches: u64,
    ) -> (Option<()>, crate::outcome::SeedOutcome) {
        two_spinners_from(seed, Duration::ZERO, rounds, livelock_switches)
    }

    /// [`two_spinners`] that trace one event at time zero and sleep `from` before they spin.
    fn two_spinners_from(
        seed: u64,
        from: Duration,
        rounds: Option<u32>,
        livelock_switches: u64,
    ) -> (Option<()>, crate::outcome::SeedOutcome) {
        let engine = Engine::Controlled {
            scheduler: Scheduler::Random,
            max_steps: 10_000_000,
            livelock_switches,
        };
        let run = engine_threadsim::simulate(seed, &engine, move |sim| {
            let clock = sim.clock();
            if !from.is_zero() {
                let start = clock.now();
                let info = engine_threadsim::Level::Info;
                sim.trace().record(start, info, "the last event".into());
            }
            let spinners: Vec<_> = ["spinner-a", "spinner-b"]
                .into_iter()
                .map(|name| {
                    let clock = clock.clone();
                    engine_threadsim::spawn(&clock.clone(), name, move || {
                        clock.sleep(from);
                        let mut round = 0;
                        while rounds.is_none_or(|rounds| round < rounds) {
                            engine_threadsim::sync::thread::yield_now();
                            round += 1;
                        }
                        clock.sleep(Duration::from_millis(1));
                    })
                })
                .collect();
            for spinner in spinners {
                spinner.join();
            }
        });
        seed::record(seed, run)
    }

    #[test]
    fn threads_that_never_all_block_stop_as_a_livelock_naming_them_and_busy_ones_that_block_do_not()
    {
        let (value, outcome) = two_spinners(3, None, 20_000);
        assert!(value.is_none());
        let failure = outcome.failure.clone().expect("a livelock");
        assert!(
            failure.starts_with(
                "livelock: 20000 thread switches while simulated time stood still at 0.000000s"
            ),
            "{failure}"
        );
        assert!(
            failure.contains("spinner-a: ") && failure.contains("spinner-b: "),
            "{failure}"
        );
        assert_eq!(sim::shrink::violation_kind(&failure), "livelock");
        let again = two_spinners(3, None, 20_000).1;
        assert!(
            Verification::compare(&outcome, again, true).holds(),
            "it replays"
        );

        // As many switches at one instant, then a sleep each: under the bound, and measured.
        let (value, outcome) = two_spinners(3, Some(5_000), 20_000);
        assert!(value.is_some(), "{:?}", outcome.failure);
        let most = outcome
            .schedule
            .expect("a controlled run")
            .most_switches_standing_still;
        assert!((10_000..20_000).contains(&most), "{most}");
    }

    #[test]
    fn a_livelock_stops_where_its_threads_spin_not_at_its_last_trace_event() {
        let from = Duration::from_micros(7_500);
        let (_, outcome) = two_spinners_from(3, from, None, 20_000);
        let failure = outcome.failure.clone().expect("a livelock");
        assert!(failure.contains("stood still at 0.007500s"), "{failure}");
        assert_eq!(outcome.trace.events.len(), 1);
        assert_eq!(outcome.trace.events[0].at.since_epoch(), Duration::ZERO);
        // The failed run's schedule must end past the spinning instant: a replay that woke its
        // driver before it (at the trace's last event and a millisecond) took another path.
        assert_eq!(seed::stopped_at(&outcome), from);
    }
}
