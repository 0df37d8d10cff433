//! Times the checker on every history of `testdata/histories/` (median of several runs, parsing
//! excluded, one thread) and prints it beside Porcupine's time from `expected.tsv`.
//!
//! `cargo run --release -p benches --example versus_porcupine [NAME-FILTER]`

use models::formats::{jepsen, kvlog};
use models::{
    check, check_partitions, partition_by_key, CheckOptions, KeyValue, KvStore, Register,
};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn parse_duration(text: &str) -> Duration {
    let (number, scale) = if let Some(n) = text.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else {
        panic!("unknown duration {text}")
    };
    Duration::from_secs_f64(number.parse::<f64>().expect("number") * scale)
}

/// The median of 15 timed runs after one untimed warm-up run (Porcupine's figures are medians
/// too).
fn median(mut run: impl FnMut()) -> Duration {
    run();
    let mut times: Vec<Duration> = (0..15)
        .map(|_| {
            #[allow(clippy::disallowed_methods)]
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/histories");
    let expected = std::fs::read_to_string(dir.join("expected.tsv"))
        .unwrap_or_else(|error| panic!("{}: {error}", dir.join("expected.tsv").display()));
    let options = CheckOptions {
        threads: 1,
        ..CheckOptions::default()
    };
    let (mut ours_total, mut theirs_total, mut slower) =
        (Duration::ZERO, Duration::ZERO, Vec::new());
    println!(
        "{:<26} {:>12} {:>12} {:>8}",
        "history", "ours", "porcupine", "ratio"
    );
    let only = std::env::args().nth(1);
    for line in expected.lines().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        if only
            .as_deref()
            .is_some_and(|only| !fields[0].contains(only))
        {
            continue;
        }
        // Porcupine's time: its own test models, as `go test -bench` measures them (column 7).
        let (name, theirs) = (fields[0], parse_duration(fields[6]));
        let ours = if let Some(etcd) = name.strip_prefix("etcd_") {
            let path = dir.join("jepsen").join(format!("etcd_{etcd}.log"));
            let history =
                jepsen::parse(name, &std::fs::read_to_string(path).expect("read")).expect("parse");
            let time = median(|| {
                check(&Register, &history, &options);
            });
            ours_total += time;
            theirs_total += theirs;
            time
        } else {
            let (file, mode) = name.split_once(' ').expect("name and mode");
            let path = dir.join("kv").join(format!("{file}.txt"));
            let history =
                kvlog::parse(file, &std::fs::read_to_string(path).expect("read")).expect("parse");
            if mode == "(per key)" {
                let partitions = partition_by_key(&history);
                median(|| {
                    check_partitions(&KeyValue, partitions.clone(), &options);
                })
            } else {
                median(|| {
                    check(&KvStore, &history, &options);
                })
            }
        };
        if ours > theirs {
            slower.push(name.to_string());
        }
        println!(
            "{name:<26} {:>10.3}ms {:>10.3}ms {:>7.2}x",
            ours.as_secs_f64() * 1e3,
            theirs.as_secs_f64() * 1e3,
            theirs.as_secs_f64() / ours.as_secs_f64()
        );
    }
    println!(
        "etcd total: ours {:.1} ms, Porcupine {:.1} ms; histories where we are slower: {slower:?}",
        ours_total.as_secs_f64() * 1e3,
        theirs_total.as_secs_f64() * 1e3
    );
}
