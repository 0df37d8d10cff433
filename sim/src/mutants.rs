//! The catalogue of deliberately broken variants and the detectors that must kill them: the data
//! behind `interleave mutants` and its kill matrix.
//!
//! Each variant models a real bug (with a reference) and names every detector that applies:
//! continuous invariants in a targeted scenario or the chaos workload, linearizability of the
//! key-value workload, a loom model, a shuttle exploration. In-process detectors run here; loom
//! and shuttle need their own builds (`--cfg loom` / `--cfg shuttle`), so they run their test
//! through cargo.

use crate::kv_workload::{check_kv_history, simulate_kv, KvWorkloadConfig};
use crate::runner::{simulate, Sim};
use crate::scenarios;
use models::Verdict;
use node::kv::ReadMode;
use node::{Mutation, MutationSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// What is broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// A node or service mutation.
    Node(Mutation),
    /// The key-value service's unsafe local reads (a read mode, not a mutation).
    UnsafeLocalReads,
}

impl Broken {
    /// The variant's name.
    pub fn name(self) -> &'static str {
        match self {
            Broken::Node(mutation) => mutation.name(),
            Broken::UnsafeLocalReads => "unsafe-local-reads",
        }
    }
}

/// The kinds of detector, one column each in the kill matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Column {
    /// Continuous invariants (and liveness bounds) in a targeted scenario or chaos.
    Invariants,
    /// Linearizability of the key-value workload's history.
    Linearizability,
    /// A loom model.
    Loom,
    /// A shuttle exploration.
    Shuttle,
    /// The chaos workload on the deterministic engine (`interleave chaos` itself).
    Chaos,
}

impl Column {
    /// Every column, in order.
    pub const ALL: [Column; 5] = [
        Column::Invariants,
        Column::Linearizability,
        Column::Loom,
        Column::Shuttle,
        Column::Chaos,
    ];

    /// The column's heading.
    pub fn title(self) -> &'static str {
        match self {
            Column::Invariants => "invariants (sim)",
            Column::Linearizability => "linearizability (KV)",
            Column::Loom => "loom model",
            Column::Shuttle => "shuttle schedules",
            Column::Chaos => "chaos (deterministic)",
        }
    }
}

/// A scenario run in simulated time with a variant's mutations.
pub type ScenarioFn = fn(&Sim, &MutationSet);

/// One detector.
#[derive(Clone, Copy, Debug)]
pub enum Detector {
    /// A scenario (or chaos) on seeds 1..=`seeds`; any failure kills.
    Scenario {
        /// Its name in the matrix.
        name: &'static str,
        /// The scenario.
        run: ScenarioFn,
        /// Seeds to try.
        seeds: u64,
    },
    /// The key-value workload on seeds 1..=`seeds`; a non-linearizable history kills.
    Kv {
        /// How gets are served.
        read_mode: ReadMode,
        /// Seeds to try.
        seeds: u64,
    },
    /// A loom test that passes only if loom rejects the variant.
    Loom {
        /// The test binary (`loom-tests/tests/NAME.rs`).
        binary: &'static str,
        /// The test.
        test: &'static str,
    },
    /// A shuttle test that passes only if shuttle finds the variant.
    Shuttle {
        /// The test.
        test: &'static str,
    },
    /// `interleave chaos` on seeds 1..=`seeds` with the default engine; any failure kills. Run
    /// by the `interleave` binary, which has the deterministic engine.
    Chaos {
        /// Which workload.
        workload: ChaosWorkload,
        /// Seeds to try.
        seeds: u64,
    },
}

/// The workload a [`Detector::Chaos`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChaosWorkload {
    /// Commands offered to every node, continuous invariants.
    Raft,
    /// The key-value store with gets served this way, and its history checked.
    Kv(ReadMode),
}

/// Seeds the chaos column tries on the raft workload (a seed takes ~50 ms).
pub const CHAOS_RAFT_SEEDS: u64 = 100;
/// Seeds the chaos column tries on the key-value workload (a seed takes ~1 s).
pub const CHAOS_KV_SEEDS: u64 = 20;
const CHAOS_RAFT: Detector = Detector::Chaos {
    workload: ChaosWorkload::Raft,
    seeds: CHAOS_RAFT_SEEDS,
};
const fn chaos_kv(read_mode: ReadMode) -> Detector {
    Detector::Chaos {
        workload: ChaosWorkload::Kv(read_mode),
        seeds: CHAOS_KV_SEEDS,
    }
}

impl Detector {
    /// Its column.
    pub fn column(&self) -> Column {
        match self {
            Detector::Scenario { .. } => Column::Invariants,
            Detector::Kv { .. } => Column::Linearizability,
            Detector::Loom { .. } => Column::Loom,
            Detector::Shuttle { .. } => Column::Shuttle,
            Detector::Chaos { .. } => Column::Chaos,
        }
    }
}

/// One row of the catalogue.
#[derive(Clone, Debug)]
pub struct Variant {
    /// What is broken.
    pub broken: Broken,
    /// The real bug it models, with a reference.
    pub models: &'static str,
    /// The detectors that apply.
    pub detectors: Vec<Detector>,
}

fn figure8_constructed(sim: &Sim, mutations: &MutationSet) {
    scenarios::figure8_constructed(sim, mutations);
}
fn vote_storm(sim: &Sim, mutations: &MutationSet) {
    scenarios::vote_storm(sim, 60, mutations);
}
fn long_reordering(sim: &Sim, mutations: &MutationSet) {
    scenarios::long_reordering(sim, mutations);
}
fn repeated_leader_crashes(sim: &Sim, mutations: &MutationSet) {
    scenarios::repeated_leader_crashes(sim, 20, mutations);
}
fn torn_persistence(sim: &Sim, mutations: &MutationSet) {
    scenarios::torn_persistence(sim, mutations);
}

/// Every broken variant, one line each.
pub fn catalogue() -> Vec<Variant> {
    use Detector::*;
    let node = Broken::Node;
    vec![
        Variant {
            broken: node(Mutation::CommitOldTermByCounting),
            models: "commit of an old-term entry by counting replicas (Raft §5.4.2, Figure 8)",
            detectors: vec![Scenario { name: "figure 8 (constructed)", run: figure8_constructed, seeds: 20 }, CHAOS_RAFT],
        },
        Variant {
            broken: node(Mutation::ForgetVote),
            models: "the vote is not persisted; a restarted node votes twice in a term (Raft Figure 2: persist votedFor)",
            detectors: vec![Scenario { name: "vote storm", run: vote_storm, seeds: 60 }, CHAOS_RAFT],
        },
        Variant {
            broken: node(Mutation::VoteWithoutUpToDateCheck),
            models: "vote granted without the up-to-date check (Raft §5.4.1)",
            detectors: vec![CHAOS_RAFT],
        },
        Variant {
            broken: node(Mutation::TruncateOnMatchingHeartbeat),
            models: "a follower truncates on a matching heartbeat (6.5840 lab 3B pitfall, Raft Figure 2 AppendEntries step 3)",
            detectors: vec![Scenario { name: "long reordering", run: long_reordering, seeds: 30 }, CHAOS_RAFT],
        },
        Variant {
            broken: node(Mutation::NoStepDownOnHigherTermReply),
            models: "a leader ignores a higher term in a reply (Raft Figure 2, rules for all servers)",
            detectors: vec![CHAOS_RAFT],
        },
        Variant {
            broken: node(Mutation::TickerLockstep),
            models: "polling on a shared grid erases election randomness (split votes forever; Raft §5.2)",
            detectors: vec![Scenario { name: "repeated leader crashes", run: repeated_leader_crashes, seeds: 10 }, CHAOS_RAFT],
        },
        Variant {
            broken: node(Mutation::AcceptTornWrites),
            models: "non-atomic persistence and a node that trusts a torn write (Alagappan et al., OSDI '16)",
            detectors: vec![Scenario { name: "torn persistence", run: torn_persistence, seeds: 30 }, CHAOS_RAFT],
        },
        Variant {
            broken: node(Mutation::ReplyBeforePersist),
            models: "a vote or append answered before it is durable (Raft Figure 2: persist before responding)",
            detectors: vec![Loom { binary: "persist_path", test: "a_node_that_replies_before_persisting_is_rejected" }, CHAOS_RAFT],
        },
        Variant {
            broken: Broken::UnsafeLocalReads,
            models: "a deposed leader serves reads from local state (Raft thesis §6.4; etcd issue 741)",
            detectors: vec![Kv { read_mode: ReadMode::UnsafeLocal, seeds: 5 }, chaos_kv(ReadMode::UnsafeLocal)],
        },
        Variant {
            broken: node(Mutation::ReadIndexWithoutRound),
            models: "ReadIndex without the heartbeat round that confirms leadership (Raft thesis §6.4 step 3)",
            detectors: vec![Kv { read_mode: ReadMode::ReadIndex, seeds: 5 }, chaos_kv(ReadMode::ReadIndex)],
        },
        Variant {
            broken: node(Mutation::NoDuplicateSuppression),
            models: "retries applied twice without client sessions (Raft thesis §6.3)",
            detectors: vec![Kv { read_mode: ReadMode::Log, seeds: 5 }, chaos_kv(ReadMode::Log)],
        },
        Variant {
            broken: node(Mutation::ApplyWithLockHeld),
            models: "the applier blocks on the service holding the node's lock (6.5840 lab 3 deadlock)",
            detectors: vec![
                Loom { binary: "apply_path", test: "an_applier_that_sends_with_the_lock_held_deadlocks_with_the_service" },
                Shuttle { test: "an_applier_blocked_on_the_service_with_the_node_lock_held_deadlocks_the_kv_store" },
                chaos_kv(ReadMode::ReadIndex),
            ],
        },
        Variant {
            broken: node(Mutation::LostApplierWakeup),
            models: "notify before the state change: a lost wake-up (condition-variable misuse)",
            detectors: vec![Loom { binary: "apply_path", test: "a_wakeup_sent_before_the_commit_is_lost" }, CHAOS_RAFT],
        },
        Variant {
            broken: node(Mutation::TickerCheckThenAct),
            models: "check-then-act across a lock release in the election timer",
            detectors: vec![
                Loom { binary: "ticker_path", test: "a_ticker_that_checks_then_acts_across_a_lock_release_is_rejected" },
                Shuttle { test: "a_ticker_that_checks_then_acts_is_found" },
                CHAOS_RAFT,
            ],
        },
        Variant {
            broken: node(Mutation::SleepInPersist),
            models: "an fsync delay slept while holding the node's lock (the hang of the reference Go suite)",
            detectors: vec![Shuttle { test: "sleeping_in_persist_with_the_lock_held_is_a_deadlock_naming_the_threads" }, CHAOS_RAFT],
        },
        Variant {
            broken: node(Mutation::LostDeliveryHandoff),
            models: "a handler delivers what fits and strands the rest (a lost hand-off to the applier)",
            detectors: vec![Loom { binary: "apply_path", test: "a_handler_that_strands_what_it_cannot_deliver_is_rejected" }, CHAOS_RAFT],
        },
    ]
}

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
                read_mode,
                mutations,
                ..KvWorkloadConfig::default()
            };
            sweep_seeds(seeds, sweep, started, |seed| {
                match simulate_kv(seed, &config) {
                    Err(failure) => Some(first_line(&failure.message)),
                    Ok(run) => match check_kv_history(&run.history).verdict {
                        Verdict::Linearizable => None,
                        other => Some(format!(
                            "{other:?} ({} operations, {} reads by deposed leaders)",
                            run.history.len(),
                            run.reads_by_deposed_leaders
                        )),
                    },
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
