//! A list-append verdict and its anomalies in words, for a person: the command line's output
//! and a simulation's failure.

use super::{Anomaly, Step, Txn, TxnId, TxnReport};

/// The verdict's name: the strongest level the history keeps.
pub fn verdict(report: &TxnReport) -> &'static str {
    if report.strictly_serializable() {
        "strictly-serializable"
    } else if report.serializable() {
        "serializable"
    } else {
        "not-serializable"
    }
}

/// A transaction as a reader finds it in the file: its line (transactions are one per line,
/// blank lines aside) and client.
fn name_of(history: &[Txn], txn: TxnId) -> String {
    format!(
        "transaction {} (client {})",
        txn.0 + 1,
        history[txn.0].client
    )
}

/// One anomaly in words.
pub fn describe(history: &[Txn], anomaly: &Anomaly) -> String {
    let name = |txn| name_of(history, txn);
    match anomaly {
        Anomaly::Cycle { steps, .. } => {
            let mut text = String::new();
            for Step { txn, edge } in steps {
                text.push_str(&format!("{} -{}-> ", name(*txn), edge.name()));
            }
            text + &name(steps[0].txn)
        }
        Anomaly::AbortedRead {
            reader,
            key,
            value,
            writer,
        } => format!(
            "{} read {value} in key {key}, appended by the failed {}",
            name(*reader),
            name(*writer)
        ),
        Anomaly::IntermediateRead {
            reader,
            key,
            value,
            writer,
        } => format!(
            "{} read key {key} ending in {value}, which {} followed with another append",
            name(*reader),
            name(*writer)
        ),
        Anomaly::IncompatibleOrder { key, first, second } => format!(
            "{} and {} read key {key} in orders neither of which extends the other",
            name(*first),
            name(*second)
        ),
        Anomaly::GarbageRead { reader, key, value } => {
            format!(
                "{} read {value} in key {key}, which nobody appended",
                name(*reader)
            )
        }
        Anomaly::DuplicateAppend {
            key,
            value,
            first,
            second,
        } => format!(
            "{} and {} both appended {value} to key {key}",
            name(*first),
            name(*second)
        ),
        Anomaly::DuplicateElements { reader, key, value } => {
            format!("{} read {value} twice in key {key}", name(*reader))
        }
        Anomaly::Internal { txn, key } => format!(
            "{} read key {key} without its own earlier appends at the end",
            name(*txn)
        ),
    }
}
