//! [`Tally`]: the seeds of a run as they finish: each reported (a failure with its replay line,
//! verification and folder), its figures added up, and the progress line.

use super::{Finished, Run};
use crate::failure_folder;
use crate::outcome::SeedOutcome;
use crate::replay_line::replay_line;
use crate::verify::Verification;
use crate::{junit, JSON_VERSION};
use runspec::{RunFigures, RunSpec, Workload};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// Failing seeds whose folders are written (the rest are reported, not saved).
const MAX_SAVED_FAILURES: usize = 100;

/// What the finished seeds came to so far.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) done: u64,
    /// Failing seeds, and those whose rerun differed.
    pub(super) failures: Vec<u64>,
    pub(super) diverged: Vec<u64>,
    /// Passing seeds the determinism self-check ran twice.
    pub(super) self_checked: u64,
    /// The coverage points every seed reached.
    pub(super) coverage: crate::coverage::CoverageTally,
    /// Failing seeds stopped at their violation (no figures).
    pub(super) stopped_early: u64,
    /// Seeds under way when Ctrl-C or SIGTERM came, stopped before their end: not run.
    pub(super) abandoned: u64,
    saved: usize,
    pub(super) totals: RunFigures,
    /// The lowest failing seed whose replay held, and its folder: the one to shrink.
    pub(super) first_failure: Option<(SeedOutcome, RunSpec, Option<PathBuf>)>,
    pub(super) junit_cases: Vec<(u64, junit::Case)>,
    /// What the steering did (`--steer`), once it is done.
    pub(super) steering: Option<super::steer::SteeringFigures>,
}

impl Tally {
    /// Counts one finished seed and reports it (a passing one only in JSON).
    pub(super) fn record(&mut self, run: &Run<'_>, finished: Finished) {
        let Finished {
            spec,
            wall,
            outcome,
            verification,
        } = finished;
        if outcome
            .failure
            .as_deref()
            .is_some_and(threadsim::abandon::is_abandoned)
        {
            self.abandoned += 1;
            return;
        }
        self.done += 1;
        self.coverage.add(&outcome.coverage, &outcome.faults_fired);
        if run.args.junit.is_some() {
            let case = junit_case(&spec, &outcome, verification.as_ref(), wall);
            self.junit_cases.push(case);
        }
        match &outcome.figures {
            Some(figures) => self.totals += figures,
            None => self.stopped_early += 1,
        }
        match (&outcome.failure, &verification) {
            (None, Some(verification)) if verification.diverged() => {
                self.self_checked += 1;
                let failure = "the seed passed, but its rerun was not the same run";
                self.record_failure(run, &spec, &outcome, failure, verification)
            }
            (None, checked) => {
                self.self_checked += u64::from(checked.is_some());
                if run.args.json {
                    println!("{}", passed_json(&outcome, &spec));
                }
            }
            (Some(failure), Some(verification)) => {
                self.record_failure(run, &spec, &outcome, failure, verification)
            }
            (Some(_), None) => unreachable!("every failing seed is verified"),
        }
    }

    /// Reports a failing seed: its folder (the first [`MAX_SAVED_FAILURES`]), its replay line,
    /// what its rerun showed and the line that keeps it.
    fn record_failure(
        &mut self,
        run: &Run<'_>,
        spec: &RunSpec,
        outcome: &SeedOutcome,
        failure: &str,
        verification: &Verification,
    ) {
        let args = run.args;
        let replay = replay_line(spec, outcome.trace.digest);
        let folder = self.save(run, spec, outcome, &replay, verification);
        if args.json {
            let json = failed_json(
                outcome,
                spec,
                failure,
                &replay,
                verification,
                folder.as_deref(),
            );
            println!("{json}");
        } else {
            if run.interactive {
                eprint!("\r\x1b[K");
            }
            println!("FAILED seed {}: {failure}", outcome.seed);
            println!("replay: {replay}");
            println!("{}", verification.describe(outcome));
            if let Some(dir) = &folder {
                println!("trace and history: {}", dir.display());
            }
            if verification.holds() && spec.scheduler.deterministic() {
                println!(
                    "keep: {}   (a line for interleave/tests/regressions.txt)",
                    crate::regressions::line_for(spec)
                );
            }
        }
        self.failures.push(outcome.seed);
        if verification.holds()
            && self
                .first_failure
                .as_ref()
                .is_none_or(|(first, _, _)| outcome.seed < first.seed)
        {
            self.first_failure = Some((outcome.clone(), spec.clone(), folder.clone()));
        }
        if verification.diverged() {
            self.diverged.push(outcome.seed);
        }
        if args.fail_fast {
            run.stop.store(true, Ordering::SeqCst);
        }
    }

    /// Writes a failing seed's folder, while fewer than [`MAX_SAVED_FAILURES`] were.
    fn save(
        &mut self,
        run: &Run<'_>,
        spec: &RunSpec,
        outcome: &SeedOutcome,
        replay: &str,
        verification: &Verification,
    ) -> Option<PathBuf> {
        if self.saved >= MAX_SAVED_FAILURES {
            return None;
        }
        self.saved += 1;
        match failure_folder::save(&run.args.out, spec, outcome, replay, verification) {
            Ok(dir) => Some(dir),
            Err(error) => {
                eprintln!(
                    "interleave: cannot write the folder of seed {}: {error}",
                    outcome.seed
                );
                None
            }
        }
    }

    /// The progress line: redrawn on a terminal, every 10 seeds and at the end otherwise, never
    /// with `--json`.
    pub(super) fn show_progress(&self, run: &Run<'_>, elapsed: std::time::Duration) {
        let elapsed = elapsed.as_secs_f64().max(1e-9);
        let line = format!(
            "[{}/{}] failures {} | {:.0} simulated s | {:.0}x real time | {:.1} seeds/s",
            self.done,
            run.range.count,
            self.failures.len(),
            self.totals.simulated.as_secs_f64(),
            self.totals.simulated.as_secs_f64() / elapsed,
            self.done as f64 / elapsed
        );
        if run.interactive {
            eprint!("\r\x1b[K{line}");
            let _ = std::io::stderr().flush();
        } else if !run.args.json && (self.done.is_multiple_of(10) || self.done == run.range.count) {
            eprintln!("{line}");
        }
    }
}

/// A seed (whose run is `spec`) as a JUnit test case (with its seed, to sort by).
fn junit_case(
    spec: &RunSpec,
    outcome: &SeedOutcome,
    verification: Option<&Verification>,
    wall: std::time::Duration,
) -> (u64, junit::Case) {
    let failure = outcome.failure.as_ref().map(|failure| {
        let replay = replay_line(spec, outcome.trace.digest);
        let checked = verification.map_or_else(String::new, |v| v.describe(outcome));
        let message = failure.lines().next().unwrap_or_default().to_string();
        (message, format!("{failure}\n\nreplay: {replay}\n{checked}"))
    });
    let classname = match spec.workload {
        Workload::Raft => "chaos raft",
        Workload::Kv => "chaos kv",
        Workload::ListAppend => "chaos list-append",
    };
    let case = junit::Case {
        name: format!("seed {}", outcome.seed),
        classname: classname.to_string(),
        failure,
        time: Some(wall),
    };
    (outcome.seed, case)
}

fn passed_json(outcome: &SeedOutcome, spec: &RunSpec) -> serde_json::Value {
    let figures = outcome.figures.clone().unwrap_or_default();
    serde_json::json!({
        "version": JSON_VERSION,
        "seed": outcome.seed,
        "verdict": "passed",
        "engine": spec.scheduler.name(),
        "flags": spec.flags(),
        "simulated_s": figures.simulated.as_secs_f64(),
        "leaders_elected": figures.leaders_elected,
        "highest_applied": figures.highest_applied,
        "fault_windows_ms": windows_json(&figures.fault_windows),
        "trace_digest": outcome.trace.digest.to_string(),
        "schedule_digest": outcome.schedule.map(|s| format!("{:016x}", s.digest)),
        "thread_switches": outcome.schedule.map(|s| s.decisions),
        "most_switches_standing_still": outcome.schedule.map(|s| s.most_switches_standing_still),
    })
}

/// A duration in milliseconds, to the microsecond (a simulated run's resolution).
pub(super) fn millis(duration: std::time::Duration) -> f64 {
    duration.as_micros() as f64 / 1e3
}

/// Every window of one seed, per kind (`null`: no commit followed before the run ended).
fn windows_json(windows: &runspec::FaultWindows) -> serde_json::Value {
    let kinds = windows.kinds().map(|kind| {
        let each = windows.of(kind).iter().map(|window| window.map(millis));
        (kind.to_string(), serde_json::Value::from_iter(each))
    });
    serde_json::Value::Object(kinds.collect())
}

fn failed_json(
    outcome: &SeedOutcome,
    spec: &RunSpec,
    failure: &str,
    replay: &str,
    verification: &Verification,
    folder: Option<&std::path::Path>,
) -> serde_json::Value {
    serde_json::json!({
        "version": JSON_VERSION,
        "seed": outcome.seed,
        "verdict": "failed",
        "engine": spec.scheduler.name(),
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
