//! One seed of a workload on one build of `sim`: compiled once per engine (see `mod.rs`), with
//! `engine_sim`, `engine_node` and `engine_threadsim` naming that build's crates. Everything that
//! leaves this file is converted into the ordinary build's types.

use super::{engine_node, engine_sim, engine_threadsim};
use crate::outcome::{KvEvidence, SeedOutcome};
use crate::run_spec::{EngineChoice, SchedulerKind, WorkloadArgs, WorkloadKind};
use engine_threadsim::{Engine, Scheduler};
use std::str::FromStr;

/// Runs `seed` of `workload` on `engine`, its events generated, or following `schedule`.
pub fn run(
    engine: &EngineChoice,
    workload: &WorkloadArgs,
    seed: u64,
    schedule: Option<&sim::schedule::Schedule>,
) -> SeedOutcome {
    let how = engine_for(engine, workload);
    let recorder = engine_sim::schedule::ScheduleRecorder::default();
    let following = schedule.map(to_engine);
    let mut outcome = match workload.workload {
        WorkloadKind::Raft => {
            let config = chaos_config(workload);
            let recording = recorder.clone();
            let run = engine_sim::runner::simulate_on(seed, &how, move |sim| {
                let events = match &following {
                    Some(schedule) => engine_sim::ChaosEvents::Following(schedule),
                    None => engine_sim::ChaosEvents::Generated,
                };
                engine_sim::run_chaos_with(sim, &config, events, &recording)
            });
            let (report, mut outcome) = record(seed, run);
            outcome.figures = report.as_ref().map(figures);
            outcome
        }
        WorkloadKind::Kv => {
            let config = kv_config(workload);
            let recording = recorder.clone();
            let run = engine_sim::runner::simulate_on(seed, &how, move |sim| {
                engine_sim::run_kv_workload_with(sim, &config, following.as_ref(), &recording)
            });
            let (kv_run, mut outcome) = record(seed, run);
            if let Some(kv_run) = kv_run {
                // Checked outside the run: the checker's threads are real threads.
                let report = engine_sim::check_kv_history(&kv_run.history);
                outcome.figures = Some(sim::ChaosReport {
                    simulated: kv_run.simulated,
                    crashes: kv_run.crashes,
                    leaders_elected: kv_run.leaders_elected,
                    highest_applied: kv_run.highest_applied,
                    partitions: kv_run.leader_isolations,
                    leader_isolations: kv_run.leader_isolations,
                    operations_checked: kv_run.history.len() as u64,
                    snapshots_taken: kv_run.snapshots_taken,
                    snapshots_installed: kv_run.snapshots_installed,
                    ..sim::ChaosReport::default()
                });
                if report.verdict != models::Verdict::Linearizable {
                    let key = report
                        .counterexample()
                        .map(|(partition, _)| format!(" (key {})", partition.name))
                        .unwrap_or_default();
                    outcome.failure = Some(format!(
                        "client history {:?}{key}: {} operations, {} reads served by deposed leaders",
                        report.verdict,
                        kv_run.history.len(),
                        kv_run.reads_by_deposed_leaders
                    ));
                }
                outcome.kv = Some(KvEvidence {
                    history: kv_run.history,
                    report,
                });
            }
            outcome
        }
    };
    outcome.schedule_events = from_engine(recorder.take());
    if outcome.failure.is_some() {
        let stopped = outcome
            .trace
            .events
            .last()
            .map(|event| event.at.since_epoch());
        outcome
            .schedule_events
            .end_after_stop(stopped.unwrap_or_default());
    }
    outcome
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
        schedule_events: sim::schedule::Schedule::default(),
    };
    (value, outcome)
}

/// The engine for this build.
fn engine_for(engine: &EngineChoice, workload: &WorkloadArgs) -> Engine {
    let max_steps = engine_sim::runner::MAX_CONTROLLED_STEPS;
    match engine.scheduler {
        SchedulerKind::Os => Engine::OsThreads {
            watchdog: engine.watchdog,
        },
        SchedulerKind::Random => Engine::Controlled {
            scheduler: Scheduler::Random,
            max_steps,
        },
        SchedulerKind::RandomOneStream => Engine::Controlled {
            scheduler: Scheduler::RandomOneStream,
            max_steps,
        },
        SchedulerKind::Pct => Engine::Controlled {
            scheduler: Scheduler::Pct {
                depth: engine.pct_depth,
                horizon: crate::pct::horizon(workload),
            },
            max_steps,
        },
    }
}

fn mutations(workload: &WorkloadArgs) -> engine_node::MutationSet {
    workload
        .mutations
        .iter()
        .fold(engine_node::MutationSet::default(), |set, mutation| {
            set.with(
                engine_node::Mutation::from_str(mutation.name())
                    .expect("both builds know the same mutations"),
            )
        })
}

fn chaos_config(workload: &WorkloadArgs) -> engine_sim::ChaosConfig {
    engine_sim::ChaosConfig {
        nodes: workload.nodes as usize,
        rounds: workload.rounds,
        unreliable: !workload.reliable,
        mutations: mutations(workload),
        faults: engine_sim::FaultMix {
            crashes: !workload.no_crashes,
            partitions: !workload.no_partitions,
            one_way: !workload.no_one_way,
            skew: clock_skew(workload),
        },
        duration: workload.duration,
        snapshot_threshold: snapshot_threshold(workload),
        ..engine_sim::ChaosConfig::default()
    }
}

fn snapshot_threshold(workload: &WorkloadArgs) -> Option<usize> {
    workload
        .snapshot_threshold
        .map(|bytes| usize::try_from(bytes).expect("at most 1 GiB, by the argument's range"))
}

fn clock_skew(workload: &WorkloadArgs) -> engine_sim::ClockSkew {
    engine_sim::ClockSkew::from_str(workload.clock_skew.name())
        .expect("both builds know the same clock skews")
}

fn kv_config(workload: &WorkloadArgs) -> engine_sim::KvWorkloadConfig {
    let defaults = engine_sim::KvWorkloadConfig::default();
    engine_sim::KvWorkloadConfig {
        nodes: workload.nodes as usize,
        read_mode: engine_node::kv::ReadMode::from_str(workload.read_mode.name())
            .expect("both builds know the same read modes"),
        mutations: mutations(workload),
        duration: workload.duration.unwrap_or(defaults.duration),
        unreliable: !workload.reliable,
        crashes: !workload.no_crashes,
        skew: clock_skew(workload),
        snapshot_threshold: snapshot_threshold(workload),
        ..defaults
    }
}

fn figures(report: &engine_sim::ChaosReport) -> sim::ChaosReport {
    sim::ChaosReport {
        simulated: report.simulated,
        leaders_elected: report.leaders_elected,
        highest_applied: report.highest_applied,
        crashes: report.crashes,
        crashes_mid_replication: report.crashes_mid_replication,
        restarts: report.restarts,
        partitions: report.partitions,
        leader_isolations: report.leader_isolations,
        one_way_cuts: report.one_way_cuts,
        rounds_committing_under_faults: report.rounds_committing_under_faults,
        commands_offered: report.commands_offered,
        commands_accepted: report.commands_accepted,
        operations_checked: report.operations_checked,
        snapshots_taken: report.snapshots_taken,
        snapshots_installed: report.snapshots_installed,
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
    }
}
