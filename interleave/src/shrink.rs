//! Shrinking a failing seed's schedule (`sim::shrink`) by replaying candidates on the
//! deterministic engine with the seed, and the schedule files it reads and writes.
//!
//! A schedule file carries what it takes to run it again as notes: the seed, the workload and
//! engine flags, and the violation it produced.

use crate::engines::{run_seed_following, Watchdog};
use crate::replay_line::replay_prefix;
use runspec::{RunSpec, Workload};
use sim::schedule::Schedule;
use sim::shrink::{shrink, violation_kind, Hints, Shrunk};
use std::path::Path;
use std::time::Duration;

/// `events` with the notes that say how to run them again (`RunSpec::notes`).
pub fn with_notes(events: &Schedule, spec: &RunSpec, violation: Option<&str>) -> Schedule {
    Schedule {
        notes: spec.notes(violation),
        events: events.events.clone(),
    }
}

/// Why a schedule file cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleFileError {
    /// It cannot be read.
    #[error(transparent)]
    Read(#[from] userfiles::ReadError),
    /// It is not a schedule.
    #[error("{}: {source}", .path.display())]
    Parse {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong.
        source: sim::schedule::ParseError,
    },
    /// Its notes do not say a run.
    #[error(transparent)]
    Notes(#[from] runspec::SpecError),
    /// Its events name a node the run has not (the schedule's words).
    #[error("{0}")]
    Nodes(String),
    /// The run it says is refused.
    #[error(transparent)]
    Refused(#[from] crate::run_spec::RunRefused),
}

/// The run a schedule file's notes say, checked against its events (every node they name is
/// in the cluster) and against this build (a broken variant needs a build with them).
pub fn spec_of(schedule: &Schedule) -> Result<RunSpec, ScheduleFileError> {
    let spec = RunSpec::from_notes(&schedule.notes)?;
    let clients = match spec.workload {
        Workload::Raft => Vec::new(),
        Workload::Kv | Workload::ListAppend => {
            sim::client_endpoints(sim::KvWorkloadConfig::default().clients)
        }
    };
    schedule
        .check_nodes(spec.nodes as usize, &clients)
        .map_err(ScheduleFileError::Nodes)?;
    crate::run_spec::check_runnable(&spec)?;
    crate::run_spec::check_schedule_end(&spec, schedule.end())?;
    Ok(spec)
}

/// The largest schedule file read (16 MiB): a shrunk schedule takes a few hundred bytes, a full
/// one of a long run some hundred kilobytes.
pub const MAX_SCHEDULE_BYTES: u64 = 16 << 20;

/// Reads a schedule file (a regular file within [`MAX_SCHEDULE_BYTES`]), with a clear error
/// naming it.
pub fn read_schedule(path: &Path) -> Result<Schedule, ScheduleFileError> {
    let text = userfiles::read_text(path, MAX_SCHEDULE_BYTES)?;
    text.parse().map_err(|source| ScheduleFileError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// The command that replays the schedule file at `path`, of a run of `spec`.
pub fn replay_schedule_line(path: &Path, spec: &RunSpec) -> String {
    let prefix = replay_prefix(spec.asks_for_broken());
    format!("{prefix} replay --schedule {}", path.display())
}

/// A shrink's result, with what it took.
pub struct ShrinkReport {
    /// The kind of violation kept.
    pub kind: String,
    /// The shrunk schedule (with the full one's notes).
    pub shrunk: Shrunk,
    /// The failing run's seed (the shrunk schedule may note another: see `sim::shrink`).
    pub seed: u64,
    /// Events before and after.
    pub events_before: usize,
    /// Wall time.
    pub wall: Duration,
    /// Whether a replay of the shrunk schedule failed the same way once more.
    pub verified: bool,
}

/// Shrinks `full` (a schedule that made `spec` fail with `failure`), for at most `budget` of
/// real time.
pub fn shrink_failure(
    spec: &RunSpec,
    watchdog: Watchdog,
    full: &Schedule,
    failure: &str,
    budget: Duration,
) -> ShrinkReport {
    #[allow(clippy::disallowed_methods)] // the shrinker's budget is real time
    let started = std::time::Instant::now();
    let seed = spec.seed;
    let kind = violation_kind(failure);
    let same_kind = |outcome: &crate::outcome::SeedOutcome| {
        outcome
            .failure
            .as_deref()
            .is_some_and(|f| violation_kind(f) == kind)
    };
    let full = &with_seed(full, seed);
    // Candidates carry their seed: a reroll tries another.
    let run = |candidate: &Schedule| {
        let seed = candidate.seed().unwrap_or(seed);
        run_seed_following(&spec.with_seed(seed), watchdog, Some(candidate))
    };
    // The full schedule once more: it must fail (following a run's own schedule repeats it), and
    // its trace says when.
    let first = run(full);
    if !same_kind(&first) {
        return ShrinkReport {
            seed,
            kind,
            events_before: full.removable(),
            wall: started.elapsed(),
            verified: false,
            shrunk: Shrunk {
                schedule: full.clone(),
                tests: 1,
                minimal: false,
                out_of_time: false,
            },
        };
    }
    let hints = Hints {
        violation_at: violation_time(&first.trace),
        inert: offers_to_followers(full, &first.trace),
    };
    let mut still_fails = |candidate: &Schedule| same_kind(&run(candidate));
    let out_of_time = || started.elapsed() >= budget || crate::interrupt::interrupted();
    let mut shrunk = shrink(full, &hints, &mut still_fails, &out_of_time);
    let replayed = run(&shrunk.schedule);
    let verified = same_kind(&replayed);
    if let Some(failure) = replayed.failure.filter(|_| verified) {
        let first = failure.lines().next().unwrap_or_default().to_string();
        shrunk.schedule.set_note(runspec::VIOLATION_NOTE, first);
    }
    ShrinkReport {
        seed,
        kind,
        events_before: full.removable(),
        wall: started.elapsed(),
        verified,
        shrunk,
    }
}

/// `schedule` with its seed noted as `seed`.
fn with_seed(schedule: &Schedule, seed: u64) -> Schedule {
    let mut noted = schedule.clone();
    noted.set_note(runspec::SEED_NOTE, seed.to_string());
    noted
}

/// When the first invariant violation in `trace` happened, since the run started.
fn violation_time(trace: &threadsim::TraceLog) -> Option<Duration> {
    trace
        .events
        .iter()
        .find(|event| event.text.starts_with("invariant violated"))
        .map(|event| event.at.since_epoch())
}

/// The commands of `schedule` offered to a node that, as `trace` shows, was not leading then
/// (it refused them).
fn offers_to_followers(schedule: &Schedule, trace: &threadsim::TraceLog) -> Vec<usize> {
    let mut leading = std::collections::BTreeSet::new();
    let mut roles = trace.events.iter().peekable();
    let mut refused = Vec::new();
    for (index, timed) in schedule.events.iter().enumerate() {
        while let Some(event) = roles.next_if(|event| event.at.since_epoch() <= timed.at) {
            let words: Vec<&str> = event.text.split_whitespace().collect();
            match words.as_slice() {
                [node, "is", "Leader", ..] => {
                    leading.insert(node.to_string());
                }
                [node, "is", ..] | ["crash", node, ..] => {
                    leading.remove(*node);
                }
                _ => {}
            }
        }
        if let sim::schedule::Event::Offer { to, .. } = timed.event {
            if !leading.contains(&to.to_string()) {
                refused.push(index);
            }
        }
    }
    refused
}

impl ShrinkReport {
    /// The summary line and the shrunk schedule, indented.
    pub fn describe(&self) -> String {
        let mut out = format!(
            "shrunk {} events to {} in {} runs ({:.1} s){}{}; {}\n",
            self.events_before,
            self.shrunk.schedule.removable(),
            self.shrunk.tests,
            self.wall.as_secs_f64(),
            match self.shrunk.schedule.seed() {
                Some(other) if other != self.seed => format!(", with seed {other}"),
                _ => String::new(),
            },
            if self.shrunk.minimal {
                ", 1-minimal (no single event can go)".to_string()
            } else if self.shrunk.out_of_time && crate::interrupt::interrupted() {
                format!(
                    ", stopped by {} (not minimal)",
                    crate::interrupt::interruption()
                )
            } else if self.shrunk.out_of_time {
                ", budget spent (not minimal)".to_string()
            } else {
                String::new()
            },
            if self.verified {
                format!("replay verified: it fails with {} again", self.kind)
            } else {
                format!("NOT verified: a replay did not fail with {}", self.kind)
            }
        );
        for timed in &self.shrunk.schedule.events {
            out.push_str(&format!(
                "  {} {}\n",
                sim::schedule::format_time(timed.at),
                timed.event
            ));
        }
        out
    }
}
