//! Schedules per second under shuttle for the cluster scenarios (random and PCT schedulers):
//!
//! ```sh
//! RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/shuttle cargo bench -p shuttle-tests
//! ```
//!
//! A plain benchmark (no criterion: shuttle owns the threads of each schedule, and one
//! measurement is hundreds of whole schedules). `-- --test` (what `.ci/run` passes to benchmarks)
//! runs each scenario for a handful of schedules only. Without `--cfg shuttle` it does nothing.

#[cfg(shuttle)]
fn main() {
    use node::MutationSet;
    use shuttle_tests::scenarios::{coinciding_timers, elections_and_replication, kv_workload};
    use shuttle_tests::{explore, Schedules};
    use std::time::Instant;

    let quick = std::env::args().any(|arg| arg == "--test");
    let scenarios: Vec<(&str, usize, fn())> = vec![
        ("3 nodes: elections, crash, partition", 200, || {
            elections_and_replication(3, MutationSet::default())
        }),
        ("5 nodes: elections, crash, partition", 100, || {
            elections_and_replication(5, MutationSet::default())
        }),
        ("3 nodes: coinciding timers", 400, || {
            coinciding_timers(MutationSet::default())
        }),
        ("key-value workload, 3 servers, 8 clerks", 100, || {
            kv_workload(MutationSet::default(), 64)
        }),
    ];
    println!("| scenario | random: schedules/s | PCT (depth 3): schedules/s |");
    println!("| --- | --- | --- |");
    for (name, schedules, scenario) in scenarios {
        let schedules = if quick { 2 } else { schedules };
        let mut rates = Vec::new();
        for kind in [Schedules::Random, Schedules::Pct { depth: 3 }] {
            let started = Instant::now();
            let ran = explore("bench", kind, schedules, scenario)
                .unwrap_or_else(|found| panic!("{name} failed: {}", found.message));
            rates.push(ran as f64 / started.elapsed().as_secs_f64());
        }
        println!("| {name} | {:.0} | {:.0} |", rates[0], rates[1]);
    }
}

#[cfg(not(shuttle))]
fn main() {
    println!("build with RUSTFLAGS=\"--cfg shuttle\" to measure shuttle schedules");
}
