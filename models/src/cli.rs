//! The command line of the checker, shared by `lincheck` and `interleave check`.
//!
//! Exit status: 0 every file linearizable; 1 some file not linearizable; 3 some file unknown
//! (budget exhausted) and none illegal; 2 bad input or usage; 141 the output was closed.

use crate::formats::{jepsen, json, kvlog, Format, ParseError};
use crate::{
    check, check_partitions, html, into_partitions_by_key, Budget, CheckOptions, KeyValue, KvStore,
    PartitionVerdict, Register, Report, Verdict,
};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli_files::read_history;
pub use crate::cli_files::{CLOSED_PIPE, JSON_VERSION};

/// The model to check against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelArg {
    /// A register with read, write and compare-and-set (formats: jepsen, json).
    Register,
    /// A key-value store with get, put and append, checked per key (formats: kv, json).
    Kv,
    /// Transactions that read and append to lists, checked for strict serializability
    /// (Elle-style; format: json, one transaction per line).
    ListAppend,
}

/// The format of the history files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Jepsen etcd logs (`INFO jepsen.util - 2 :invoke :cas [3 0]`).
    Jepsen,
    /// The 6.824 kv logs (one EDN map per line).
    Kv,
    /// The native JSON-lines format (see the README).
    Json,
}

impl From<FormatArg> for Format {
    fn from(format: FormatArg) -> Format {
        match format {
            FormatArg::Jepsen => Format::Jepsen,
            FormatArg::Kv => Format::Kv,
            FormatArg::Json => Format::Json,
        }
    }
}

/// The options of a linearizability check: model, format, files, budget and outputs.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The sequential specification to check against.
    #[arg(long, value_enum)]
    pub model: ModelArg,
    /// The format of the history files.
    #[arg(long, value_enum)]
    pub format: FormatArg,
    /// History files to check.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// For the kv model: check the whole store as one partition instead of key by key (much
    /// slower; for measuring the checker).
    #[arg(long)]
    pub one_partition: bool,
    /// For the kv model: check only this key.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Memory budget: the most (set, state) pairs the search may hold at once, for the whole
    /// check (beyond 50,000 states per thread, partitions are searched one at a time).
    #[arg(long, default_value_t = 5_000_000, value_name = "N")]
    pub max_states: usize,
    /// Memory budget for the search, bytes with an optional K, M or G (binary units): the whole
    /// check's memo, model states and transitions stay within it (its states can be far larger
    /// than its memo: a key's value after many appends). The verdict is "unknown" past it.
    #[arg(long, default_value = "2G", value_name = "SIZE", value_parser = parse_memory)]
    pub max_memory: usize,
    /// Time budget per file, in seconds (the verdict is "unknown" when it runs out).
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS", value_parser = parse_time_limit)]
    pub time_limit: f64,
    /// No time budget: search until the verdict or the memory budget.
    #[arg(long, conflicts_with = "time_limit")]
    pub no_time_limit: bool,
    /// The largest history file read, in bytes (a larger one is refused before it fills memory).
    #[arg(long, default_value_t = 1 << 30, value_name = "BYTES", value_parser = parse_input_limit)]
    pub max_input_bytes: u64,
    /// Threads for checking partitions in parallel (default: the number of cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write an HTML page for each non-linearizable file into this directory.
    #[arg(long, value_name = "DIR")]
    pub html: Option<PathBuf>,
    /// Print one JSON object per file instead of text.
    #[arg(long)]
    pub json: bool,
}

struct FileResult {
    file: String,
    operations: usize,
    report: Report,
    elapsed: Duration,
    html: Option<PathBuf>,
}

/// Checks every file `args` names, prints a verdict per file, and returns the exit status; an
/// error is printed under the name of the `tool` the user ran (`lincheck`, `interleave`).
pub fn run(args: &CheckArgs, tool: &str) -> u8 {
    match run_files(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("{tool}: {message}");
            2
        }
    }
}

fn run_files(cli: &CheckArgs) -> Result<u8, String> {
    match (cli.model, cli.format) {
        (ModelArg::Register, FormatArg::Jepsen | FormatArg::Json)
        | (ModelArg::Kv, FormatArg::Kv | FormatArg::Json)
        | (ModelArg::ListAppend, FormatArg::Json) => {}
        (model, format) => {
            let model = model
                .to_possible_value()
                .map_or_else(String::new, |value| value.get_name().to_string());
            return Err(format!(
                "the {model} model does not read the {} format (register: jepsen, json; kv: kv, json; list-append: json)",
                Format::from(format)
            ));
        }
    }
    if cli.model == ModelArg::ListAppend {
        if cli.html.is_some() || cli.one_partition {
            return Err("--html and --one-partition apply to the register and kv models".into());
        }
        if cli.key.is_some() {
            return Err("--key applies to the kv model only".to_string());
        }
        return crate::cli_txn::run(&cli.files, cli.max_input_bytes, cli.json);
    }
    if cli.key.is_some() && cli.model != ModelArg::Kv {
        return Err("--key applies to the kv model only".to_string());
    }
    if let Some(dir) = &cli.html {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut results = Vec::new();
    for (path, page) in cli.files.iter().zip(page_stems(&cli.files)) {
        let name = path.display().to_string();
        let text = read_history(path, &name, cli.max_input_bytes)?;
        let result = check_file(cli, &name, &page, &text).map_err(|e: ParseError| e.to_string())?;
        let printed = print_result(cli, &result, &mut std::io::stdout().lock());
        match printed {
            // The reader went away (`lincheck ... | head`): stop as quietly as a Unix tool.
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => return Ok(CLOSED_PIPE),
            Err(error) => return Err(format!("cannot write the results: {error}")),
            Ok(()) => {}
        }
        results.push(result);
    }
    let verdicts: Vec<Verdict> = results.iter().map(|r| r.report.verdict).collect();
    Ok(if verdicts.contains(&Verdict::NotLinearizable) {
        1
    } else if verdicts.contains(&Verdict::Unknown) {
        3
    } else {
        0
    })
}

/// The longest `--time-limit`, in seconds: 115 days, far beyond any useful search.
const MAX_TIME_LIMIT: f64 = 1e7;

fn parse_time_limit(text: &str) -> Result<f64, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if seconds > 0.0 && seconds <= MAX_TIME_LIMIT {
        Ok(seconds)
    } else {
        Err(format!(
            "{text} s is outside (0, {MAX_TIME_LIMIT}] (--no-time-limit searches without one)"
        ))
    }
}

/// The largest `--max-input-bytes`: 64 GiB.
const MAX_INPUT_LIMIT: u64 = 1 << 36;

fn parse_input_limit(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(bytes) if (1..=MAX_INPUT_LIMIT).contains(&bytes) => Ok(bytes),
        _ => Err(format!(
            "{text:?} is not a number of bytes in 1..={MAX_INPUT_LIMIT}"
        )),
    }
}

/// The largest `--max-memory`: 1 TiB.
const MAX_MEMORY: u64 = 1 << 40;

/// A size in bytes: digits and an optional binary unit, `K`, `M` or `G` (`512M`, `2G`), between
/// 1 MiB and [`MAX_MEMORY`].
fn parse_memory(text: &str) -> Result<usize, String> {
    let error = || format!("{text:?} is not a size between 1M and 1024G (bytes, or K, M or G)");
    let (digits, shift) = match text.trim().as_bytes().last().map(u8::to_ascii_uppercase) {
        Some(b'K') => (&text.trim()[..text.trim().len() - 1], 10),
        Some(b'M') => (&text.trim()[..text.trim().len() - 1], 20),
        Some(b'G') => (&text.trim()[..text.trim().len() - 1], 30),
        _ => (text.trim(), 0),
    };
    let number: u64 = digits.parse().map_err(|_| error())?;
    let bytes = number
        .checked_shl(shift)
        .filter(|bytes| bytes >> shift == number);
    match bytes {
        Some(bytes) if ((1 << 20)..=MAX_MEMORY).contains(&bytes) => {
            usize::try_from(bytes).map_err(|_| error())
        }
        _ => Err(error()),
    }
}

/// The name (without `.html`) of each file's counterexample page: the file's stem, with `-1`,
/// `-2`, ... in the order given when several files share it (`a/h.json` and `b/h.json`), so no
/// page overwrites another.
fn page_stems(files: &[PathBuf]) -> Vec<String> {
    let stem = |path: &PathBuf| {
        path.file_stem().map_or_else(
            || "history".to_string(),
            |s| s.to_string_lossy().into_owned(),
        )
    };
    let stems: Vec<String> = files.iter().map(stem).collect();
    let mut seen: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    stems
        .iter()
        .map(|stem| {
            if stems.iter().filter(|other| *other == stem).count() == 1 {
                return stem.clone();
            }
            let count = seen.entry(stem).or_default();
            *count += 1;
            format!("{stem}-{count}")
        })
        .collect()
}

fn check_file(
    cli: &CheckArgs,
    name: &str,
    page: &str,
    text: &str,
) -> Result<FileResult, ParseError> {
    let options = CheckOptions {
        budget: Budget::new(
            cli.max_states,
            (!cli.no_time_limit).then(|| Duration::from_secs_f64(cli.time_limit)),
        )
        .with_max_bytes(cli.max_memory),
        threads: cli
            .threads
            .unwrap_or_else(|| CheckOptions::default().threads)
            .max(1),
    };
    #[allow(clippy::disallowed_methods)] // reports how long the check took
    let started = std::time::Instant::now();
    let (operations, report) = match cli.model {
        ModelArg::Register => {
            let history = match cli.format {
                FormatArg::Jepsen => jepsen::parse(name, text)?,
                _ => json::parse_register(name, text)?,
            };
            let report = check(&Register, &history, &options);
            (history.len(), report)
        }
        ModelArg::ListAppend => {
            return Err(ParseError::at(
                name,
                0,
                "list-append histories have a check of their own",
            ))
        }
        ModelArg::Kv => {
            let history = match cli.format {
                FormatArg::Kv => kvlog::parse(name, text)?,
                _ => json::parse_kv(name, text)?,
            };
            let history: Vec<_> = match &cli.key {
                Some(key) => history
                    .into_iter()
                    .filter(|op| op.input.key() == key)
                    .collect(),
                None => history,
            };
            if history.is_empty() {
                return Err(ParseError::at(
                    name,
                    0,
                    format!(
                        "no operations on key {:?}",
                        cli.key.as_deref().unwrap_or("")
                    ),
                ));
            }
            let operations = history.len();
            let report = if cli.one_partition {
                check(&KvStore, &history, &options)
            } else {
                check_partitions(&KeyValue, into_partitions_by_key(history), &options)
            };
            (operations, report)
        }
    };
    let elapsed = started.elapsed();
    let html = match (&cli.html, report.counterexample()) {
        (Some(dir), Some((partition, counterexample))) => {
            let page_stem = page;
            let page = html::render(name, &partition.name, counterexample);
            Some(
                write_atomically(dir, page_stem, &page)
                    .map_err(|message| ParseError::at(name, 0, message))?,
            )
        }
        _ => None,
    };
    Ok(FileResult {
        file: name.to_string(),
        operations,
        report,
        elapsed,
        html,
    })
}

/// Writes `page` as `<dir>/<stem>.html`, whole or not at all, and never over anything but a
/// regular file.
fn write_atomically(dir: &Path, stem: &str, page: &str) -> Result<PathBuf, String> {
    let target = dir.join(format!("{stem}.html"));
    userfiles::write_whole(&target, page).map_err(|error| error.to_string())?;
    Ok(target)
}

fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Linearizable => "linearizable",
        Verdict::NotLinearizable => "not_linearizable",
        Verdict::Unknown => "unknown",
    }
}

fn print_result(cli: &CheckArgs, result: &FileResult, out: &mut dyn Write) -> std::io::Result<()> {
    let report = &result.report;
    let millis = result.elapsed.as_secs_f64() * 1000.0;
    if cli.json {
        let failing = report
            .counterexample()
            .map(|(partition, _)| partition.name.clone());
        let unknown: Vec<&str> = report
            .partitions
            .iter()
            .filter(|p| matches!(p.verdict, PartitionVerdict::Unknown(_)))
            .map(|p| p.name.as_str())
            .collect();
        let object = serde_json::json!({
            "version": JSON_VERSION,
            "file": result.file,
            "verdict": verdict_name(report.verdict),
            "operations": result.operations,
            "check_ms": (millis * 1000.0).round() / 1000.0,
            "states_explored": report.partitions.iter().map(|p| p.states).sum::<u64>(),
            "failing_partition": failing,
            "unknown_partitions": unknown,
            "html": result.html.as_ref().map(|p| p.display().to_string()),
        });
        writeln!(out, "{object}")?;
        return Ok(());
    }
    let verdict = match report.verdict {
        Verdict::Linearizable => "linearizable",
        Verdict::NotLinearizable => "NOT LINEARIZABLE",
        Verdict::Unknown => "UNKNOWN (budget exhausted)",
    };
    writeln!(
        out,
        "{}: {verdict} ({} operations, {millis:.1} ms)",
        result.file, result.operations
    )?;
    for partition in &report.partitions {
        if let PartitionVerdict::Unknown(reason) = &partition.verdict {
            writeln!(out, "  partition {:?}: unknown: {reason}", partition.name)?;
        }
    }
    if let Some((partition, counterexample)) = report.counterexample() {
        match &counterexample.why {
            Some(why) => writeln!(
                out,
                "  partition {:?}: {why}; these {} of its {} operations cannot all be placed:",
                partition.name,
                counterexample.unplaced.len(),
                counterexample.operations.len()
            )?,
            None => writeln!(
                out,
                "  partition {:?}: the longest linearizable prefix has {} of {} operations; none of these could go next:",
                partition.name,
                counterexample.longest_prefix.len(),
                counterexample.operations.len()
            )?,
        }
        for &index in &counterexample.unplaced {
            let op = &counterexample.operations[index];
            let ret = op.ret.map_or("never".to_string(), |r| r.to_string());
            writeln!(
                out,
                "    client {}: {} (called {}, returned {ret})",
                op.client, op.description, op.call
            )?;
        }
    }
    if let Some(path) = &result.html {
        writeln!(out, "  visualization: {}", path.display())?;
    }
    Ok(())
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use std::path::PathBuf;

    #[test]
    fn files_that_share_a_name_get_pages_of_their_own() {
        let files: Vec<PathBuf> = ["a/h.json", "b/h.json", "c/other.jsonl", "h.edn"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(super::page_stems(&files), ["h-1", "h-2", "other", "h-3"]);
    }

    #[test]
    fn a_memory_size_is_bytes_or_binary_units_within_bounds() {
        use super::parse_memory;
        assert_eq!(parse_memory("2G"), Ok(2 << 30));
        assert_eq!(parse_memory("512m"), Ok(512 << 20));
        assert_eq!(parse_memory("4096K"), Ok(4 << 20));
        assert_eq!(parse_memory("1048576"), Ok(1 << 20));
        for bad in [
            "",
            "G",
            "1K",
            "2T",
            "-1G",
            "1.5G",
            "1025G",
            "99999999999999999999G",
        ] {
            assert!(parse_memory(bad).is_err(), "{bad:?} accepted");
        }
    }
}
