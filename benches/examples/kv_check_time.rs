//! Times the key-value checker on native JSON-lines history files (median of 15 runs after a
//! warm-up, one thread, parsing excluded, splitting by key included, as Porcupine's `Partition`
//! is in its time; the split moves the parsed operations, as Porcupine's copies references) and
//! prints one line per file: the file, the verdict, the milliseconds.
//! `scripts/porcupine` (with `-model kv`) prints Porcupine's line for the same files.
//!
//! `cargo run --release -p benches --example kv_check_time -- FILE...`

use models::formats::json;
use models::{check_partitions, into_partitions_by_key, CheckOptions, KeyValue};
use std::time::{Duration, Instant};

fn main() {
    let options = CheckOptions {
        threads: 1,
        ..CheckOptions::default()
    };
    for path in std::env::args().skip(1) {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("{path}: {error}");
                std::process::exit(2);
            }
        };
        let history = match json::parse_kv(&path, &text) {
            Ok(history) => history,
            Err(error) => {
                eprintln!("{error}");
                std::process::exit(2);
            }
        };
        let mut verdict = None;
        let mut times: Vec<Duration> = (0..16)
            .map(|_| {
                // The parsed history, as each of Porcupine's runs has it.
                let parsed = history.clone();
                #[allow(clippy::disallowed_methods)] // the figure this prints
                let started = Instant::now();
                let report = check_partitions(&KeyValue, into_partitions_by_key(parsed), &options);
                let elapsed = started.elapsed();
                verdict = Some(report.verdict);
                elapsed
            })
            .skip(1)
            .collect();
        times.sort();
        println!(
            "{path}\t{:?}\t{:.3} ms",
            verdict.expect("ran"),
            times[times.len() / 2].as_secs_f64() * 1e3
        );
    }
}
