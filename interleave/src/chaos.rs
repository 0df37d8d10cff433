//! `interleave chaos`: seeds in parallel, one independent run per seed, each failure replayed
//! before it is reported, a progress line, and a summary.

use crate::cli::ChaosArgs;
use crate::engines::run_seed;
use crate::failure_folder;
use crate::outcome::SeedOutcome;
use crate::replay_line::{flags, replay_line};
use crate::run_spec::{EngineChoice, WorkloadKind};
use crate::seeds::{FirstSeed, SeedRange};
use crate::verify::Verification;
use crate::{junit, JSON_VERSION};
use sim::ChaosReport;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

/// Failing seeds whose folders are written (the rest are reported, not saved).
const MAX_SAVED_FAILURES: usize = 100;

/// A finished seed as a worker hands it over.
struct Finished {
    /// Real time the seed took, its verification included.
    wall: std::time::Duration,
    outcome: SeedOutcome,
    /// For a failing seed: what its rerun showed.
    verification: Option<Verification>,
}

/// Runs `args.seeds` seeds on `engine` with `workers` threads; exit 0 when nothing was found, 1
/// when a seed failed or a replay diverged.
pub fn chaos(args: &ChaosArgs, engine: EngineChoice) -> ExitCode {
    let whole = match SeedRange::new(args.first_seed.resolve(), args.seeds) {
        Ok(range) => range,
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    if let Err(message) = crate::run_spec::check_duration(args.engine.scheduler, &args.workload) {
        eprintln!("interleave: {message}");
        return ExitCode::from(2);
    }
    let range = args.shard.map_or(whole, |shard| whole.shard(shard));
    let workers = args
        .workers
        .map_or_else(
            || std::thread::available_parallelism().map_or(2, |n| n.get()),
            |n| n as usize,
        )
        .min(usize::try_from(range.count).unwrap_or(usize::MAX));
    if let Some(Err(message)) = args.junit.as_deref().map(junit::check_path) {
        eprintln!("interleave: {message}");
        return ExitCode::from(2);
    }
    // The folder is the tool's own, like a build directory: a new run clears the last one's.
    let claimed = crate::out_dir::claim(&args.out, crate::out_dir::is_seed_folder)
        .and_then(|mut claim| claim.clear(|_| true).map(|_| claim));
    let _out_lock = match claimed {
        Ok(claim) => claim,
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    if !args.json {
        print_header(args, &engine, workers, whole, range);
    }
    crate::interrupt::stop_on_ctrl_c();
    let next_index = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (results, finished) = mpsc::channel::<Finished>();
    let mut handles = Vec::new();
    for worker in 0..workers {
        let (next_index, stop, results) = (next_index.clone(), stop.clone(), results.clone());
        let (args, engine) = (args.clone(), engine);
        let spawned = std::thread::Builder::new()
            .name(format!("chaos-worker-{worker}"))
            .spawn(move || loop {
                let index = next_index.fetch_add(1, Ordering::SeqCst);
                let interrupted = crate::interrupt::interrupted();
                if index >= range.count || stop.load(Ordering::SeqCst) || interrupted {
                    return;
                }
                let seed = range.nth(index);
                let finished = run_and_verify(&engine, &args, seed);
                if results.send(finished).is_err() {
                    return;
                }
            });
        match spawned {
            Ok(handle) => handles.push(handle),
            Err(error) => {
                eprintln!("interleave: cannot start a worker thread: {error}");
                return ExitCode::from(2);
            }
        }
    }
    drop(results);

    #[allow(clippy::disallowed_methods)] // wall time of the run, for the progress line
    let wall = std::time::Instant::now();
    let interactive = std::io::stderr().is_terminal() && !args.json;
    let mut done = 0u64;
    let mut failures = Vec::new();
    let mut diverged = Vec::new();
    let mut stopped_early = 0u64;
    let mut saved = 0usize;
    let mut totals = ChaosReport::default();
    // The lowest failing seed whose replay held, and its folder: the one to shrink.
    let mut first_failure: Option<(SeedOutcome, Option<std::path::PathBuf>)> = None;
    let mut junit_cases = Vec::new();
    for Finished {
        wall: seed_wall,
        outcome,
        verification,
    } in finished
    {
        done += 1;
        if args.junit.is_some() {
            junit_cases.push(junit_case(args, &outcome, verification.as_ref(), seed_wall));
        }
        match &outcome.figures {
            Some(figures) => add(&mut totals, figures),
            None => stopped_early += 1,
        }
        match (&outcome.failure, &verification) {
            (None, _) => {
                if args.json {
                    println!("{}", passed_json(&outcome, &engine));
                }
            }
            (Some(failure), Some(verification)) => {
                let replay = replay_line(
                    outcome.seed,
                    &args.workload,
                    &args.engine,
                    outcome.trace.digest,
                );
                let folder = if saved < MAX_SAVED_FAILURES {
                    saved += 1;
                    match failure_folder::save(args, &outcome, &engine, &replay, verification) {
                        Ok(dir) => Some(dir),
                        Err(error) => {
                            eprintln!(
                                "interleave: cannot write the folder of seed {}: {error}",
                                outcome.seed
                            );
                            None
                        }
                    }
                } else {
                    None
                };
                if args.json {
                    println!(
                        "{}",
                        failed_json(
                            &outcome,
                            &engine,
                            failure,
                            &replay,
                            verification,
                            folder.as_deref()
                        )
                    );
                } else {
                    if interactive {
                        eprint!("\r\x1b[K");
                    }
                    println!("FAILED seed {}: {failure}", outcome.seed);
                    println!("replay: {replay}");
                    println!("{}", verification.describe(&outcome));
                    if let Some(dir) = &folder {
                        println!("trace and history: {}", dir.display());
                    }
                    if verification.holds() && args.engine.scheduler.deterministic() {
                        println!(
                            "keep: {}   (a line for interleave/tests/regressions.txt)",
                            crate::regressions::line_for(
                                outcome.seed,
                                &flags(&args.workload, &args.engine),
                                !args.workload.mutations.is_empty()
                            )
                        );
                    }
                }
                failures.push(outcome.seed);
                if verification.holds()
                    && first_failure
                        .as_ref()
                        .is_none_or(|(first, _): &(SeedOutcome, _)| outcome.seed < first.seed)
                {
                    first_failure = Some((outcome.clone(), folder.clone()));
                }
                if verification.diverged() {
                    diverged.push(outcome.seed);
                }
                if args.fail_fast {
                    stop.store(true, Ordering::SeqCst);
                }
            }
            (Some(_), None) => unreachable!("every failing seed is verified"),
        }
        let elapsed = wall.elapsed().as_secs_f64().max(1e-9);
        let line = format!(
            "[{done}/{}] failures {} | {:.0} simulated s | {:.0}x real time | {:.1} seeds/s",
            range.count,
            failures.len(),
            totals.simulated.as_secs_f64(),
            totals.simulated.as_secs_f64() / elapsed,
            done as f64 / elapsed
        );
        if interactive {
            eprint!("\r\x1b[K{line}");
            let _ = std::io::stderr().flush();
        } else if !args.json && (done.is_multiple_of(10) || done == range.count) {
            eprintln!("{line}");
        }
    }
    for handle in handles {
        let _ = handle.join();
    }
    if interactive {
        eprintln!();
    }
    let elapsed = wall.elapsed();
    failures.sort_unstable();
    diverged.sort_unstable();
    let interrupted_seeds = crate::interrupt::interrupted();
    let shrunk = match first_failure {
        Some((outcome, folder))
            if !args.no_shrink && engine.scheduler.deterministic() && !interrupted_seeds =>
        {
            Some(shrink_first(args, &engine, &outcome, folder.as_deref()))
        }
        _ => None,
    };
    let mut status_ok = true;
    if let Some(file) = &args.junit {
        junit_cases.sort_by_key(|case: &(u64, junit::Case)| case.0);
        let cases: Vec<junit::Case> = junit_cases.into_iter().map(|(_, case)| case).collect();
        if let Err(message) = junit::write(file, "interleave chaos", &cases, elapsed) {
            eprintln!("interleave: {message}");
            status_ok = false;
        }
    }
    if args.json {
        let summary = serde_json::json!({
            "summary": {
                "version": JSON_VERSION,
                "seeds": done,
                "range": range.to_string(),
                "first_seed": whole.first,
                "shard": args.shard.map(|shard| shard.to_string()),
                // What makes shards one run: gather refuses a set that differs in any of these.
                "run": {
                    "range": whole.to_string(),
                    "flags": crate::replay_line::flags(&args.workload, &args.engine),
                    "tool": env!("CARGO_PKG_VERSION"),
                },
                "interrupted": crate::interrupt::interrupted(),
                "engine": engine.describe(),
                "failures": failures,
                "nondeterministic": diverged,
                "wall_s": elapsed.as_secs_f64(),
                "simulated_s": totals.simulated.as_secs_f64(),
                "shrunk": shrunk.as_ref().map(|(seed, report, file)| serde_json::json!({
                    "seed": seed,
                    "events_before": report.events_before,
                    "events_after": report.shrunk.schedule.removable(),
                    "minimal": report.shrunk.minimal,
                    "verified": report.verified,
                    "runs": report.shrunk.tests,
                    "wall_s": report.wall.as_secs_f64(),
                    "schedule": file.as_ref().map(|f| f.display().to_string()),
                })),
            }
        });
        println!("{summary}");
    } else {
        println!(
            "{done} seeds in {:.1} s wall, {:.0} s simulated: {} leaders elected, {} entries committed (max index per seed, summed), \
             {} crashes, {} partitions, {} one-way cuts",
            elapsed.as_secs_f64(),
            totals.simulated.as_secs_f64(),
            totals.leaders_elected,
            totals.highest_applied,
            totals.crashes,
            totals.partitions,
            totals.one_way_cuts
        );
        if args.workload.snapshot_threshold.is_some() {
            println!(
                "{} snapshots taken, {} installed from a leader (every one checked against the state it claims)",
                totals.snapshots_taken, totals.snapshots_installed
            );
        }
        if interrupted_seeds {
            println!(
                "interrupted by {}: {done} of {} seeds ran{}",
                crate::interrupt::interruption(),
                range.count,
                if !failures.is_empty() && !args.no_shrink {
                    "; the first failure was not shrunk (`interleave shrink FOLDER` shrinks it)"
                } else {
                    ""
                }
            );
        }
        if stopped_early > 0 {
            println!(
                "({stopped_early} failing seed(s) stopped at their violation: their figures are not in the totals)"
            );
        }
        if !diverged.is_empty() {
            println!(
                "UNCONTROLLED NONDETERMINISM in {} seed(s) {diverged:?}: their reruns differed",
                diverged.len()
            );
        }
        if let Some((seed, report, file)) = &shrunk {
            println!("\nthe failure of seed {seed}, shrunk:");
            print!("{}", report.describe());
            if let Some(file) = file {
                let line = crate::shrink::replay_schedule_line(file, &args.workload);
                println!("replay: {line}");
            }
        }
        if failures.is_empty() {
            if totals.operations_checked > 0 {
                println!(
                    "{} client operations checked: every history was linearizable",
                    totals.operations_checked
                );
            }
            if crate::interrupt::interrupted() {
                println!("found nothing: every invariant held on every seed that ran");
            } else {
                println!("found nothing: every invariant held on every seed");
            }
        } else {
            println!("found {} failing seed(s): {failures:?}", failures.len());
        }
    }
    if crate::interrupt::interrupted() {
        ExitCode::from(crate::interrupt::interrupted_exit())
    } else if !failures.is_empty() {
        ExitCode::from(1)
    } else if !status_ok {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// A seed as a JUnit test case (with its seed, to sort by).
fn junit_case(
    args: &ChaosArgs,
    outcome: &SeedOutcome,
    verification: Option<&Verification>,
    wall: std::time::Duration,
) -> (u64, junit::Case) {
    let failure = outcome.failure.as_ref().map(|failure| {
        let replay = replay_line(
            outcome.seed,
            &args.workload,
            &args.engine,
            outcome.trace.digest,
        );
        let checked = verification.map_or_else(String::new, |v| v.describe(outcome));
        let message = failure.lines().next().unwrap_or_default().to_string();
        (message, format!("{failure}\n\nreplay: {replay}\n{checked}"))
    });
    let classname = match args.workload.workload {
        WorkloadKind::Raft => "chaos raft",
        WorkloadKind::Kv => "chaos kv",
    };
    let case = junit::Case {
        name: format!("seed {}", outcome.seed),
        classname: classname.to_string(),
        failure,
        time: Some(wall),
    };
    (outcome.seed, case)
}

/// Runs one seed; a failing seed is run once more and compared. A passing seed keeps only its
/// trace digest (its events are not needed).
fn run_and_verify(engine: &EngineChoice, args: &ChaosArgs, seed: u64) -> Finished {
    #[allow(clippy::disallowed_methods)] // the seed's wall time, for the JUnit report
    let started = std::time::Instant::now();
    let mut outcome = run_seed(engine, &args.workload, seed);
    if outcome.failure.is_none() {
        outcome.trace.events = Vec::new();
        return Finished {
            wall: started.elapsed(),
            outcome,
            verification: None,
        };
    }
    let replayed = run_seed(engine, &args.workload, seed);
    let verification = Verification::compare(&outcome, replayed, engine.scheduler.deterministic());
    Finished {
        wall: started.elapsed(),
        outcome,
        verification: Some(verification),
    }
}

fn print_header(
    args: &ChaosArgs,
    engine: &EngineChoice,
    workers: usize,
    whole: SeedRange,
    range: SeedRange,
) {
    let workload = &args.workload;
    let shape = match workload.workload {
        WorkloadKind::Raft => format!("{} rounds per seed", workload.rounds),
        WorkloadKind::Kv => format!(
            "key-value workload ({} reads, {} s per seed, linearizability checked)",
            workload.read_mode,
            workload
                .duration
                .map_or_else(|| "27".to_string(), |d| d.as_secs_f64().to_string())
        ),
    };
    let mutations = if workload.mutations.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = workload.mutations.iter().map(|m| m.name()).collect();
        format!(", mutations: {}", names.join(", "))
    };
    println!(
        "interleave chaos: {} nodes, {shape}, seeds {range}{}, {} network, {}, {workers} workers{mutations}",
        workload.nodes,
        args.shard.map_or_else(String::new, |shard| format!(" (shard {shard} of {whole})")),
        if workload.reliable {
            "reliable"
        } else {
            "unreliable (10% request and 10% reply loss)"
        },
        engine.describe(),
    );
    if args.first_seed == FirstSeed::Random {
        println!(
            "first seed drawn at random: {} (`--first-seed {}` runs this range again)",
            whole.first, whole.first
        );
    }
}

/// Adds one seed's figures to the totals.
fn add(totals: &mut ChaosReport, report: &ChaosReport) {
    totals.simulated += report.simulated;
    totals.leaders_elected += report.leaders_elected;
    totals.highest_applied += report.highest_applied;
    totals.crashes += report.crashes;
    totals.partitions += report.partitions;
    totals.one_way_cuts += report.one_way_cuts;
    totals.operations_checked += report.operations_checked;
    totals.snapshots_taken += report.snapshots_taken;
    totals.snapshots_installed += report.snapshots_installed;
}

fn passed_json(outcome: &SeedOutcome, engine: &EngineChoice) -> serde_json::Value {
    let figures = outcome.figures.clone().unwrap_or_default();
    serde_json::json!({
        "version": JSON_VERSION,
        "seed": outcome.seed,
        "verdict": "passed",
        "engine": engine.scheduler.name(),
        "simulated_s": figures.simulated.as_secs_f64(),
        "leaders_elected": figures.leaders_elected,
        "highest_applied": figures.highest_applied,
        "trace_digest": outcome.trace.digest.to_string(),
        "schedule_digest": outcome.schedule.map(|s| format!("{:016x}", s.digest)),
    })
}

fn failed_json(
    outcome: &SeedOutcome,
    engine: &EngineChoice,
    failure: &str,
    replay: &str,
    verification: &Verification,
    folder: Option<&std::path::Path>,
) -> serde_json::Value {
    serde_json::json!({
        "version": JSON_VERSION,
        "seed": outcome.seed,
        "verdict": "failed",
        "engine": engine.scheduler.name(),
        "violation": failure,
        "replay": replay,
        "replay_verified": verification.holds(),
        "nondeterministic": verification.diverged(),
        "verification": verification.describe(outcome),
        "trace_digest": outcome.trace.digest.to_string(),
        "schedule_digest": outcome.schedule.map(|s| format!("{:016x}", s.digest)),
        "output": folder.map(|dir| dir.display().to_string()),
    })
}

/// Shrinks the schedule of `outcome` (a failing seed) and writes it beside the full one in its
/// folder; returns the seed, the report and the file.
fn shrink_first(
    args: &ChaosArgs,
    engine: &EngineChoice,
    outcome: &SeedOutcome,
    folder: Option<&std::path::Path>,
) -> (u64, crate::shrink::ShrinkReport, Option<std::path::PathBuf>) {
    if !args.json {
        eprintln!(
            "shrinking the failure of seed {} for at most {} s (Ctrl-C stops it and keeps the smallest so far) ...",
            outcome.seed, args.shrink_time
        );
    }
    let full = crate::shrink::with_notes(
        &outcome.schedule_events,
        outcome.seed,
        &args.workload,
        &args.engine,
        outcome.failure.as_deref(),
    );
    let report = crate::shrink::shrink_failure(
        engine,
        &args.workload,
        outcome.seed,
        &full,
        outcome.failure.as_deref().unwrap_or_default(),
        std::time::Duration::from_secs(args.shrink_time),
    );
    let file = folder.and_then(|dir| {
        let file = dir.join("schedule.shrunk.txt");
        match userfiles::write_whole(&file, report.shrunk.schedule.to_string()) {
            Ok(()) => Some(file),
            Err(error) => {
                eprintln!("interleave: {error}");
                None
            }
        }
    });
    (outcome.seed, report, file)
}
