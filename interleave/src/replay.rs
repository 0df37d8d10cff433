//! `interleave replay`: one seed again, its event trace, and with `--attempts N` how often the
//! run comes out the same.

use crate::cli::ReplayArgs;
use crate::engines::{run_seed, EngineChoice};
use crate::outcome::SeedOutcome;
use std::process::ExitCode;

/// Runs the seed `args.attempts` times; prints the first run's trace and verdict, and with
/// several attempts how many failed and how many were identical to the first. Exit 1 if the first
/// run failed, 0 if not, 2 if the trace cannot be written.
pub fn replay(args: &ReplayArgs, engine: EngineChoice) -> ExitCode {
    let seed = args.seed;
    let first = run_seed(&engine, &args.workload, seed);
    let level = if args.verbose {
        threadsim::Level::Debug
    } else {
        threadsim::Level::Info
    };
    let trace = first.trace.render(level);
    match &args.out {
        Some(path) => {
            if let Err(error) = std::fs::write(path, &trace) {
                eprintln!("interleave: cannot write {}: {error}", path.display());
                return ExitCode::from(2);
            }
        }
        None => eprint!("{trace}"),
    }
    let (mut failed, mut identical) = (u32::from(first.failure.is_some()), 1u32);
    let fingerprint = first.fingerprint();
    for _ in 1..args.attempts {
        let again = run_seed(&engine, &args.workload, seed);
        failed += u32::from(again.failure.is_some());
        identical += u32::from(again.fingerprint() == fingerprint);
    }
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "seed": seed,
                "engine": engine.scheduler.name(),
                "verdict": if first.failure.is_some() { "failed" } else { "passed" },
                "violation": first.failure,
                "trace_events": first.trace.events.len(),
                "trace_digest": first.trace.digest.to_string(),
                "schedule_digest": first.schedule.map(|s| format!("{:016x}", s.digest)),
                "attempts": args.attempts,
                "failed": failed,
                "identical": identical,
                "matches_expected": args.expect.map(|digest| digest == first.trace.digest.value()),
            })
        );
    } else {
        print_verdict(&first, &engine);
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
        if args.attempts > 1 {
            println!(
                "{} attempts on {}: {failed} failed, {identical} identical to the first (same violation, trace{})",
                args.attempts,
                engine.describe(),
                if engine.scheduler.deterministic() {
                    " and schedule"
                } else {
                    ""
                }
            );
        }
    }
    if first.failure.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_verdict(outcome: &SeedOutcome, engine: &EngineChoice) {
    let schedule = outcome.schedule.map_or(String::new(), |schedule| {
        format!(
            ", {} thread switches with a choice (schedule digest {:016x})",
            schedule.decisions, schedule.digest
        )
    });
    let identity = format!(
        "{}; {} trace events (digest {}){schedule}",
        engine.describe(),
        outcome.trace.events.len(),
        outcome.trace.digest
    );
    match &outcome.failure {
        None => println!("seed {}: nothing found ({identity})", outcome.seed),
        Some(failure) => println!("seed {} FAILED: {failure} ({identity})", outcome.seed),
    }
}
