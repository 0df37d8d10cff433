//! `check --model list-append`: the transactional check of list-append histories
//! ([`crate::check_list_append`]) from the command line, one verdict per file.

use crate::cli_files::{read_history, CLOSED_PIPE, JSON_VERSION};
use crate::formats::txn_json::parse_txns;
use crate::list_append::describe::{describe, verdict};
use crate::list_append::{check_list_append, Txn, TxnReport};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Checks every one of `files` (each at most `max_input_bytes`) as a list-append history and
/// prints its verdict, as JSON if `json`; the exit status is 0 when every file is strictly
/// serializable, 1 otherwise.
pub(crate) fn run(files: &[PathBuf], max_input_bytes: u64, json: bool) -> Result<u8, String> {
    let mut all_strict = true;
    for path in files {
        let name = path.display().to_string();
        let text = read_history(path, &name, max_input_bytes)?;
        let history = parse_txns(&name, &text).map_err(|error| error.to_string())?;
        #[allow(clippy::disallowed_methods)] // reports how long the check took
        let started = std::time::Instant::now();
        let report = check_list_append(&history);
        let elapsed = started.elapsed();
        all_strict &= report.strictly_serializable();
        let printed = print(
            json,
            &name,
            &history,
            &report,
            elapsed,
            &mut std::io::stdout().lock(),
        );
        match printed {
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => return Ok(CLOSED_PIPE),
            Err(error) => return Err(format!("cannot write the results: {error}")),
            Ok(()) => {}
        }
    }
    Ok(if all_strict { 0 } else { 1 })
}

fn print(
    json: bool,
    file: &str,
    history: &[Txn],
    report: &TxnReport,
    elapsed: Duration,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let millis = elapsed.as_secs_f64() * 1000.0;
    if json {
        let anomalies: Vec<serde_json::Value> = (report.anomalies.iter())
            .map(|anomaly| {
                serde_json::json!({
                    "name": anomaly.name(),
                    "description": describe(history, anomaly),
                })
            })
            .collect();
        let object = serde_json::json!({
            "version": JSON_VERSION,
            "file": file,
            "model": "list-append",
            "verdict": verdict(report),
            "transactions": history.len(),
            "check_ms": (millis * 1000.0).round() / 1000.0,
            "anomalies": anomalies,
        });
        return writeln!(out, "{object}");
    }
    let shown = match verdict(report) {
        "strictly-serializable" => "strictly serializable",
        "serializable" => "NOT STRICTLY SERIALIZABLE (serializable)",
        _ => "NOT SERIALIZABLE",
    };
    writeln!(
        out,
        "{file}: {shown} ({} transactions, {} dependencies, {millis:.1} ms)",
        history.len(),
        report.edges
    )?;
    for anomaly in &report.anomalies {
        writeln!(out, "  {}: {}", anomaly.name(), describe(history, anomaly))?;
    }
    Ok(())
}
