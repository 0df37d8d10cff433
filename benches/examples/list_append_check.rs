//! Times the list-append checker (`models::check_list_append`) on generated histories and
//! prints transactions per second: `TXNS` transactions of 1-4 operations on 10 keys in use at
//! once (a key retires after 32 appends, as Elle's generator rotates them), 10 clients, each
//! transaction taking effect at one instant inside its call and return, so the history is
//! strictly serializable by construction; with `stale`, one read somewhere in the middle sees
//! only the first half of a list of 16 or more, missing appends that returned long before it
//! was called, which the checker must find.
//!
//! `cargo run --release -p benches --example list_append_check -- TXNS [stale]`

use models::{check_list_append, MicroOp, Txn, TxnOutcome};
use std::time::Instant;

#[path = "../../models/examples/shared/random.rs"]
mod random;

const KEYS_IN_USE: usize = 10;
const APPENDS_PER_KEY: usize = 32;
const CLIENTS: u64 = 10;

fn history(count: usize, stale: bool) -> Vec<Txn> {
    let mut draws = random::Random(7);
    // (key, its list) for the keys in use.
    let mut keys: Vec<(u64, Vec<u64>)> = (0..KEYS_IN_USE as u64)
        .map(|key| (key, Vec::new()))
        .collect();
    let mut next_key = KEYS_IN_USE as u64;
    let mut next_value = 1;
    let mut history = Vec::with_capacity(count);
    for at in 0..count {
        let mut ops = Vec::new();
        for _ in 0..1 + draws.below(4) {
            let slot = draws.below(KEYS_IN_USE as u64) as usize;
            let (key, list) = &mut keys[slot];
            if draws.below(2) == 0 {
                ops.push(MicroOp::Read {
                    key: *key,
                    list: Some(list.clone()),
                });
            } else {
                list.push(next_value);
                ops.push(MicroOp::Append {
                    key: *key,
                    value: next_value,
                });
                next_value += 1;
                if list.len() == APPENDS_PER_KEY {
                    // A last read, so every append is in a version order; then a fresh key.
                    ops.push(MicroOp::Read {
                        key: *key,
                        list: Some(list.clone()),
                    });
                    keys[slot] = (next_key, Vec::new());
                    next_key += 1;
                }
            }
        }
        // Effect at 10 * at; up to 10 clients' transactions overlap.
        let effect = 10 * at as u64 + 100;
        history.push(Txn {
            client: at as u64 % CLIENTS,
            call: effect - draws.below(10 * CLIENTS),
            ret: Some(effect + draws.below(10 * CLIENTS)),
            outcome: TxnOutcome::Committed,
            ops,
        });
    }
    if stale {
        let middle = history[count / 2..]
            .iter_mut()
            .flat_map(|txn| txn.ops.iter_mut())
            .find_map(|op| match op {
                MicroOp::Read {
                    list: Some(list), ..
                } if list.len() >= 16 => Some(list),
                _ => None,
            })
            .expect("a read of a long list");
        middle.truncate(middle.len() / 2);
    }
    history
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count: usize = match args.first().map(|text| text.parse()) {
        Some(Ok(count)) if count > 0 => count,
        _ => {
            eprintln!("usage: list_append_check TXNS [stale]   (TXNS a positive number)");
            std::process::exit(2);
        }
    };
    let stale = args.get(1).map(String::as_str) == Some("stale");
    let history = history(count, stale);
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..5 {
        #[allow(clippy::disallowed_methods)] // the figure this prints
        let started = Instant::now();
        let report = check_list_append(&history);
        times.push(started.elapsed());
        last = Some(report);
    }
    times.sort();
    let median = times[times.len() / 2];
    let report = last.expect("ran");
    let names: Vec<String> = report.anomalies.iter().map(|a| a.name()).collect();
    println!(
        "{count} transactions, {} edges: {:.1} ms (median of 5), {:.0} transactions/s; anomalies: {}",
        report.edges,
        median.as_secs_f64() * 1e3,
        count as f64 / median.as_secs_f64(),
        if names.is_empty() { "none".to_string() } else { names.join(", ") }
    );
}
