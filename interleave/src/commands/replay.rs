//! `interleave replay`: one seed again, its event trace, and with `--attempts N` how often the
//! run comes out the same.

use crate::cli::ReplayArgs;
use crate::command_error::CommandError;
use crate::engines::{run_seed_following, Watchdog};
use crate::outcome::SeedOutcome;
use crate::shrink::{read_schedule, spec_of};
use runspec::RunSpec;
use sim::schedule::Schedule;
use std::process::ExitCode;

/// What to run: the run and (with `--schedule`) its events.
struct Run {
    spec: RunSpec,
    schedule: Option<Schedule>,
}

/// The run `args` ask for: the seed and flags given, or a schedule file's (whose mutations
/// `--mutation` or `--no-mutations` replace).
fn what_to_run(args: &ReplayArgs) -> Result<Run, CommandError> {
    let given = |seed| {
        let mut spec = args.workload.spec(&args.engine, seed);
        if args.no_mutations {
            spec.mutations.clear();
        }
        spec
    };
    let Some(path) = &args.schedule else {
        let seed = args.seed.expect("clap requires --seed without --schedule");
        return Ok(Run {
            spec: given(seed),
            schedule: None,
        });
    };
    let schedule = read_schedule(path)?;
    let mut spec = spec_of(&schedule).map_err(|source| CommandError::InScheduleFile {
        path: path.clone(),
        source,
    })?;
    if args.seed.is_some_and(|given| given != spec.seed) {
        return Err(CommandError::OtherSeed {
            path: path.clone(),
            seed: spec.seed,
        });
    }
    if args.no_mutations || !args.workload.mutations.is_empty() {
        spec.mutations = given(spec.seed).mutations;
    }
    Ok(Run {
        spec,
        schedule: Some(schedule),
    })
}

/// Runs the seed `args.attempts` times; prints the first run's trace and verdict, and with
/// several attempts how many failed and how many were identical to the first. Exit 1 if the first
/// run failed, 0 if not, 2 on bad input or if the trace cannot be written.
pub fn replay(args: &ReplayArgs, watchdog: Watchdog) -> ExitCode {
    let checked = what_to_run(args).and_then(|run| {
        crate::run_spec::check_runnable(&run.spec)?;
        Ok(run)
    });
    let run = match checked {
        Ok(run) => run,
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    let attempt = || run_seed_following(&run.spec, watchdog, run.schedule.as_ref());
    let first = attempt();
    if let Err(message) = write_trace_and_report(args, &run.spec, &first) {
        eprintln!("interleave: {message}");
        return ExitCode::from(2);
    }
    let mut attempts = Attempts {
        made: args.attempts,
        failed: u32::from(first.failure.is_some()),
        identical: 1,
    };
    let fingerprint = first.fingerprint();
    for _ in 1..args.attempts {
        let again = attempt();
        attempts.failed += u32::from(again.failure.is_some());
        attempts.identical += u32::from(again.fingerprint() == fingerprint);
    }
    if args.json {
        println!("{}", json(args, &run.spec, &first, &attempts));
    } else {
        print_verdict(&first, &run.spec);
        print_checks(args, &run.spec, &first, &attempts);
    }
    if first.failure.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// How the attempts came out: how many were made, failed, and were identical to the first.
struct Attempts {
    made: u32,
    failed: u32,
    identical: u32,
}

/// The first run's trace, to `--out` or standard error, and with `--report` its page.
fn write_trace_and_report(
    args: &ReplayArgs,
    spec: &RunSpec,
    first: &SeedOutcome,
) -> Result<(), CommandError> {
    let level = if args.verbose {
        threadsim::Level::Debug
    } else {
        threadsim::Level::Info
    };
    let trace = first.trace.render(level);
    match &args.out {
        Some(path) => userfiles::write_whole(path, &trace)?,
        None => eprint!("{trace}"),
    }
    if let Some(path) = &args.report {
        let verdict = first.failure.as_deref().unwrap_or("nothing found");
        let lines = vec![
            verdict.to_string(),
            format!("engine: {}", spec.scheduler.describe(spec.pct_depth)),
            format!("workload: {}", spec.flags()),
        ];
        let title = format!(
            "seed {}: {}",
            spec.seed,
            verdict.lines().next().unwrap_or_default()
        );
        crate::report::write(path, first, title, lines, None)?;
    }
    Ok(())
}

/// The verdict and the attempts as one JSON object (`--json`).
fn json(
    args: &ReplayArgs,
    spec: &RunSpec,
    first: &SeedOutcome,
    attempts: &Attempts,
) -> serde_json::Value {
    serde_json::json!({
        "version": crate::JSON_VERSION,
        "seed": spec.seed,
        "engine": spec.scheduler.name(),
        "verdict": if first.failure.is_some() { "failed" } else { "passed" },
        "violation": first.failure,
        "trace_events": first.trace.events.len(),
        "trace_digest": first.trace.digest.to_string(),
        "schedule_digest": first.schedule.map(|s| format!("{:016x}", s.digest)),
        "attempts": attempts.made,
        "failed": attempts.failed,
        "identical": attempts.identical,
        "matches_expected": args.expect.map(|digest| digest == first.trace.digest.value()),
    })
}

/// Whether the run is the one `--expect` names, and how the attempts came out.
fn print_checks(args: &ReplayArgs, spec: &RunSpec, first: &SeedOutcome, attempts: &Attempts) {
    if let Some(expected) = args.expect {
        if expected == first.trace.digest.value() {
            println!("the same run as the one that found it (trace digest {expected:016x})");
        } else {
            println!(
                "NOT the run that found it: trace digest {} where {expected:016x} was expected \
                 (a different build of interleave, or uncontrolled nondeterminism)",
                first.trace.digest
            );
        }
    }
    if attempts.made > 1 {
        println!(
            "{} attempts on {}: {} failed, {} identical to the first (same violation, trace{})",
            attempts.made,
            spec.scheduler.describe(spec.pct_depth),
            attempts.failed,
            attempts.identical,
            if spec.scheduler.deterministic() {
                " and schedule"
            } else {
                ""
            }
        );
    }
}

fn print_verdict(outcome: &SeedOutcome, spec: &RunSpec) {
    let schedule = outcome.schedule.map_or(String::new(), |schedule| {
        format!(
            ", {} thread switches with a choice (schedule digest {:016x})",
            schedule.decisions, schedule.digest
        )
    });
    let identity = format!(
        "{}; {} trace events (digest {}){schedule}",
        spec.scheduler.describe(spec.pct_depth),
        outcome.trace.events.len(),
        outcome.trace.digest
    );
    match &outcome.failure {
        None => println!("seed {}: nothing found ({identity})", outcome.seed),
        Some(failure) => println!("seed {} FAILED: {failure} ({identity})", outcome.seed),
    }
}
