//! A failing seed's folder: everything from the failing run itself, not from a re-run.
//!
//! - `violation.txt`: the violation, the replay line and what its verification showed;
//! - `trace.log`: the run's whole event trace (roles, faults, commits, applied entries);
//! - `report.html`: the run as a picture, one lane per node (roles, terms, crashes, partitions,
//!   the violation), drawn from that trace;
//! - `run.txt`: the engine, the seed, and the digests that identify the run;
//! - `schedule.full.txt`: the run's external events (`interleave replay --schedule` runs them
//!   again, `interleave shrink` shrinks them), and `schedule.shrunk.txt` once shrunk;
//! - for the list-append workload, `transactions.jsonl` (`check --model list-append --format
//!   json` reads it);
//! - for the key-value workload, `history.jsonl` (the checker's native format) and
//!   `history.html` (the counterexample);
//! - when the rerun diverged, `trace.replay.log`: the rerun's trace, to compare.

use crate::outcome::SeedOutcome;
use crate::verify::Verification;
use runspec::RunSpec;
use std::path::{Path, PathBuf};

use userfiles::write_whole;

/// Writes the folder of `outcome` (a run of `spec`) under `out` and returns it.
pub fn save(
    out: &Path,
    spec: &RunSpec,
    outcome: &SeedOutcome,
    replay: &str,
    verification: &Verification,
) -> std::io::Result<PathBuf> {
    let dir = out.join(format!("seed-{}", outcome.seed));
    std::fs::create_dir_all(&dir)?;
    let failure = outcome.failure.as_deref().unwrap_or("(none)");
    write_whole(
        &dir.join("violation.txt"),
        format!(
            "{failure}\nreplay: {replay}\n{}\n",
            verification.describe(outcome)
        ),
    )?;
    write_whole(
        &dir.join("trace.log"),
        outcome.trace.render(threadsim::Level::Debug),
    )?;
    let threads = match outcome.schedule {
        Some(schedule) => format!(
            "thread switches with a choice: {}\nthreads: {}\nthread schedule digest: {:016x}\n",
            schedule.decisions, schedule.tasks, schedule.digest
        ),
        None => "thread switches: chosen by the operating system (not recorded)\n".to_string(),
    };
    let schedule =
        crate::shrink::with_notes(&outcome.schedule_events, spec, outcome.failure.as_deref());
    write_whole(&dir.join("schedule.full.txt"), schedule.to_string())?;
    write_whole(
        &dir.join("run.txt"),
        format!(
            "engine: {}\nseed: {}\n{threads}trace events: {}\ntrace digest: {}\n",
            spec.scheduler.describe(spec.pct_depth),
            outcome.seed,
            outcome.trace.events.len(),
            outcome.trace.digest
        ),
    )?;
    if let Some(kv) = &outcome.kv {
        sim::kv_workload::write_failure(&dir, "history", &kv.history, &kv.report)?;
    }
    if let Some(txns) = &outcome.transactions {
        write_whole(
            &dir.join("transactions.jsonl"),
            models::formats::txn_json::write_txns(&txns.history),
        )?;
    }
    crate::report::write(
        &dir.join("report.html"),
        outcome,
        format!("seed {}: {}", outcome.seed, first_line(failure)),
        vec![
            failure.to_string(),
            format!("replay: {replay}"),
            verification.describe(outcome),
            format!("engine: {}", spec.scheduler.describe(spec.pct_depth)),
        ],
        outcome.kv.is_some().then_some("history.html"),
    )?;
    if let Verification::Diverged { replayed, .. } = verification {
        write_whole(
            &dir.join("trace.replay.log"),
            replayed.trace.render(threadsim::Level::Debug),
        )?;
    }
    Ok(dir)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}
