//! Replay verification: a failing seed is run again before its replay line is printed, and the
//! two runs are compared.
//!
//! On the deterministic engine the rerun must be identical (same violation, same event trace,
//! same schedule); anything else is uncontrolled nondeterminism, a bug of its own. On OS threads
//! a rerun is only another try: it says whether the same violation came back.

use crate::outcome::SeedOutcome;

/// What the rerun of a failing seed showed.
#[derive(Clone, Debug)]
pub enum Verification {
    /// The rerun was identical: the replay line is a promise kept.
    Identical,
    /// Deterministic engine: the rerun differed, so something outside the seed reached the run.
    Diverged {
        /// How, in words.
        differences: Vec<String>,
        /// The first trace event that differs (its position).
        first_different_event: Option<usize>,
        /// The rerun, with its trace.
        replayed: Box<SeedOutcome>,
    },
    /// OS threads: the rerun failed with the same violation (its trace may differ).
    Reproduced,
    /// OS threads: the rerun did not fail the same way.
    NotReproduced {
        /// The rerun's violation, if it failed at all.
        replayed_failure: Option<String>,
    },
}

impl Verification {
    /// Compares a failing run with its rerun.
    pub fn compare(
        first: &SeedOutcome,
        replayed: SeedOutcome,
        deterministic: bool,
    ) -> Verification {
        if deterministic {
            let differences = first.fingerprint().differences(&replayed.fingerprint());
            if differences.is_empty() {
                Verification::Identical
            } else {
                Verification::Diverged {
                    differences,
                    first_different_event: first.trace.first_difference(&replayed.trace),
                    replayed: Box::new(replayed),
                }
            }
        } else if replayed.failure == first.failure {
            Verification::Reproduced
        } else {
            Verification::NotReproduced {
                replayed_failure: replayed.failure,
            }
        }
    }

    /// Whether the rerun kept the replay line's promise.
    pub fn holds(&self) -> bool {
        matches!(self, Verification::Identical | Verification::Reproduced)
    }

    /// Whether the rerun exposed uncontrolled nondeterminism.
    pub fn diverged(&self) -> bool {
        matches!(self, Verification::Diverged { .. })
    }

    /// One line for the report.
    pub fn describe(&self, first: &SeedOutcome) -> String {
        match self {
            Verification::Identical => {
                let schedule = first.schedule.map_or(String::new(), |schedule| {
                    format!(" and the same {} thread switches", schedule.decisions)
                });
                format!(
                    "replay verified: rerun once, the same violation, the same {} trace events (digest {}){schedule}",
                    first.trace.events.len(),
                    first.trace.digest
                )
            }
            Verification::Diverged {
                differences,
                first_different_event,
                ..
            } => format!(
                "NONDETERMINISM: the rerun of seed {} diverged in {}{}: something outside the seed \
                 reached the run (a bug of the harness or the node; both traces are saved)",
                first.seed,
                differences.join("; "),
                first_different_event
                    .map(|event| format!(" (first different trace event: #{event})"))
                    .unwrap_or_default()
            ),
            Verification::Reproduced => {
                "replay reproduced the violation in 1 of 1 reruns (OS threads: a rerun may not; \
                 `replay --attempts N` counts how often it does)"
                    .to_string()
            }
            Verification::NotReproduced { replayed_failure } => format!(
                "replay NOT reproduced in 1 rerun (OS threads are not reproducible; the rerun {}): \
                 use the deterministic engine to replay exactly",
                match replayed_failure {
                    Some(failure) => format!("failed differently: {failure}"),
                    None => "passed".to_string(),
                }
            ),
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use threadsim::Level;

    fn outcome(failure: Option<&str>, events: &[&str]) -> SeedOutcome {
        let trace = threadsim::Trace::with_limit(100);
        for event in events {
            trace.record(threadsim::Instant::ZERO, Level::Info, event.to_string());
        }
        SeedOutcome {
            seed: 7,
            failure: failure.map(str::to_string),
            figures: None,
            trace: trace.take(),
            schedule: None,
            schedule_events: sim::schedule::Schedule::default(),
            kv: None,
            transactions: None,
            coverage: Default::default(),
            faults_fired: Default::default(),
        }
    }

    #[test]
    fn an_identical_rerun_verifies_and_a_different_one_diverges() {
        let first = outcome(Some("boom"), &["a", "b"]);
        let same = Verification::compare(&first, outcome(Some("boom"), &["a", "b"]), true);
        assert!(same.holds() && !same.diverged());
        assert!(same.describe(&first).starts_with("replay verified"));
        let other = Verification::compare(&first, outcome(Some("boom"), &["a", "c"]), true);
        assert!(other.diverged() && !other.holds());
        let text = other.describe(&first);
        assert!(
            text.starts_with("NONDETERMINISM") && text.contains("#1"),
            "{text}"
        );
    }

    #[test]
    fn on_os_threads_only_the_violation_must_come_back() {
        let first = outcome(Some("boom"), &["a"]);
        let again = Verification::compare(&first, outcome(Some("boom"), &["x", "y"]), false);
        assert!(again.holds());
        let passed = Verification::compare(&first, outcome(None, &["a"]), false);
        assert!(!passed.holds() && !passed.diverged());
        assert!(passed.describe(&first).contains("NOT reproduced"));
    }
}
