//! Running a detector on a variant (or on the correct build) and what it did: a [`Cell`] of the
//! kill matrix. In-process detectors run here; loom and shuttle need their own builds
//! (`--cfg loom` / `--cfg shuttle`), so their tests run through cargo and their output is read.

use super::catalogue::Broken;
use super::detector::Detector;
use crate::kv_workload::{check_kv_history, simulate_kv, KvWorkloadConfig};
use crate::runner::simulate;
use crate::settings::ClusterSettings;
use models::Verdict;
use node::kv::ReadMode;
use node::MutationSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// What one detector did with one variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Killed after this many seeds or schedules (`unit`), in `wall` time.
    Killed {
        /// Seeds or schedules up to the first detection (0 when the tool does not say).
        after: u64,
        /// "seed", "schedule" or "model" (the first failing one is `after`).
        unit: &'static str,
        /// Wall time.
        wall: Duration,
        /// The first line of the failure.
        how: String,
        /// With [`Sweep::EverySeed`]: how many of how many seeds killed it.
        seeds_killing: Option<(u64, u64)>,
    },
    /// Passed every seed or schedule: a gap.
    Survived {
        /// Wall time.
        wall: Duration,
        /// What was tried.
        tried: String,
    },
    /// The detector could not run (a build failed, ...).
    Error(String),
}

impl Cell {
    /// Whether the detector killed the variant.
    pub fn killed(&self) -> bool {
        matches!(self, Cell::Killed { .. })
    }

    /// A short text for the matrix.
    pub fn short(&self) -> String {
        match self {
            Cell::Killed {
                after,
                unit,
                wall,
                seeds_killing: Some((killing, tried)),
                ..
            } => format!(
                "{unit} {after}, {killing} of {tried} seeds ({:.1} s)",
                wall.as_secs_f64()
            ),
            Cell::Killed {
                after, unit, wall, ..
            } if *after > 0 => format!("{unit} {after} ({:.1} s)", wall.as_secs_f64()),
            Cell::Killed { wall, .. } => format!("killed ({:.1} s)", wall.as_secs_f64()),
            Cell::Survived { .. } => "SURVIVED".into(),
            Cell::Error(_) => "ERROR".into(),
        }
    }
}

/// The first line of `text`.
pub fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// How far a seeded detector goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// Stop at the first seed that kills the variant (the kill matrix).
    FirstKill,
    /// Run every seed and count those that kill it: how strong the detector is, not only
    /// whether it can fail (loom and shuttle cells are unaffected).
    EverySeed,
}

/// Runs `fails` on seeds 1..=`seeds`; `fails` returns the first line of a failure.
pub fn sweep_seeds(
    seeds: u64,
    sweep: Sweep,
    started: Instant,
    mut fails: impl FnMut(u64) -> Option<String>,
) -> Cell {
    let mut first: Option<(u64, String)> = None;
    let mut killing = 0;
    for seed in 1..=seeds {
        if let Some(how) = fails(seed) {
            killing += 1;
            first.get_or_insert((seed, how));
            if sweep == Sweep::FirstKill {
                break;
            }
        }
    }
    match first {
        Some((after, how)) => Cell::Killed {
            after,
            unit: "seed",
            wall: started.elapsed(),
            how,
            seeds_killing: (sweep == Sweep::EverySeed).then_some((killing, seeds)),
        },
        None => Cell::Survived {
            wall: started.elapsed(),
            tried: format!("{seeds} seeds"),
        },
    }
}

/// Runs one detector on `mutations` (`read_mode` for the KV workload overrides the detector's
/// when the variant is a read mode). For the correct build, pass no mutations: then the cell
/// says whether anything failed.
pub fn run_detector(
    detector: &Detector,
    broken: Option<Broken>,
    workspace: &Path,
    sweep: Sweep,
) -> Cell {
    #[allow(clippy::disallowed_methods)] // the wall time a cell reports, not simulated time
    let started = Instant::now();
    let mutations = match broken {
        Some(Broken::Node(mutation)) => MutationSet::only(mutation),
        _ => MutationSet::default(),
    };
    match *detector {
        Detector::Scenario { run, seeds, .. } => sweep_seeds(seeds, sweep, started, |seed| {
            let mutations = mutations.clone();
            simulate(seed, move |sim| run(sim, &mutations))
                .err()
                .map(|failure| first_line(&failure.message))
        }),
        Detector::Kv { read_mode, seeds } => {
            let read_mode = match broken {
                Some(Broken::UnsafeLocalReads) => ReadMode::UnsafeLocal,
                Some(_) => read_mode,
                None if read_mode == ReadMode::UnsafeLocal => ReadMode::ReadIndex,
                None => read_mode,
            };
            let config = KvWorkloadConfig {
                cluster: ClusterSettings {
                    mutations,
                    ..ClusterSettings::default()
                },
                read_mode,
                ..KvWorkloadConfig::default()
            };
            sweep_kv(&config, seeds, sweep, started)
        }
        Detector::LeaseHunt { seeds } => {
            let config = KvWorkloadConfig {
                cluster: ClusterSettings {
                    mutations,
                    ..KvWorkloadConfig::lease_hunt().cluster
                },
                ..KvWorkloadConfig::lease_hunt()
            };
            sweep_kv(&config, seeds, sweep, started)
        }
        Detector::SessionChurn { seeds } => {
            let config = KvWorkloadConfig {
                cluster: ClusterSettings {
                    mutations,
                    ..KvWorkloadConfig::session_churn().cluster
                },
                ..KvWorkloadConfig::session_churn()
            };
            sweep_kv(&config, seeds, sweep, started)
        }
        Detector::Transactions { seeds } => {
            let config = KvWorkloadConfig {
                cluster: ClusterSettings {
                    mutations,
                    ..KvWorkloadConfig::list_append().cluster
                },
                ..KvWorkloadConfig::list_append()
            };
            sweep_seeds(seeds, sweep, started, |seed| {
                match simulate_kv(seed, &config) {
                    Err(failure) => Some(first_line(&failure.message)),
                    Ok(run) => crate::txn_client::failure(&run.transactions),
                }
            })
        }
        Detector::Loom { binary, test } => {
            let selected = if broken.is_some() { Some(test) } else { None };
            run_cargo_test(workspace, "loom", "loom-tests", binary, selected, started)
        }
        Detector::Chaos { .. } => Cell::Error(
            "the chaos column needs the deterministic engine: run it with `interleave mutants`"
                .into(),
        ),
        Detector::Shuttle { test } => {
            let selected = if broken.is_some() { Some(test) } else { None };
            run_cargo_test(
                workspace,
                "shuttle",
                "shuttle-tests",
                "cluster",
                selected,
                started,
            )
        }
    }
}

/// The key-value workload `config` on seeds 1..=`seeds`: a failed simulation or a history
/// that is not linearizable kills.
fn sweep_kv(config: &KvWorkloadConfig, seeds: u64, sweep: Sweep, started: Instant) -> Cell {
    sweep_seeds(seeds, sweep, started, |seed| {
        match simulate_kv(seed, config) {
            Err(failure) => Some(first_line(&failure.message)),
            Ok(run) => match check_kv_history(&run.history).verdict {
                Verdict::Linearizable if run.found_online.is_none() => None,
                Verdict::Linearizable => Some(format!(
                    "the online checker found what the whole check does not: {}",
                    run.found_online
                        .map(|found| found.description)
                        .unwrap_or_default()
                )),
                other => Some(format!(
                    "{other:?} ({} operations, {} reads by deposed leaders)",
                    run.history.len(),
                    run.figures.reads_by_deposed_leaders
                )),
            },
        }
    })
}

/// Runs a loom or shuttle test binary (one test, or all of them for the correct build) in its
/// own build, and turns its outcome into a cell. A broken variant's test passes when the tool
/// rejected the variant.
fn run_cargo_test(
    workspace: &Path,
    cfg: &str,
    package: &str,
    binary: &str,
    test: Option<&str>,
    started: Instant,
) -> Cell {
    let mut command =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .current_dir(workspace)
        .env("RUSTFLAGS", format!("--cfg {cfg}"))
        .env("CARGO_TARGET_DIR", workspace.join("target").join(cfg))
        .args([
            "test",
            "--release",
            "-q",
            "-p",
            package,
            "--test",
            binary,
            "--",
        ]);
    if let Some(test) = test {
        command.args([test, "--exact"]);
    }
    command.arg("--nocapture");
    let output = match command.output() {
        Ok(output) => output,
        Err(error) => return Cell::Error(format!("cannot run cargo: {error}")),
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let wall = started.elapsed();
    if !output.status.success() {
        if text.contains("error[") || text.contains("could not compile") {
            return Cell::Error(first_line(
                text.lines()
                    .find(|l| l.starts_with("error"))
                    .unwrap_or("build failed"),
            ));
        }
        return Cell::Survived {
            wall,
            tried: format!("{package} {binary} {}", test.unwrap_or("(all)")),
        };
    }
    if test.is_some() && !text.contains("1 passed") {
        // A misspelt test name runs nothing and passes: that is not a kill.
        return Cell::Error(format!(
            "{package}::{binary}: no test named {}",
            test.unwrap_or_default()
        ));
    }
    let after = text
        .split("found on schedule ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok());
    match (test, after) {
        (Some(_), Some(after)) => Cell::Killed {
            after,
            unit: "schedule",
            wall,
            how: format!("{package}::{binary}"),
            seeds_killing: None,
        },
        (Some(test), None) => Cell::Killed {
            after: 0,
            unit: "model",
            wall,
            how: format!("{package}::{binary}::{test}"),
            seeds_killing: None,
        },
        // The correct build: every test of the binary passed.
        (None, _) => Cell::Survived {
            wall,
            tried: format!("{package}::{binary}, every test"),
        },
    }
}
