//! Shrinking, measured: for every catalogued variant the chaos column kills, its first failing
//! seeds (10 by default) on the deterministic engine, each shrunk with a 60 s budget. Per
//! variant: events before and after (median and max), how many shrank to 10 events or fewer
//! within the budget, shrinking wall time, whether the shrunk schedule's replay fails the same
//! way (it must, every time), and whether it passes on the correct build (the bug, not the
//! schedule, causes the failure).
//!
//! `cargo bench -p interleave --bench shrinking`; `-- --one-stream` runs the same with one
//! scheduler stream for the whole run instead of one per simulated instant (what the
//! per-instant streams are worth); `-- --seeds N`, `-- --only NAME`. With `--test` (as
//! `.ci/run` runs it) one seed of `vote-without-up-to-date-check`. One shrink at a time: on 2
//! cores the other core stays free for the key-value checker's threads.

use interleave::engines::{run_seed, run_seed_following, Watchdog};
use interleave::shrink::shrink_failure;
use runspec::{RunSpec, SchedulerKind};
use sim::mutants::{catalogue, Detector};
use std::time::Duration;

/// What one failing seed's shrink came to.
struct Shrink {
    before: usize,
    after: usize,
    wall: Duration,
    verified: bool,
    passes_correct: bool,
    minimal: bool,
}

fn median<T: Copy + Ord>(values: &[T]) -> T {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted[sorted.len() / 2]
}

fn main() {
    // Failing runs are the material here: their panics would bury the table.
    std::panic::set_hook(Box::new(|_| {}));
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().any(|arg| arg == name);
    let value = |name: &str| {
        args.iter()
            .position(|arg| arg == name)
            .and_then(|at| args.get(at + 1))
            .cloned()
    };
    let test_mode = flag("--test");
    let per_variant: usize = match value("--seeds") {
        Some(text) => text.parse().expect("--seeds takes a number"),
        None if test_mode => 1,
        None => 10,
    };
    let only = value("--only").or(test_mode.then(|| "vote-without-up-to-date-check".into()));
    let budget = Duration::from_secs(60);
    let scheduler = if flag("--one-stream") {
        SchedulerKind::RandomOneStream
    } else {
        SchedulerKind::Random
    };
    let watchdog = Watchdog::default();
    println!(
        "{}, budget {} s per seed",
        scheduler.describe(3),
        budget.as_secs()
    );
    println!(
        "| variant | workload | failing seeds (searched) | events before: median / max | after: median / max | ≤ 10 events in budget | 1-minimal | wall: median / max | replays fail alike | pass on the correct build |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut all = Vec::new();
    for variant in catalogue() {
        let name = variant.broken.name();
        if only.as_deref().is_some_and(|only| only != name) {
            continue;
        }
        for detector in &variant.detectors {
            let Detector::Chaos {
                workload,
                seeds,
                kills: true,
            } = *detector
            else {
                continue;
            };
            let on = |broken| RunSpec {
                scheduler,
                ..workload.spec(broken)
            };
            let (broken, correct) = (on(Some(variant.broken)), on(None));
            let limit = seeds * 20;
            let mut shrinks = Vec::new();
            let mut searched = 0;
            for seed in 1..=limit {
                if shrinks.len() == per_variant {
                    break;
                }
                searched = seed;
                let outcome = run_seed(&broken.with_seed(seed), watchdog);
                let Some(failure) = outcome.failure else {
                    continue;
                };
                let report = shrink_failure(
                    &broken.with_seed(seed),
                    watchdog,
                    &outcome.schedule_events,
                    &failure,
                    budget,
                );
                let shrunk = &report.shrunk.schedule;
                // With the shrunk schedule's own seed: a reroll may have changed it.
                let on_correct =
                    run_seed_following(&correct.with_seed(report.seed), watchdog, Some(shrunk));
                let shrink = Shrink {
                    before: report.events_before,
                    after: shrunk.removable(),
                    wall: report.wall,
                    verified: report.verified,
                    passes_correct: on_correct.failure.is_none(),
                    minimal: report.shrunk.minimal,
                };
                eprintln!(
                    "{name} seed {seed} ({}): {} -> {} events in {:.1} s{}{}{}",
                    report.kind,
                    shrink.before,
                    shrink.after,
                    shrink.wall.as_secs_f64(),
                    if shrink.minimal { ", 1-minimal" } else { "" },
                    if shrink.verified {
                        ""
                    } else {
                        ", NOT VERIFIED"
                    },
                    if shrink.passes_correct {
                        ""
                    } else {
                        ", FAILS ON THE CORRECT BUILD"
                    },
                );
                shrinks.push(shrink);
            }
            let workload = workload.describe();
            if shrinks.is_empty() {
                println!("| `{name}` | {workload} | 0 ({searched}) | | | | | | | |");
                continue;
            }
            let count = |keep: fn(&Shrink) -> bool| shrinks.iter().filter(|s| keep(s)).count();
            let before: Vec<usize> = shrinks.iter().map(|s| s.before).collect();
            let after: Vec<usize> = shrinks.iter().map(|s| s.after).collect();
            let wall: Vec<Duration> = shrinks.iter().map(|s| s.wall).collect();
            println!(
                "| `{name}` | {workload} | {} ({searched}) | {} / {} | {} / {} | {} | {} | {:.1} s / {:.1} s | {} | {} |",
                shrinks.len(),
                median(&before),
                before.iter().max().expect("not empty"),
                median(&after),
                after.iter().max().expect("not empty"),
                count(|s| s.after <= 10 && s.wall <= Duration::from_secs(61)),
                count(|s| s.minimal),
                median(&wall).as_secs_f64(),
                wall.iter().max().expect("not empty").as_secs_f64(),
                count(|s| s.verified),
                count(|s| s.passes_correct),
            );
            all.extend(shrinks);
        }
    }
    let small = all
        .iter()
        .filter(|s| s.after <= 10 && s.wall <= Duration::from_secs(61))
        .count();
    println!(
        "\n{small} of {} failing seeds shrank to 10 events or fewer within the budget ({:.0}%); {} replays failed alike; {} passed on the correct build",
        all.len(),
        100.0 * small as f64 / all.len().max(1) as f64,
        all.iter().filter(|s| s.verified).count(),
        all.iter().filter(|s| s.passes_correct).count(),
    );
    assert!(
        all.iter().all(|s| s.verified),
        "a shrunk schedule did not fail alike on replay"
    );
}
