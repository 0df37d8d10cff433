//! What widening the exploration costs: simulated seconds per wall second of the raft workload
//! with one fixed mix (`--fixed`), the same mix with the node's fault points armed
//! (`--fault-points`), and the swarm (`chaos`'s default: each seed draws its cluster size and
//! fault mix, fault points half the time), on the same seeds, measured alternately in one run
//! (a chunk of seeds of each, then the next chunk), one worker per core.
//!
//! `cargo bench -p interleave --bench exploration_speed` (200 seeds); with `--test` (as
//! `.ci/run` runs it) 4 seeds.

mod support;

use runspec::{FaultMix, RunSpec};
use std::time::Duration;
use support::run_chunk;

/// One of the runs compared: its name, and each seed's run.
type Mode = (&'static str, fn(u64) -> RunSpec);

/// The runs compared.
fn modes() -> [Mode; 3] {
    [
        ("fixed mix", |seed| RunSpec::default().with_seed(seed)),
        ("fixed mix, fault points", |seed| RunSpec {
            faults: FaultMix {
                fault_points: true,
                ..FaultMix::DEFAULT
            },
            ..RunSpec::default().with_seed(seed)
        }),
        ("swarm (the default)", |seed| {
            RunSpec::default().with_seed(seed).swarmed()
        }),
    ]
}

fn main() {
    let test_mode = std::env::args().any(|arg| arg == "--test");
    let seeds: Vec<u64> = (1..=if test_mode { 4 } else { 200 }).collect();
    let chunk = if test_mode { 2 } else { 20 };
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    println!(
        "exploration speed: raft workload, simulated seconds per wall second, seeds {}..={}, \
         chunks of {chunk} alternating, {workers} workers",
        seeds[0],
        seeds[seeds.len() - 1]
    );
    let modes = modes();
    let mut totals = [(Duration::ZERO, Duration::ZERO); 3];
    for part in seeds.chunks(chunk) {
        for (total, (_, spec_of)) in totals.iter_mut().zip(&modes) {
            let (simulated, wall) = run_chunk(spec_of, part, workers);
            total.0 += simulated;
            total.1 += wall;
        }
    }
    let rate =
        |(simulated, wall): (Duration, Duration)| simulated.as_secs_f64() / wall.as_secs_f64();
    let fixed = rate(totals[0]);
    for ((name, _), total) in modes.iter().zip(totals) {
        println!(
            "{name:>24}: {:>6.0}x real time ({:>6.0} simulated s in {:>5.1} s), {:.2} of the fixed mix's",
            rate(total),
            total.0.as_secs_f64(),
            total.1.as_secs_f64(),
            rate(total) / fixed
        );
    }
}
