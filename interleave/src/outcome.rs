//! What one seed's run produced, whichever engine ran it: the verdict, the figures, the event
//! trace with its digest, the schedule of a controlled run, and the key-value history. The types
//! are those of the ordinary build (`threadsim::TraceLog`; the figures are `runspec::RunFigures` in both); the deterministic
//! engine's twins convert into them.

use models::{History, KvInput, KvOutput, Report};
use runspec::RunFigures;
use threadsim::{ScheduleSummary, TraceLog};

/// A key-value run's history and its check.
#[derive(Clone, Debug)]
pub struct KvEvidence {
    /// Every operation with its call and return time.
    pub history: History<KvInput, KvOutput>,
    /// The checker's verdict and counterexample.
    pub report: Report,
}

/// A list-append run's transactions and their check.
#[derive(Clone, Debug)]
pub struct TxnEvidence {
    /// Every transaction, in the order they ended.
    pub history: Vec<models::Txn>,
    /// The anomalies found.
    pub report: models::TxnReport,
}

/// One seed's run.
#[derive(Clone, Debug)]
pub struct SeedOutcome {
    /// The seed.
    pub seed: u64,
    /// `None` when nothing was found; else the violation.
    pub failure: Option<String>,
    /// The run's figures (a run stopped at an invariant violation has none).
    pub figures: Option<RunFigures>,
    /// Everything the run recorded.
    pub trace: TraceLog,
    /// The schedule of a controlled run.
    pub schedule: Option<ScheduleSummary>,
    /// The key-value history, when the workload has clients.
    pub kv: Option<KvEvidence>,
    /// The list-append transactions, when the workload runs them.
    pub transactions: Option<TxnEvidence>,
    /// The run's external events as they happened (without notes).
    pub schedule_events: sim::schedule::Schedule,
    /// The coverage points the run reached, and how often (`node::coverage`).
    pub coverage: threadsim::coverage::Counts,
    /// The node's fault points that fired, and how often (`node::fault_points`).
    pub faults_fired: threadsim::coverage::Counts,
}

impl SeedOutcome {
    /// What two runs of one seed must share to count as the same run: the violation (or none),
    /// the trace digest, the schedule digest, and the history's length.
    pub fn fingerprint(&self) -> RunFingerprint {
        RunFingerprint {
            failure: self.failure.clone(),
            trace_digest: self.trace.digest.value(),
            trace_events: self.trace.events.len(),
            schedule_digest: self.schedule.map(|schedule| schedule.digest),
            operations: (self.kv.as_ref().map(|kv| kv.history.len()))
                .or_else(|| self.transactions.as_ref().map(|txns| txns.history.len())),
        }
    }
}

/// What identifies a run for replay verification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFingerprint {
    /// The violation.
    pub failure: Option<String>,
    /// Digest of the trace.
    pub trace_digest: u64,
    /// Events in the trace.
    pub trace_events: usize,
    /// Digest of the schedule (controlled runs).
    pub schedule_digest: Option<u64>,
    /// Operations in the key-value history.
    pub operations: Option<usize>,
}

impl RunFingerprint {
    /// How `replayed` differs from this one, in words (empty if it does not).
    pub fn differences(&self, replayed: &RunFingerprint) -> Vec<String> {
        let mut differences = Vec::new();
        if self.failure != replayed.failure {
            differences.push(format!(
                "the violation: {:?} then {:?}",
                self.failure, replayed.failure
            ));
        }
        if self.trace_digest != replayed.trace_digest {
            differences.push(format!(
                "the trace: {} events (digest {:016x}) then {} (digest {:016x})",
                self.trace_events, self.trace_digest, replayed.trace_events, replayed.trace_digest
            ));
        }
        if self.schedule_digest != replayed.schedule_digest {
            differences.push("the schedule (thread switches)".to_string());
        }
        if self.operations != replayed.operations {
            differences.push(format!(
                "the client history: {:?} then {:?} operations",
                self.operations, replayed.operations
            ));
        }
        differences
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_names_every_difference() {
        let first = RunFingerprint {
            failure: Some("boom".into()),
            trace_digest: 1,
            trace_events: 10,
            schedule_digest: Some(5),
            operations: None,
        };
        assert!(first.differences(&first).is_empty());
        let other = RunFingerprint {
            failure: None,
            trace_digest: 2,
            trace_events: 11,
            schedule_digest: Some(6),
            operations: None,
        };
        let differences = first.differences(&other);
        assert_eq!(differences.len(), 3, "{differences:?}");
        assert!(differences[0].contains("violation"));
    }
}
