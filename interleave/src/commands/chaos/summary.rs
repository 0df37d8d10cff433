//! The end of a run: the first failure shrunk, the JUnit report written, and the summary, as
//! text or as one JSON object; and the exit status.

use super::tally::{millis, Tally};
use super::Run;
use crate::coverage::Reachable;
use crate::outcome::SeedOutcome;
use crate::shrink::ShrinkReport;
use crate::{junit, JSON_VERSION};
use runspec::FaultWindows;
use std::path::PathBuf;
use std::process::ExitCode;

/// The first failure's shrink: its seed, the report and the file written.
type Shrunk = (u64, ShrinkReport, Option<PathBuf>);

/// Shrinks the first failure (unless told not to, on OS threads, or interrupted), writes the
/// JUnit report, prints the summary; exit 0 nothing found, 1 a failure, 2 the report could not
/// be written, 128 + the signal when interrupted.
pub(super) fn finish(run: &Run<'_>, mut tally: Tally, elapsed: std::time::Duration) -> ExitCode {
    let args = run.args;
    tally.failures.sort_unstable();
    tally.diverged.sort_unstable();
    let interrupted = crate::interrupt::interrupted();
    let shrunk = match tally.first_failure.take() {
        Some((outcome, spec, folder))
            if !args.no_shrink && run.spec.scheduler.deterministic() && !interrupted =>
        {
            Some(shrink_first(run, &spec, &outcome, folder.as_deref()))
        }
        _ => None,
    };
    let mut status_ok = true;
    if let Some(file) = &args.junit {
        let mut cases = std::mem::take(&mut tally.junit_cases);
        cases.sort_by_key(|case: &(u64, junit::Case)| case.0);
        let cases: Vec<junit::Case> = cases.into_iter().map(|(_, case)| case).collect();
        if let Err(message) = junit::write(file, "interleave chaos", &cases, elapsed) {
            eprintln!("interleave: {message}");
            status_ok = false;
        }
    }
    let reachable = Reachable::of(&run.spec, args.swarm);
    if let Some(file) = &args.coverage {
        let json = tally.coverage.to_json(reachable);
        if let Err(error) = userfiles::write_whole(file, format!("{json:#}\n")) {
            eprintln!("interleave: {error}");
            status_ok = false;
        }
    }
    if args.json {
        println!("{}", summary_json(run, &tally, elapsed, shrunk.as_ref()));
    } else {
        print_summary(run, &tally, elapsed, shrunk.as_ref());
    }
    let unreached = tally.coverage.unreached(reachable);
    let coverage_gap = args.require_coverage && !interrupted && !unreached.is_empty();
    if coverage_gap {
        let names: Vec<&str> = unreached.iter().map(|point| point.name()).collect();
        eprintln!(
            "interleave: coverage gate: {} reachable point(s) reached by no seed: {}",
            names.len(),
            names.join("; ")
        );
    }
    if crate::interrupt::interrupted() {
        ExitCode::from(crate::interrupt::interrupted_exit())
    } else if !tally.failures.is_empty() || !tally.diverged.is_empty() || coverage_gap {
        ExitCode::from(1)
    } else if !status_ok {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The summary as the last JSON line of `--json`.
fn summary_json(
    run: &Run<'_>,
    tally: &Tally,
    elapsed: std::time::Duration,
    shrunk: Option<&Shrunk>,
) -> serde_json::Value {
    let args = run.args;
    serde_json::json!({
        "summary": {
            "version": JSON_VERSION,
            "seeds": tally.done,
            "range": run.range.to_string(),
            "first_seed": run.whole.first,
            "shard": args.shard.map(|shard| shard.to_string()),
            // What makes shards one run: gather refuses a set that differs in any of these.
            "run": {
                "range": run.whole.to_string(),
                "flags": run.spec.flags(),
                "swarm": args.swarm,
                "tool": env!("CARGO_PKG_VERSION"),
            },
            "interrupted": crate::interrupt::interrupted(),
            "abandoned": tally.abandoned,
            "engine": run.spec.scheduler.describe(run.spec.pct_depth),
            "failures": tally.failures,
            "nondeterministic": tally.diverged,
            "self_checked": tally.self_checked,
            "coverage": tally.coverage.to_json(Reachable::of(&run.spec, args.swarm)),
            "steering": tally.steering.map(|steering| serde_json::json!({
                "runs": steering.runs,
                "mutants": steering.mutants,
                "kept_fresh": steering.kept_fresh,
                "kept_mutants": steering.kept_mutants,
            })),
            "wall_s": elapsed.as_secs_f64(),
            "simulated_s": tally.totals.simulated.as_secs_f64(),
            "unavailability": unavailability_json(&tally.totals.fault_windows),
            "shrunk": shrunk.map(|(seed, report, file)| serde_json::json!({
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
    })
}

/// The summary as text: the run's figures, what stopped it early, the shrunk failure and the
/// verdict.
fn print_summary(
    run: &Run<'_>,
    tally: &Tally,
    elapsed: std::time::Duration,
    shrunk: Option<&Shrunk>,
) {
    let (args, totals, done) = (run.args, &tally.totals, tally.done);
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
    if totals.pauses > 0 {
        println!("{} process pauses", totals.pauses);
    }
    if totals.torn_saves > 0 {
        println!(
            "{} saves torn by a crash (each node came back with the state before the save or after it)",
            totals.torn_saves
        );
    }
    if totals.misdirected_saves + totals.copies_corrupted > 0 {
        println!(
            "{} saves misdirected, {} copies corrupted at rest; {} loads read past a damaged or stale copy (and never served it)",
            totals.misdirected_saves, totals.copies_corrupted, totals.damaged_copies_read_past
        );
    }
    if totals.log_power_losses + totals.log_roll_overs > 0 {
        println!(
            "the server's log: {} power losses took {} bytes written and not synced; {} segment roll-overs",
            totals.log_power_losses, totals.log_bytes_lost, totals.log_roll_overs
        );
    }
    if totals.refused_starts > 0 {
        println!(
            "{} restarts refused by a node whose disk failed its read (latent read errors)",
            totals.refused_starts
        );
    }
    if totals.membership_changes > 0 {
        println!(
            "{} configuration changes appended (learners added, promoted, demoted, removed)",
            totals.membership_changes
        );
    }
    if totals.leadership_transfers > 0 {
        println!(
            "{} transfers of leadership started",
            totals.leadership_transfers
        );
    }
    if run.spec.snapshot_threshold.is_some() || totals.snapshots_taken > 0 {
        println!(
            "{} snapshots taken, {} installed from a leader (every one checked against the state it claims)",
            totals.snapshots_taken, totals.snapshots_installed
        );
    }
    print_unavailability(&totals.fault_windows);
    if crate::interrupt::interrupted() {
        let abandoned = match tally.abandoned {
            0 => String::new(),
            1 => " (1 under way abandoned)".to_string(),
            n => format!(" ({n} under way abandoned)"),
        };
        println!(
            "interrupted by {}: {done} of {} seeds ran{abandoned}{}",
            crate::interrupt::interruption(),
            run.range.count,
            if !tally.failures.is_empty() && !args.no_shrink {
                "; the first failure was not shrunk (`interleave shrink FOLDER` shrinks it)"
            } else {
                ""
            }
        );
    }
    if tally.stopped_early > 0 {
        println!(
            "({} failing seed(s) stopped at their violation: their figures are not in the totals)",
            tally.stopped_early
        );
    }
    if !tally.diverged.is_empty() {
        println!(
            "UNCONTROLLED NONDETERMINISM in {} seed(s) {:?}: their reruns differed",
            tally.diverged.len(),
            tally.diverged
        );
    }
    for line in tally
        .coverage
        .describe(Reachable::of(&run.spec, run.args.swarm))
    {
        println!("{line}");
    }
    if let Some(steering) = &tally.steering {
        println!("{}", steering.describe());
    }
    if tally.self_checked > 0 && tally.diverged.is_empty() {
        println!(
            "determinism self-check: {} passing seeds run twice, each the same run both times",
            tally.self_checked
        );
    }
    if let Some((seed, report, file)) = shrunk {
        println!("\nthe failure of seed {seed}, shrunk:");
        print!("{}", report.describe());
        if let Some(file) = file {
            let line = crate::shrink::replay_schedule_line(file, &run.spec);
            println!("replay: {line}");
        }
    }
    print_verdict(tally, run.spec.workload);
}

/// Per kind of fault on the leader, how long the commits stopped after it.
fn print_unavailability(windows: &FaultWindows) {
    if windows.is_empty() {
        return;
    }
    println!(
        "time until the next commit after a fault on the leader (median, 99th percentile, worst):"
    );
    for (kind, stats) in windows.stats() {
        let never = match stats.never_closed {
            0 => String::new(),
            n => format!(", {n} never followed by a commit"),
        };
        println!(
            "  {kind}: {} ms, {} ms, {} ms of {} fault(s){never}",
            stats.median.as_millis(),
            stats.p99.as_millis(),
            stats.worst.as_millis(),
            stats.faults
        );
    }
}

/// The windows summarised per kind, as JSON.
fn unavailability_json(windows: &FaultWindows) -> serde_json::Value {
    let kinds = windows.stats().into_iter().map(|(kind, stats)| {
        let value = serde_json::json!({
            "faults": stats.faults,
            "never_closed": stats.never_closed,
            "median_ms": millis(stats.median),
            "p99_ms": millis(stats.p99),
            "worst_ms": millis(stats.worst),
        });
        (kind.to_string(), value)
    });
    serde_json::Value::Object(kinds.collect())
}

/// The last line: what was found.
fn print_verdict(tally: &Tally, workload: runspec::Workload) {
    if !tally.failures.is_empty() {
        println!(
            "found {} failing seed(s): {:?}",
            tally.failures.len(),
            tally.failures
        );
        return;
    }
    if tally.totals.operations_checked > 0 {
        let (what, verdict) = match workload {
            runspec::Workload::ListAppend => ("transactions", "strictly serializable"),
            _ => ("client operations", "linearizable"),
        };
        println!(
            "{} {what} checked: every history was {verdict}",
            tally.totals.operations_checked
        );
    }
    if crate::interrupt::interrupted() {
        println!("found nothing: every invariant held on every seed that ran");
    } else {
        println!("found nothing: every invariant held on every seed");
    }
}

/// Shrinks the schedule of `outcome` (a failing seed) and writes it beside the full one in its
/// folder; returns the seed, the report and the file.
fn shrink_first(
    run: &Run<'_>,
    spec: &runspec::RunSpec,
    outcome: &SeedOutcome,
    folder: Option<&std::path::Path>,
) -> Shrunk {
    let args = run.args;
    if !args.json {
        eprintln!(
            "shrinking the failure of seed {} for at most {} s (Ctrl-C stops it and keeps the smallest so far) ...",
            outcome.seed, args.shrink_time
        );
    }
    let full =
        crate::shrink::with_notes(&outcome.schedule_events, spec, outcome.failure.as_deref());
    let report = crate::shrink::shrink_failure(
        spec,
        run.watchdog,
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
