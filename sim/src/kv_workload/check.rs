//! Checking a key-value history for linearizability, key by key, and writing a failed one out
//! with the command that checks it again.

use models::{
    check_partitions, partition_by_key, Budget, CheckOptions, History, KeyValue, KvInput, KvOutput,
    Report,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The checker's time budget per history: a check that needs longer says "unknown" (and the
/// caller treats that as a failure to look at, never as a pass).
pub const CHECK_TIME_LIMIT: Duration = Duration::from_secs(120);

/// Checks a key-value history key by key.
pub fn check_kv_history(history: &History<KvInput, KvOutput>) -> Report {
    check_kv_history_within(history, CHECK_TIME_LIMIT)
}

/// [`check_kv_history`] with its own time budget per history (a test that only needs most
/// seeds rejected can give up sooner on a hard one: "unknown" then counts as not rejected).
pub fn check_kv_history_within(history: &History<KvInput, KvOutput>, limit: Duration) -> Report {
    let options = CheckOptions {
        budget: Budget::new(Budget::default().max_states, Some(limit)),
        ..CheckOptions::default()
    };
    check_partitions(&KeyValue, partition_by_key(history), &options)
}

/// Writes a failed run's history (native JSON-lines format) and, for the first illegal key, an
/// HTML page of the counterexample into `dir`; returns the history file.
pub fn write_failure(
    dir: &Path,
    name: &str,
    history: &History<KvInput, KvOutput>,
    report: &Report,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let file = dir.join(format!("{name}.jsonl"));
    userfiles::write_whole(&file, models::formats::json::write_kv(history))?;
    if let Some((partition, counterexample)) = report.counterexample() {
        let page = models::html::render(name, &partition.name, counterexample);
        userfiles::write_whole(&dir.join(format!("{name}.html")), page)?;
    }
    Ok(file)
}

/// The command that re-checks a history file written by [`write_failure`].
pub fn recheck_command(file: &Path) -> String {
    format!(
        "cargo run --release -p interleave -- check --model kv --format json {} --html {}",
        file.display(),
        file.parent()
            .map_or_else(|| ".".into(), |dir| dir.display().to_string())
    )
}
