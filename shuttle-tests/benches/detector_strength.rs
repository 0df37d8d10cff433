//! How strong each shuttle detector is: the schedules it needs to find its bug, over many
//! scheduler seeds, under the random and the PCT scheduler.
//!
//! ```sh
//! RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/shuttle cargo bench -p shuttle-tests --bench detector_strength
//! ```
//!
//! A test runs its detector with one fixed seed, so it passes or fails the same way every time;
//! but a change to the node reshuffles which schedules come first, and a detector that found its
//! bug on schedule 24 of 100 by luck may then miss it. This measures the distribution behind
//! that one number: how many seeds of 30 found the bug within the test's budget, the median and
//! worst schedules to find it (exploring up to 10x the budget), and the chance that a seed misses
//! within the budget, estimated as `(1 - 1/mean)^budget` (each schedule an independent try; shown
//! only when every seed found it). The table goes to stdout; shuttle reports each failure it
//! finds on stderr. `-- --test` (what `.ci/run` passes) runs 2 seeds per detector and scheduler.

#[cfg(shuttle)]
fn main() {
    use shuttle_tests::detectors::DETECTORS;
    use shuttle_tests::{explore_from_seed, Schedules};
    use std::time::Instant;

    // Every found bug is a panic inside shuttle; hundreds of them would bury the table.
    std::panic::set_hook(Box::new(|_| {}));
    let quick = std::env::args().any(|arg| arg == "--test");
    let seeds: u64 = if quick { 2 } else { 30 };
    println!(
        "| broken variant | scheduler | budget | found within budget | median | worst | estimated miss chance | time |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for detector in &DETECTORS {
        for schedules in [Schedules::Random, Schedules::Pct { depth: 3 }] {
            let cap = detector.budget * 10;
            let started = Instant::now();
            // Schedules to the first failure per seed; `None` if the cap passed without one.
            let mut needed: Vec<Option<usize>> = (1..=seeds)
                .map(|seed| {
                    match explore_from_seed(
                        "detector_strength",
                        schedules,
                        seed,
                        cap,
                        detector.scenario,
                    ) {
                        Ok(_) => None,
                        Err(found) if found.message.contains(detector.expected) => {
                            Some(found.schedules)
                        }
                        Err(found) => {
                            // (The panic hook is silenced, so no panic here.)
                            eprintln!(
                                "{} with scheduler seed {seed} failed differently: {}",
                                detector.mutation, found.message
                            );
                            std::process::exit(1);
                        }
                    }
                })
                .collect();
            needed.sort_by_key(|n| n.unwrap_or(usize::MAX));
            let within = needed
                .iter()
                .filter(|n| n.is_some_and(|n| n <= detector.budget))
                .count();
            let show = |n: Option<usize>| match n {
                Some(n) => n.to_string(),
                None => format!("> {cap}"),
            };
            // Only when every seed found the bug: a seed cut off at the cap has no count.
            let all_found = needed.iter().all(Option::is_some);
            let mean = needed.iter().flatten().sum::<usize>() as f64 / needed.len() as f64;
            let miss = (1.0 - 1.0 / mean.max(1.0)).powi(detector.budget as i32);
            println!(
                "| `{}` | {} | {} | {within} of {seeds} | {} | {} | {} | {:.1} s |",
                detector.mutation,
                match schedules {
                    Schedules::Random => "random".to_string(),
                    Schedules::Pct { depth } => format!("PCT (depth {depth})"),
                },
                detector.budget,
                show(needed[needed.len() / 2]),
                show(needed[needed.len() - 1]),
                if !all_found {
                    "-".to_string()
                } else if miss < 1e-9 {
                    "< 1e-9".to_string()
                } else {
                    format!("{miss:.1e}")
                },
                started.elapsed().as_secs_f64()
            );
        }
    }
}

#[cfg(not(shuttle))]
fn main() {
    println!("build with RUSTFLAGS=\"--cfg shuttle\" to measure the shuttle detectors");
}
