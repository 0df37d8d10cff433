//! Seeds to first kill, for every catalogued variant the chaos column applies to, on each
//! engine: OS threads, the deterministic random scheduler, and deterministic PCT (depth 3).
//! Each cell tries the catalogue's seed budget (100 raft seeds, 20 key-value seeds) in order and
//! stops at the first failing seed. OS-thread runs get a 5 s watchdog (a stalled run is a
//! kill), and their first kill moves from run to run.
//!
//! `cargo bench -p interleave --bench kill_parity`; with `--test` (as `.ci/run` runs it) only
//! `vote-without-up-to-date-check` on 3 seeds.

use interleave::engines::{run_seed, Watchdog};
use runspec::{RunSpec, SchedulerKind};
use sim::mutants::{catalogue, first_line, sweep_seeds, Cell, Detector, Sweep};
use std::time::Duration;

fn main() {
    // Failing runs are counted, not shown: their panics would bury the table.
    std::panic::set_hook(Box::new(|_| {}));
    let test_mode = std::env::args().any(|arg| arg == "--test");
    let schedulers = [SchedulerKind::Os, SchedulerKind::Random, SchedulerKind::Pct];
    println!(
        "| variant | workload | budget | OS threads | deterministic, random | deterministic, PCT |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for variant in catalogue() {
        if test_mode && variant.broken.name() != "vote-without-up-to-date-check" {
            continue;
        }
        for detector in &variant.detectors {
            let Detector::Chaos {
                workload, seeds, ..
            } = *detector
            else {
                continue;
            };
            let seeds = if test_mode { 3 } else { seeds };
            let args = workload.spec(Some(variant.broken));
            let mut cells = Vec::new();
            for scheduler in schedulers {
                let spec = RunSpec {
                    scheduler,
                    ..args.clone()
                };
                #[allow(clippy::disallowed_methods)] // the wall time a cell reports
                let started = std::time::Instant::now();
                let cell = sweep_seeds(seeds, Sweep::FirstKill, started, |seed| {
                    run_seed(&spec.with_seed(seed), Watchdog(Duration::from_secs(5)))
                        .failure
                        .map(|f| first_line(&f))
                });
                cells.push(match cell {
                    Cell::Killed { after, wall, .. } => {
                        format!("seed {after} ({:.1} s)", wall.as_secs_f64())
                    }
                    Cell::Survived { wall, .. } => {
                        format!("not in {seeds} ({:.1} s)", wall.as_secs_f64())
                    }
                    Cell::Error(error) => format!("error: {error}"),
                });
            }
            let workload = workload.describe();
            println!(
                "| `{}` | {workload} | {seeds} | {} | {} | {} |",
                variant.broken.name(),
                cells[0],
                cells[1],
                cells[2]
            );
        }
    }
}
