//! One seed of a workload on one build of `sim`: compiled once per engine (see `mod.rs`), with
//! `engine_sim` and `engine_threadsim` naming that build's crates. The run's specification and
//! figures are `runspec`'s in both builds; the schedule and the trace leave this file as the
//! ordinary build's types.

use super::{engine_sim, engine_threadsim};
use crate::engines::Watchdog;
use crate::outcome::{KvEvidence, SeedOutcome, TxnEvidence};
use engine_threadsim::{Engine, Scheduler};
use runspec::{RunSpec, SchedulerKind, Workload};

/// Runs `spec` on this build, its events generated, or following `schedule`.
pub fn run(
    spec: &RunSpec,
    watchdog: Watchdog,
    schedule: Option<&sim::schedule::Schedule>,
) -> SeedOutcome {
    let how = engine_for(spec, watchdog);
    let recorder = engine_sim::schedule::ScheduleRecorder::default();
    let following = schedule.map(to_engine);
    let mut outcome = match spec.workload {
        Workload::Raft => {
            let config = engine_sim::ChaosConfig::from_spec(spec);
            let recording = recorder.clone();
            let run = engine_sim::runner::simulate_on(spec.seed, &how, move |sim| {
                let events = match &following {
                    Some(schedule) => engine_sim::ChaosEvents::Following(schedule),
                    None => engine_sim::ChaosEvents::Generated,
                };
                engine_sim::run_chaos_with(sim, &config, events, &recording)
            });
            let (figures, mut outcome) = record(spec.seed, run);
            outcome.figures = figures;
            outcome
        }
        Workload::Kv | Workload::ListAppend => {
            let config = engine_sim::KvWorkloadConfig::from_spec(spec);
            let recording = recorder.clone();
            let run = engine_sim::runner::simulate_on(spec.seed, &how, move |sim| {
                engine_sim::run_kv_workload_with(sim, &config, following.as_ref(), &recording)
            });
            let (kv_run, mut outcome) = record(spec.seed, run);
            if let Some(kv_run) = kv_run {
                // Checked outside the run: the checker's threads are real threads.
                if spec.workload == Workload::ListAppend {
                    let history = kv_run.transactions;
                    let report = models::check_list_append(&history);
                    outcome.failure = engine_sim::txn_client::failure_of(&history, &report);
                    outcome.transactions = Some(TxnEvidence { history, report });
                } else {
                    let report = engine_sim::check_kv_history(&kv_run.history);
                    outcome.failure = kv_failure(&report, &kv_run);
                    outcome.kv = Some(KvEvidence {
                        history: kv_run.history,
                        report,
                    });
                }
                outcome.figures = Some(kv_run.figures);
            }
            outcome
        }
    };
    outcome.schedule_events = from_engine(recorder.take());
    if outcome.failure.is_some() {
        outcome.schedule_events.end_after_stop(stopped_at(&outcome));
    }
    outcome
}

/// The simulated instant a failed run stopped at: where the controlled scheduler's last decision
/// was, else (on OS threads) the trace's last event. A livelock's trace ends before the instant
/// its threads spun at, and a schedule that ended there would wake its driver at an instant the
/// failed run never had, so its replay would take another path (seed 4 of
/// `ticker-check-then-act` did).
pub(super) fn stopped_at(outcome: &SeedOutcome) -> std::time::Duration {
    let traced = (outcome.trace.events.last())
        .map_or(std::time::Duration::ZERO, |event| event.at.since_epoch());
    let reached = (outcome.schedule).map_or(std::time::Duration::ZERO, |summary| {
        std::time::Duration::from_micros(summary.reached_micros)
    });
    traced.max(reached)
}

/// What a key-value run's history shows: `None` when linearizable by both the online checker
/// and the whole history's `report`. A violation found online is also a verdict of not
/// linearizable where the whole check ran out of budget; one the whole check contradicts is a
/// bug of the checkers, said so.
fn kv_failure(report: &models::Report, run: &engine_sim::KvRun) -> Option<String> {
    use models::Verdict;
    let online = run.found_online.as_ref();
    let verdict = match (report.verdict, online) {
        (Verdict::Linearizable, None) => return None,
        (Verdict::Linearizable, Some(found)) => {
            return Some(format!(
                "the online checker and the whole history's check disagree (a bug of the \
                 checkers): online, {}",
                found.description
            ))
        }
        (Verdict::Unknown, Some(_)) => Verdict::NotLinearizable,
        (verdict, _) => verdict,
    };
    let key = (report.counterexample())
        .map(|(partition, _)| format!(" (key {})", partition.name))
        .unwrap_or_default();
    let mut failure = format!(
        "client history {verdict:?}{key}: {} operations, {} reads served by deposed leaders",
        run.history.len(),
        run.figures.reads_by_deposed_leaders
    );
    if let Some(found) = online {
        failure.push_str(&format!(
            "; found online at {:?} (key {}), {:?} after the operation that made it certain \
             returned, and the workload stopped there (the window is in the trace)",
            found.found_at,
            found.key,
            found.delay(),
        ));
    }
    Some(failure)
}

/// A schedule of the ordinary build as the engine's build reads it (through the text format,
/// which both builds share).
fn to_engine(schedule: &sim::schedule::Schedule) -> engine_sim::schedule::Schedule {
    schedule
        .to_string()
        .parse()
        .expect("a schedule reads back its own text")
}

/// The engine's recorded events as the ordinary build's schedule (no notes yet).
fn from_engine(events: Vec<engine_sim::schedule::Timed>) -> sim::schedule::Schedule {
    let recorded = engine_sim::schedule::Schedule {
        notes: Vec::new(),
        events,
    };
    recorded
        .to_string()
        .parse()
        .expect("a schedule reads back its own text")
}

/// A finished run as a seed outcome (with no figures yet), and the body's value if it
/// finished.
pub fn record<T>(seed: u64, run: engine_threadsim::Run<T>) -> (Option<T>, SeedOutcome) {
    let (value, failure) = match run.result {
        Ok(value) => (Some(value), None),
        Err(failure) => (None, Some(failure.message)),
    };
    let outcome = SeedOutcome {
        seed,
        failure,
        figures: None,
        trace: trace(run.trace),
        schedule: run.schedule.map(schedule),
        kv: None,
        transactions: None,
        schedule_events: sim::schedule::Schedule::default(),
        coverage: run.coverage,
        faults_fired: run.faults_fired,
    };
    (value, outcome)
}

/// The engine for this build.
fn engine_for(spec: &RunSpec, watchdog: Watchdog) -> Engine {
    let max_steps = engine_sim::runner::MAX_CONTROLLED_STEPS;
    let livelock_switches = spec.livelock_switches;
    match spec.scheduler {
        SchedulerKind::Os => Engine::OsThreads {
            watchdog: watchdog.0,
        },
        SchedulerKind::Random => Engine::Controlled {
            scheduler: Scheduler::Random,
            max_steps,
            livelock_switches,
        },
        SchedulerKind::RandomOneStream => Engine::Controlled {
            scheduler: Scheduler::RandomOneStream,
            max_steps,
            livelock_switches,
        },
        SchedulerKind::Pct => Engine::Controlled {
            scheduler: Scheduler::Pct {
                depth: spec.pct_depth,
                horizon: crate::pct::horizon(spec),
            },
            max_steps,
            livelock_switches,
        },
    }
}

fn trace(log: engine_threadsim::TraceLog) -> threadsim::TraceLog {
    threadsim::TraceLog {
        events: log
            .events
            .into_iter()
            .map(|event| threadsim::trace::TraceEvent {
                at: threadsim::Instant::from_epoch(event.at.since_epoch()),
                level: match event.level {
                    engine_threadsim::Level::Info => threadsim::Level::Info,
                    engine_threadsim::Level::Debug => threadsim::Level::Debug,
                },
                text: event.text,
            })
            .collect(),
        digest: threadsim::Digest::from_value(log.digest.value()),
        dropped: log.dropped,
    }
}

fn schedule(summary: engine_threadsim::ScheduleSummary) -> threadsim::ScheduleSummary {
    threadsim::ScheduleSummary {
        decisions: summary.decisions,
        digest: summary.digest,
        tasks: summary.tasks,
        most_switches_standing_still: summary.most_switches_standing_still,
        reached_micros: summary.reached_micros,
    }
}
