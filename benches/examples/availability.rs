//! How long one fault on the leader stops a simulated cluster of five from committing, over many
//! seeds: the table of docs/availability.md.
//!
//! `cargo run --release -p benches --example availability -- [SEEDS]` runs each fault of
//! `sim::scenarios::availability` on seeds 1..=SEEDS (default 1,000) and prints, per fault, its
//! bound, the median, the 99th percentile and the worst window (simulated time), and how many
//! seeds passed the bound, with the seed of the worst.

use node::MutationSet;
use sim::scenarios::availability::{unavailable_after, LeaderFault};
use sim::simulate;
use std::time::Duration;

const USAGE: &str = "usage: availability [SEEDS] (default 1000; at most 1000000)";

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let seeds: u64 = match arguments.as_slice() {
        [] => 1_000,
        [flag] if flag == "--help" || flag == "-h" => {
            println!("{USAGE}");
            return;
        }
        [count] => match count.parse() {
            Ok(count @ 1..=1_000_000) => count,
            _ => fail(&format!(
                "{count:?} is not a number of seeds from 1 to 1000000"
            )),
        },
        _ => fail("too many arguments"),
    };
    println!("| fault on the leader | bound | median | 99th percentile | worst (seed) | past the bound |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for fault in LeaderFault::ALL {
        let mut windows: Vec<(Duration, u64)> = Vec::new();
        let mut bound = Duration::ZERO;
        let mut past = 0;
        for seed in 1..=seeds {
            let result = simulate(seed, move |sim| {
                unavailable_after(sim, fault, &MutationSet::default())
            });
            match result {
                Ok((outage, config)) => {
                    windows.push((outage.window, seed));
                    bound = fault.bound(&config);
                    past += usize::from(outage.check(fault, &config, "").is_err());
                }
                Err(failure) => fail(&format!("{fault}, seed {seed}: {}", failure.message)),
            }
        }
        windows.sort();
        let at = |share: f64| windows[((windows.len() - 1) as f64 * share) as usize].0;
        let (worst, worst_seed) = windows[windows.len() - 1];
        println!(
            "| {fault} | {bound:?} | {:?} | {:?} | {worst:?} ({worst_seed}) | {past} of {} |",
            at(0.5),
            at(0.99),
            windows.len()
        );
    }
}

fn fail(message: &str) -> ! {
    eprintln!("availability: {message}\n{USAGE}");
    std::process::exit(2)
}
