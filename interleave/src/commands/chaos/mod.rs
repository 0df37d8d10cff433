//! `interleave chaos`: seeds in parallel, one independent run per seed, each failure replayed
//! before it is reported, a progress line, and a summary.
//!
//! `mod.rs` starts the run (its range, workers and folder) and hands each finished seed to the
//! [`tally::Tally`], which reports it as it comes; [`summary`] shrinks the first failure and
//! prints the end.

mod summary;
mod tally;

use crate::cli::ChaosArgs;
use crate::engines::{run_seed, Watchdog};
use crate::junit;
use crate::outcome::SeedOutcome;
use crate::seeds::{FirstSeed, SeedRange};
use crate::verify::Verification;
use runspec::{RunSpec, Workload};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use tally::Tally;

/// A finished seed as a worker hands it over.
struct Finished {
    /// Real time the seed took, its verification included.
    wall: std::time::Duration,
    outcome: SeedOutcome,
    /// For a failing seed: what its rerun showed.
    verification: Option<Verification>,
}

/// What every part of one run reads.
struct Run<'a> {
    args: &'a ChaosArgs,
    /// The run every seed makes, with seed 0 (each seed's is `spec.with_seed(seed)`).
    spec: RunSpec,
    watchdog: Watchdog,
    /// The whole range, and this shard's part of it.
    whole: SeedRange,
    range: SeedRange,
    /// Whether the progress line is redrawn on a terminal.
    interactive: bool,
    /// Set to stop the workers (`--fail-fast`).
    stop: Arc<AtomicBool>,
}

/// Runs `args.seeds` seeds with `workers` threads; exit 0 when nothing was found, 1 when a seed
/// failed or a replay diverged.
pub fn chaos(args: &ChaosArgs, watchdog: Watchdog) -> ExitCode {
    let spec = args.workload.spec(&args.engine, 0);
    let (whole, range, workers, _out_lock) = match prepare(args, &spec) {
        Ok(prepared) => prepared,
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    if !args.json {
        print_header(args, &spec, workers, whole, range);
    }
    crate::interrupt::stop_on_ctrl_c();
    let run = Run {
        args,
        spec,
        watchdog,
        whole,
        range,
        interactive: std::io::IsTerminal::is_terminal(&std::io::stderr()) && !args.json,
        stop: Arc::new(AtomicBool::new(false)),
    };
    let (handles, finished) = match spawn_workers(&run, workers) {
        Ok(started) => started,
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    #[allow(clippy::disallowed_methods)] // wall time of the run, for the progress line
    let wall = std::time::Instant::now();
    let mut tally = Tally::default();
    for seed in finished {
        tally.record(&run, seed);
        tally.show_progress(&run, wall.elapsed());
    }
    for handle in handles {
        let _ = handle.join();
    }
    if run.interactive {
        eprintln!();
    }
    summary::finish(&run, tally, wall.elapsed())
}

/// The run's whole range and this shard's part, its workers, and its output folder, claimed
/// and cleared (the folder is the tool's own, like a build directory: a new run clears the last
/// one's); or why the arguments cannot run.
fn prepare(
    args: &ChaosArgs,
    spec: &RunSpec,
) -> Result<(SeedRange, SeedRange, usize, crate::out_dir::Claim), String> {
    let whole = SeedRange::new(args.first_seed.resolve(), args.seeds)?;
    crate::run_spec::check_runnable(spec)?;
    let range = args.shard.map_or(whole, |shard| whole.shard(shard));
    let workers = args
        .workers
        .map_or_else(
            || std::thread::available_parallelism().map_or(2, |n| n.get()),
            |n| n as usize,
        )
        .min(usize::try_from(range.count).unwrap_or(usize::MAX));
    if let Some(checked) = args.junit.as_deref().map(junit::check_path) {
        checked?;
    }
    let claim = crate::out_dir::claim(&args.out, crate::out_dir::is_seed_folder)
        .and_then(|mut claim| claim.clear(|_| true).map(|_| claim))?;
    Ok((whole, range, workers, claim))
}

/// Starts `workers` threads that take the range's seeds in turn until it is done, stopped or
/// interrupted; returns them and the channel their finished seeds come on.
fn spawn_workers(
    run: &Run<'_>,
    workers: usize,
) -> Result<(Vec<std::thread::JoinHandle<()>>, mpsc::Receiver<Finished>), String> {
    let next_index = Arc::new(AtomicU64::new(0));
    let (results, finished) = mpsc::channel::<Finished>();
    let mut handles = Vec::new();
    for worker in 0..workers {
        let (next_index, stop, results) = (next_index.clone(), run.stop.clone(), results.clone());
        let (spec, watchdog, range) = (run.spec.clone(), run.watchdog, run.range);
        let spawned = std::thread::Builder::new()
            .name(format!("chaos-worker-{worker}"))
            .spawn(move || loop {
                let index = next_index.fetch_add(1, Ordering::SeqCst);
                let interrupted = crate::interrupt::interrupted();
                if index >= range.count || stop.load(Ordering::SeqCst) || interrupted {
                    return;
                }
                let seed = range.nth(index);
                let finished = run_and_verify(&spec.with_seed(seed), watchdog);
                if results.send(finished).is_err() {
                    return;
                }
            });
        let handle = spawned.map_err(|error| format!("cannot start a worker thread: {error}"))?;
        handles.push(handle);
    }
    Ok((handles, finished))
}

/// Runs one seed; a failing seed is run once more and compared. A passing seed keeps only its
/// trace digest (its events are not needed).
fn run_and_verify(spec: &RunSpec, watchdog: Watchdog) -> Finished {
    #[allow(clippy::disallowed_methods)] // the seed's wall time, for the JUnit report
    let started = std::time::Instant::now();
    let mut outcome = run_seed(spec, watchdog);
    if outcome.failure.is_none() {
        outcome.trace.events = Vec::new();
        return Finished {
            wall: started.elapsed(),
            outcome,
            verification: None,
        };
    }
    let replayed = run_seed(spec, watchdog);
    let verification = Verification::compare(&outcome, replayed, spec.scheduler.deterministic());
    Finished {
        wall: started.elapsed(),
        outcome,
        verification: Some(verification),
    }
}

fn print_header(
    args: &ChaosArgs,
    spec: &RunSpec,
    workers: usize,
    whole: SeedRange,
    range: SeedRange,
) {
    let workload = spec;
    let shape = match workload.workload {
        Workload::Raft => format!("{} rounds per seed", workload.rounds),
        Workload::Kv => format!(
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
        spec.scheduler.describe(spec.pct_depth),
    );
    if args.first_seed == FirstSeed::Random {
        println!(
            "first seed drawn at random: {} (`--first-seed {}` runs this range again)",
            whole.first, whole.first
        );
    }
}
