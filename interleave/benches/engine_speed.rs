//! Simulated seconds per wall second of the two engines on the same seeds, both workloads,
//! measured alternately in one run (a chunk of seeds on OS threads, the same chunk on the
//! deterministic engine, and so on), with one worker and with one worker per core.
//!
//! `cargo bench -p interleave --bench engine_speed` (100 seeds per workload); with `--test`
//! (as `.ci/run` runs it) 4 seeds.

mod support;

use runspec::{RunSpec, SchedulerKind, Workload};
use std::time::Duration;
use support::run_chunk;

fn main() {
    let test_mode = std::env::args().any(|arg| arg == "--test");
    let seeds: Vec<u64> = (1..=if test_mode { 4 } else { 100 }).collect();
    let chunk = if test_mode { 2 } else { 10 };
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    println!("engine speed: simulated seconds per wall second, seeds {}..={}, chunks of {chunk} alternating", seeds[0], seeds[seeds.len() - 1]);
    for workload in [Workload::Raft, Workload::Kv] {
        let kind = workload.name();
        for workers in [1, cores] {
            let mut totals = [(Duration::ZERO, Duration::ZERO); 2];
            for part in seeds.chunks(chunk) {
                for (slot, scheduler) in [SchedulerKind::Os, SchedulerKind::Random]
                    .into_iter()
                    .enumerate()
                {
                    let spec = RunSpec {
                        workload,
                        scheduler,
                        ..RunSpec::default()
                    };
                    let (simulated, wall) = run_chunk(|seed| spec.with_seed(seed), part, workers);
                    totals[slot].0 += simulated;
                    totals[slot].1 += wall;
                }
            }
            let rate = |(simulated, wall): (Duration, Duration)| {
                simulated.as_secs_f64() / wall.as_secs_f64()
            };
            let (os, det) = (rate(totals[0]), rate(totals[1]));
            println!(
                "{kind:>4}, {workers} worker(s): OS threads {os:>7.0}x ({:.1} s), deterministic {det:>7.0}x ({:.1} s): deterministic / OS = {:.2}",
                totals[0].1.as_secs_f64(),
                totals[1].1.as_secs_f64(),
                det / os
            );
        }
    }
}
