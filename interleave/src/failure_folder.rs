//! A failing seed's folder: everything from the failing run itself, not from a re-run.
//!
//! - `violation.txt`: the violation, the replay line and what its verification showed;
//! - `trace.log`: the run's whole event trace (roles, faults, commits, applied entries);
//! - `schedule.txt`: the engine, the seed, and the digests that identify the run;
//! - for the key-value workload, `history.jsonl` (the checker's native format) and
//!   `history.html` (the counterexample);
//! - when the rerun diverged, `trace.replay.log`: the rerun's trace, to compare.

use crate::engines::EngineChoice;
use crate::outcome::SeedOutcome;
use crate::verify::Verification;
use std::path::{Path, PathBuf};

/// Writes the folder of `outcome` under `out` and returns it.
pub fn save(
    out: &Path,
    outcome: &SeedOutcome,
    engine: &EngineChoice,
    replay: &str,
    verification: &Verification,
) -> std::io::Result<PathBuf> {
    let dir = out.join(format!("seed-{}", outcome.seed));
    std::fs::create_dir_all(&dir)?;
    let failure = outcome.failure.as_deref().unwrap_or("(none)");
    std::fs::write(
        dir.join("violation.txt"),
        format!(
            "{failure}\nreplay: {replay}\n{}\n",
            verification.describe(outcome)
        ),
    )?;
    std::fs::write(
        dir.join("trace.log"),
        outcome.trace.render(threadsim::Level::Debug),
    )?;
    let schedule = match outcome.schedule {
        Some(schedule) => format!(
            "thread switches with a choice: {}\nthreads: {}\nschedule digest: {:016x}\n",
            schedule.decisions, schedule.tasks, schedule.digest
        ),
        None => "thread switches: chosen by the operating system (not recorded)\n".to_string(),
    };
    std::fs::write(
        dir.join("schedule.txt"),
        format!(
            "engine: {}\nseed: {}\n{schedule}trace events: {}\ntrace digest: {}\n",
            engine.describe(),
            outcome.seed,
            outcome.trace.events.len(),
            outcome.trace.digest
        ),
    )?;
    if let Some(kv) = &outcome.kv {
        sim::kv_workload::write_failure(&dir, "history", &kv.history, &kv.report)?;
    }
    if let Verification::Diverged { replayed, .. } = verification {
        std::fs::write(
            dir.join("trace.replay.log"),
            replayed.trace.render(threadsim::Level::Debug),
        )?;
    }
    Ok(dir)
}
