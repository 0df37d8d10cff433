//! `interleave chaos`: seeds in parallel, one independent run per seed, each failure replayed
//! before it is reported, a progress line, and a summary.
//!
//! `mod.rs` starts the run (its range, workers and folder) and hands each finished seed to the
//! [`tally::Tally`], which reports it as it comes; [`summary`] shrinks the first failure and
//! prints the end.

mod steer;
mod summary;
mod tally;

use crate::cli::ChaosArgs;
use crate::command_error::CommandError;
use crate::engines::{run_seed, Watchdog};
use crate::junit;
use crate::outcome::SeedOutcome;
use crate::seeds::{FirstSeed, SeedRange};
use crate::verify::Verification;
use runspec::{RunSpec, Workload};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use steer::Steering;
use tally::Tally;

/// A finished seed as a worker hands it over.
struct Finished {
    /// The run it made.
    spec: RunSpec,
    /// Real time the seed took, its verification included.
    wall: std::time::Duration,
    outcome: SeedOutcome,
    /// For a failing seed, and a passing one the self-check reran: what its rerun showed.
    verification: Option<Verification>,
}

/// What every part of one run reads.
struct Run<'a> {
    args: &'a ChaosArgs,
    /// The run every seed makes, with seed 0 (each seed's is [`seed_spec`], or the steering's).
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

/// The run `seed` makes from `spec`, drawn by the swarm if `swarm`.
fn seed_spec(spec: &RunSpec, swarm: bool, seed: u64) -> RunSpec {
    let spec = spec.with_seed(seed);
    if swarm {
        spec.swarmed()
    } else {
        spec
    }
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
    // Before the header: a signal that comes once it is shown finds the handler.
    crate::interrupt::stop_on_ctrl_c();
    if !args.json {
        print_header(args, &spec, workers, whole, range);
    }
    let run = Run {
        args,
        spec,
        watchdog,
        whole,
        range,
        interactive: std::io::IsTerminal::is_terminal(&std::io::stderr()) && !args.json,
        stop: Arc::new(AtomicBool::new(false)),
    };
    let (jobs, mut steering) = if args.steer {
        let (queue, taken) = mpsc::channel();
        let steering = Steering::new(run.spec.clone(), range.first);
        (Jobs::Steered(Mutex::new(taken)), Some((steering, queue, 0)))
    } else {
        let next = AtomicU64::new(0);
        (
            Jobs::Range {
                next,
                range,
                swarm: args.swarm,
            },
            None,
        )
    };
    if let Some((steering, queue, planned)) = &mut steering {
        plan_generation(steering, queue, planned, range);
    }
    let (handles, finished) = match spawn_workers(&run, workers, Arc::new(jobs)) {
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
        let learnt = (seed.spec.clone(), seed.outcome.coverage.clone());
        tally.record(&run, seed);
        tally.show_progress(&run, wall.elapsed());
        let stopping = run.stop.load(Ordering::SeqCst) || crate::interrupt::interrupted();
        if let Some((mut steerer, queue, mut planned)) = steering.take() {
            let (spec, reached) = learnt;
            if !stopping
                && (!steerer.finished(spec, reached)
                    || plan_generation(&mut steerer, &queue, &mut planned, range))
            {
                steering = Some((steerer, queue, planned));
            } else {
                tally.steering = Some(steerer.figures());
            }
        }
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
) -> Result<(SeedRange, SeedRange, usize, crate::out_dir::Claim), CommandError> {
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
    if let Some(file) = &args.coverage {
        junit::check_report_path(file, "the coverage report")?;
    }
    let claim = crate::out_dir::claim(&args.out, crate::out_dir::is_seed_folder)
        .and_then(|mut claim| claim.clear(|_| true).map(|_| claim))?;
    Ok((whole, range, workers, claim))
}

/// Where the workers take their runs from.
enum Jobs {
    /// The range's seeds in turn, each run made from the command line's ([`seed_spec`]).
    Range {
        next: AtomicU64,
        range: SeedRange,
        swarm: bool,
    },
    /// The steering's runs, a generation at a time; none left once its sender is dropped.
    Steered(Mutex<mpsc::Receiver<RunSpec>>),
}

impl Jobs {
    /// The next run to make, from `spec` (the command line's); `None` when there are no more.
    fn next(&self, spec: &RunSpec) -> Option<RunSpec> {
        match self {
            Jobs::Range { next, range, swarm } => {
                let index = next.fetch_add(1, Ordering::SeqCst);
                (index < range.count).then(|| seed_spec(spec, *swarm, range.nth(index)))
            }
            Jobs::Steered(queue) => queue.lock().ok()?.recv().ok(),
        }
    }
}

/// Hands the steering's next generation to the workers; false when the range is done (the
/// queue is then closed by its owner dropping it). `planned` counts the seeds planned so far.
fn plan_generation(
    steering: &mut Steering,
    queue: &mpsc::Sender<RunSpec>,
    planned: &mut u64,
    range: SeedRange,
) -> bool {
    if *planned >= range.count {
        return false;
    }
    let end = (*planned + steer::GENERATION).min(range.count);
    let seeds = (*planned..end).map(|index| range.nth(index));
    *planned = end;
    for spec in steering.plan(seeds) {
        if queue.send(spec).is_err() {
            return false;
        }
    }
    true
}

/// Starts `workers` threads that take runs from `jobs` until there are none, or the run is
/// stopped or interrupted; returns them and the channel their finished seeds come on.
fn spawn_workers(
    run: &Run<'_>,
    workers: usize,
    jobs: Arc<Jobs>,
) -> Result<(Vec<std::thread::JoinHandle<()>>, mpsc::Receiver<Finished>), CommandError> {
    let (results, finished) = mpsc::channel::<Finished>();
    let mut handles = Vec::new();
    for worker in 0..workers {
        let (jobs, stop, results) = (jobs.clone(), run.stop.clone(), results.clone());
        let (spec, watchdog) = (run.spec.clone(), run.watchdog);
        let self_check_every = run.args.self_check_every;
        let spawned = std::thread::Builder::new()
            .name(format!("chaos-worker-{worker}"))
            .spawn(move || loop {
                if stop.load(Ordering::SeqCst) || crate::interrupt::interrupted() {
                    return;
                }
                let Some(spec) = jobs.next(&spec) else {
                    return;
                };
                let finished =
                    run_and_verify(spec, self_check_every, |spec| run_seed(spec, watchdog));
                if results.send(finished).is_err() {
                    return;
                }
            });
        let handle = spawned.map_err(|source| CommandError::Thread {
            what: "a worker thread",
            source,
        })?;
        handles.push(handle);
    }
    Ok((handles, finished))
}

/// Runs one seed with `run_seed`; a failing seed, and every `self_check_every`-th seed that
/// passes on a deterministic scheduler (0: none), is run once more and compared. A seed that
/// passed and was the same run twice keeps only its trace digest (its events are not needed).
fn run_and_verify(
    spec: RunSpec,
    self_check_every: u64,
    run_seed: impl Fn(&RunSpec) -> SeedOutcome,
) -> Finished {
    #[allow(clippy::disallowed_methods)] // the seed's wall time, for the JUnit report
    let started = std::time::Instant::now();
    let mut outcome = run_seed(&spec);
    if outcome
        .failure
        .as_deref()
        .is_some_and(threadsim::abandon::is_abandoned)
    {
        // Stopped by Ctrl-C or SIGTERM: nothing to verify, and nothing found.
        return Finished {
            spec,
            wall: started.elapsed(),
            outcome,
            verification: None,
        };
    }
    let deterministic = spec.scheduler.deterministic();
    let self_checked =
        deterministic && self_check_every > 0 && spec.seed.is_multiple_of(self_check_every);
    let verification = (outcome.failure.is_some() || self_checked)
        .then(|| Verification::compare(&outcome, run_seed(&spec), deterministic));
    let diverged = verification.as_ref().is_some_and(Verification::diverged);
    if outcome.failure.is_none() && !diverged {
        outcome.trace.events = Vec::new();
    }
    Finished {
        spec,
        wall: started.elapsed(),
        outcome,
        verification,
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
        Workload::ListAppend => format!(
            "list-append transactions ({} s per seed, strict serializability checked)",
            workload
                .duration
                .map_or_else(|| "27".to_string(), |d| d.as_secs_f64().to_string())
        ),
    };
    let mut mutations = if workload.mutations.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = workload.mutations.iter().map(|m| m.name()).collect();
        format!(", mutations: {}", names.join(", "))
    };
    if workload.overlap_unchecked {
        mutations.push_str(", configuration overlap NOT checked");
    }
    let shard = args
        .shard
        .map_or_else(String::new, |shard| format!(" (shard {shard} of {whole})"));
    let scheduler = spec.scheduler.describe(spec.pct_depth);
    if args.swarm {
        println!(
            "interleave chaos: swarm testing (each seed draws its cluster size, message loss, \
             faults, storage and snapshots; a failure's replay line says which; --fixed for one), \
             {shape}, seeds \
             {range}{shard}, {scheduler}, {workers} workers{mutations}"
        );
    } else {
        println!(
            "interleave chaos: {} nodes, {shape}, seeds {range}{shard}, {} network, {scheduler}, \
             {workers} workers{mutations}",
            workload.nodes,
            if workload.reliable {
                "reliable"
            } else {
                "unreliable (10% request and 10% reply loss)"
            },
        );
    }
    if args.first_seed == FirstSeed::Random {
        println!(
            "first seed drawn at random: {} (`--first-seed {}` runs this range again)",
            whole.first, whole.first
        );
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A passing run of `spec` whose trace holds `event`.
    fn passing(spec: &RunSpec, event: &str) -> SeedOutcome {
        let trace = threadsim::Trace::with_limit(10);
        trace.record(
            threadsim::Instant::ZERO,
            threadsim::Level::Info,
            event.into(),
        );
        SeedOutcome {
            seed: spec.seed,
            failure: None,
            figures: None,
            trace: trace.take(),
            schedule: None,
            kv: None,
            transactions: None,
            schedule_events: sim::schedule::Schedule::default(),
            coverage: Default::default(),
            faults_fired: Default::default(),
        }
    }

    #[test]
    fn the_self_check_reruns_every_nth_passing_seed_and_catches_a_run_that_differs() {
        let runs = Cell::new(0);
        // A build with uncontrolled nondeterminism: each run of a seed traces something else.
        let differs_every_time = |spec: &RunSpec| {
            runs.set(runs.get() + 1);
            passing(spec, &format!("run {}", runs.get()))
        };
        let seed = |seed| RunSpec::default().with_seed(seed);
        let unchecked = run_and_verify(seed(9), 10, differs_every_time);
        assert!(unchecked.verification.is_none(), "seed 9 is not the 10th");
        assert_eq!(runs.get(), 1);
        let checked = run_and_verify(seed(10), 10, differs_every_time);
        let verification = checked.verification.expect("seed 10 is rerun");
        assert!(verification.diverged(), "{verification:?}");
        assert!(
            !checked.outcome.trace.events.is_empty(),
            "a diverged seed keeps its trace for the report"
        );
        assert_eq!(runs.get(), 3);
        let off = run_and_verify(seed(20), 0, differs_every_time);
        assert!(off.verification.is_none(), "0 turns the self-check off");
    }

    #[test]
    fn a_seed_that_is_the_same_run_twice_passes_the_self_check_and_drops_its_events() {
        let same = |spec: &RunSpec| passing(spec, "the same");
        let checked = run_and_verify(RunSpec::default().with_seed(30), 10, same);
        let verification = checked.verification.expect("seed 30 is rerun");
        assert!(verification.holds() && !verification.diverged());
        assert!(checked.outcome.trace.events.is_empty());
    }
}
