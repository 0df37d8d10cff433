//! `interleave`: hunts for bugs in the Raft cluster by running the chaos workload over many seeds
//! in simulated time, and says what it found.
//!
//! Exit status: 0 nothing found, 1 a violation found, 2 usage or input error.

use clap::{Args, Parser, Subcommand};
use node::kv::ReadMode;
use node::{Mutation, MutationSet};
use sim::kv_workload::{check_kv_history, simulate_kv};
use sim::{run_chaos, simulate, ChaosConfig, ChaosReport, FaultMix, KvWorkloadConfig};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "interleave",
    about = "Makes the bugs of distributed systems common, fast and reproducible.",
    long_about = "Runs a Raft cluster on real threads in simulated time under random faults \
                  (message loss and delay, crashes, restarts, symmetric and one-way partitions) \
                  and checks State Machine Safety, Election Safety and in-order apply on every \
                  applied entry and state change. Every failure prints its seed and a command that \
                  replays it. With no subcommand, runs `chaos` with its defaults."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the chaos workload over a range of seeds, in parallel, with a progress display.
    Chaos(ChaosArgs),
    /// Rerun one seed of the chaos workload and write a readable event log: elections, terms,
    /// commits, partitions, crashes, and the violation if there is one. Filter the log with
    /// INTERLEAVE_LOG (default `interleave=info`; `interleave=debug` adds commits).
    Replay(ReplayArgs),
    /// Check history files for linearizability (the same tool as `lincheck`): exit 0 all
    /// linearizable, 1 some not, 3 some unknown (budget exhausted), 2 bad input.
    Check(models::cli::CheckArgs),
    /// Run every deliberately broken variant against every detector that applies (continuous
    /// invariants, KV linearizability, loom models, shuttle schedules) and print the kill
    /// matrix; then run the same detectors on the correct build, which must show no failure.
    /// Exit 0 when every variant is killed and the correct build passes, 1 otherwise. The loom
    /// and shuttle columns build their own test binaries with cargo (minutes the first time).
    Mutants(MutantsArgs),
}

#[derive(Args, Clone)]
struct MutantsArgs {
    /// Only these variants (repeatable; see the README's catalogue for the names).
    #[arg(long = "only", value_name = "NAME")]
    only: Vec<String>,
    /// Skip the loom column (no `--cfg loom` build).
    #[arg(long)]
    skip_loom: bool,
    /// Skip the shuttle column (no `--cfg shuttle` build).
    #[arg(long)]
    skip_shuttle: bool,
    /// Skip the correct-build row.
    #[arg(long)]
    skip_correct: bool,
    /// Run every seed of the simulation and key-value detectors instead of stopping at the
    /// first kill, and report how many seeds killed each variant (how strong the detector is,
    /// not only whether it can fail; slower). Loom models are exhaustive, and shuttle's
    /// detectors have their own benchmark (`detector_strength`).
    #[arg(long)]
    every_seed: bool,
    /// Print the matrix as one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// The workspace whose loom and shuttle tests to build (default: this binary's source tree).
    #[arg(long, value_name = "DIR")]
    workspace: Option<std::path::PathBuf>,
}

/// The chaos workload's shape, shared by `chaos` and `replay`.
#[derive(Args, Clone)]
struct WorkloadArgs {
    /// Number of nodes in the cluster (3 to 9).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(3..=9))]
    nodes: u32,
    /// Fault rounds per seed (each 50-500 ms of simulated time).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    rounds: u32,
    /// Keep the network reliable (no message loss); delays and partitions still happen.
    #[arg(long)]
    reliable: bool,
    /// Switch on a deliberately broken behaviour (repeatable; an unknown name lists them all).
    /// Many are only exposed by their targeted scenario, the key-value workload, a loom model or
    /// shuttle, not by the chaos workload: `interleave mutants` prints which detector kills which.
    #[arg(long = "mutation", value_name = "NAME")]
    mutations: Vec<Mutation>,
    /// What runs on the cluster: `raft` (commands offered to every node each round, continuous
    /// invariants) or `kv` (30 clerks against the key-value store, continuous invariants, and
    /// the client history checked for linearizability).
    #[arg(long, value_enum, default_value_t = WorkloadKind::Raft)]
    workload: WorkloadKind,
    /// For `--workload kv`: how gets are served (log, read-index, or the broken unsafe-local).
    #[arg(long, default_value = "read-index", value_name = "MODE")]
    read_mode: ReadMode,
    /// Simulated seconds per seed (raft: the rounds stop early once it has passed; kv: the
    /// clients' run time, default 27).
    #[arg(long, value_name = "SECONDS", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Fault mix: no crashes or restarts.
    #[arg(long)]
    no_crashes: bool,
    /// Fault mix: no symmetric partitions (raft workload).
    #[arg(long)]
    no_partitions: bool,
    /// Fault mix: no one-way link cuts (raft workload).
    #[arg(long)]
    no_one_way: bool,
}

/// What `chaos` runs on the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum WorkloadKind {
    /// Commands offered to every node, continuous invariants.
    Raft,
    /// The key-value store with a linearizability check.
    Kv,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(0.1..=86_400.0).contains(&seconds) {
        return Err(format!("{seconds} s is outside 0.1..=86400"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[derive(Args, Clone)]
struct ReplayArgs {
    /// The seed to rerun.
    #[arg(long)]
    seed: u64,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Write the event log to this file instead of standard error.
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
}

#[derive(Args, Clone)]
struct ChaosArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    /// How many seeds to run.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    seeds: u64,
    /// The first seed; seeds run are first-seed, first-seed + 1, ...
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Parallel workers (default: the number of cores).
    #[arg(long)]
    workers: Option<usize>,
    /// Stop at the first failing seed.
    #[arg(long)]
    fail_fast: bool,
    /// Print one JSON object per seed and a summary object on standard output, for CI.
    #[arg(long)]
    json: bool,
    /// Where a failing seed's event trace (and, for the key-value workload, its client history
    /// and an HTML counterexample) are written, one folder per seed.
    #[arg(long, value_name = "DIR", default_value = "target/interleave-runs")]
    out: std::path::PathBuf,
}

impl Default for ChaosArgs {
    fn default() -> Self {
        ChaosArgs {
            workload: WorkloadArgs {
                nodes: 5,
                rounds: 200,
                reliable: false,
                mutations: Vec::new(),
                workload: WorkloadKind::Raft,
                read_mode: ReadMode::ReadIndex,
                duration: None,
                no_crashes: false,
                no_partitions: false,
                no_one_way: false,
            },
            seeds: 100,
            first_seed: 1,
            workers: None,
            fail_fast: false,
            json: false,
            out: std::path::PathBuf::from("target/interleave-runs"),
        }
    }
}

impl WorkloadArgs {
    fn config(&self) -> ChaosConfig {
        let mut mutations = MutationSet::default();
        for &mutation in &self.mutations {
            mutations = mutations.with(mutation);
        }
        ChaosConfig {
            nodes: self.nodes as usize,
            rounds: self.rounds,
            unreliable: !self.reliable,
            mutations,
            faults: FaultMix {
                crashes: !self.no_crashes,
                partitions: !self.no_partitions,
                one_way: !self.no_one_way,
            },
            duration: self.duration,
            ..ChaosConfig::default()
        }
    }

    fn kv_config(&self) -> KvWorkloadConfig {
        let defaults = KvWorkloadConfig::default();
        let chaos = self.config();
        KvWorkloadConfig {
            nodes: self.nodes as usize,
            read_mode: self.read_mode,
            mutations: chaos.mutations,
            duration: self.duration.unwrap_or(defaults.duration),
            unreliable: !self.reliable,
            crashes: !self.no_crashes,
            ..defaults
        }
    }

    /// Runs one seed of the selected workload.
    fn run_seed(&self, seed: u64) -> Outcome {
        match self.workload {
            WorkloadKind::Raft => {
                let (report_sender, report) = mpsc::channel();
                let config = self.config();
                match simulate(seed, move |sim| {
                    let _ = report_sender.send(run_chaos(sim, &config));
                }) {
                    Ok(()) => Outcome::Passed(report.recv().expect("a passing run reports")),
                    Err(failure) => Outcome::Failed(failure.message, None, None),
                }
            }
            WorkloadKind::Kv => match simulate_kv(seed, &self.kv_config()) {
                Err(failure) => Outcome::Failed(failure.message, None, None),
                Ok(run) => {
                    let check = check_kv_history(&run.history);
                    let report = ChaosReport {
                        simulated: run.simulated,
                        crashes: run.crashes,
                        leaders_elected: run.leaders_elected,
                        highest_applied: run.highest_applied,
                        partitions: run.leader_isolations,
                        leader_isolations: run.leader_isolations,
                        operations_checked: run.history.len() as u64,
                        ..ChaosReport::default()
                    };
                    if check.verdict == models::Verdict::Linearizable {
                        Outcome::Passed(report)
                    } else {
                        let first = check
                            .counterexample()
                            .map(|(partition, _)| format!(" (key {})", partition.name))
                            .unwrap_or_default();
                        Outcome::Failed(
                            format!(
                                "client history {:?}{first}: {} operations, {} reads served by deposed leaders",
                                check.verdict,
                                run.history.len(),
                                run.reads_by_deposed_leaders
                            ),
                            Some((run.history, check)),
                            Some(report),
                        )
                    }
                }
            },
        }
    }

    /// The command line that reruns just `seed` with the same settings and an event log.
    fn replay(&self, seed: u64) -> String {
        let mut line = format!(
            "cargo run --release -p sim --bin interleave -- replay --seed {seed} --nodes {} --rounds {}",
            self.nodes, self.rounds
        );
        line.push_str(&self.flags());
        line
    }

    /// The workload flags that differ from the defaults, as they would be typed.
    fn flags(&self) -> String {
        let mut line = String::new();
        if self.reliable {
            line.push_str(" --reliable");
        }
        for mutation in &self.mutations {
            line.push_str(&format!(" --mutation {mutation}"));
        }
        if self.workload == WorkloadKind::Kv {
            line.push_str(&format!(" --workload kv --read-mode {}", self.read_mode));
        }
        if let Some(duration) = self.duration {
            line.push_str(&format!(" --duration {}", duration.as_secs_f64()));
        }
        for (off, flag) in [
            (self.no_crashes, " --no-crashes"),
            (self.no_partitions, " --no-partitions"),
            (self.no_one_way, " --no-one-way"),
        ] {
            if off {
                line.push_str(flag);
            }
        }
        line
    }
}

enum Outcome {
    Passed(ChaosReport),
    /// The violation; for the key-value workload the history and its check, and the run's
    /// figures (a run whose history is not linearizable still ran to its end; a run stopped
    /// by a violation has none).
    Failed(
        String,
        Option<(
            models::History<models::KvInput, models::KvOutput>,
            models::Report,
        )>,
        Option<ChaosReport>,
    ),
}

/// Adds one seed's figures to the totals.
fn add_to_totals(totals: &mut ChaosReport, report: &ChaosReport) {
    totals.simulated += report.simulated;
    totals.leaders_elected += report.leaders_elected;
    totals.highest_applied += report.highest_applied;
    totals.crashes += report.crashes;
    totals.partitions += report.partitions;
    totals.one_way_cuts += report.one_way_cuts;
    totals.operations_checked += report.operations_checked;
}

fn main() -> ExitCode {
    // A failing simulation is reported with its seed and message by the runner; the default
    // panic output of the simulation's own threads would only bury that report.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("main") {
            default_hook(info);
        }
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() { 2 } else { 0 };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    match cli.command.unwrap_or(Command::Chaos(ChaosArgs::default())) {
        Command::Chaos(args) => chaos(&args),
        Command::Replay(args) => replay(&args),
        Command::Check(args) => ExitCode::from(models::cli::run(&args)),
        Command::Mutants(args) => mutants(&args),
    }
}

fn mutants(args: &MutantsArgs) -> ExitCode {
    use sim::mutants::{catalogue, run_detector, Cell, Column, Detector, Sweep};
    let workspace = args
        .workspace
        .clone()
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    let sweep = if args.every_seed {
        Sweep::EverySeed
    } else {
        Sweep::FirstKill
    };
    let mut variants = catalogue();
    if !args.only.is_empty() {
        let known: Vec<&str> = variants.iter().map(|v| v.broken.name()).collect();
        for name in &args.only {
            if !known.contains(&name.as_str()) {
                eprintln!(
                    "interleave: unknown variant {name:?}; known: {}",
                    known.join(", ")
                );
                return ExitCode::from(2);
            }
        }
        variants.retain(|v| args.only.iter().any(|name| name == v.broken.name()));
    }
    let wanted = |detector: &Detector| match detector.column() {
        Column::Loom => !args.skip_loom,
        Column::Shuttle => !args.skip_shuttle,
        _ => true,
    };
    let started = std::time::Instant::now();
    let mut rows = Vec::new();
    for variant in &variants {
        let mut cells = Vec::new();
        for detector in variant.detectors.iter().filter(|d| wanted(d)) {
            eprint!(
                "{:<32} {:<22} ",
                variant.broken.name(),
                detector.column().title()
            );
            let cell = run_detector(detector, Some(variant.broken), &workspace, sweep);
            eprintln!("{}", cell.short());
            cells.push((detector.column(), cell));
        }
        rows.push((variant, cells));
    }
    // The correct build through the same detectors, each distinct one once.
    let mut correct: Vec<(Column, String, Cell)> = Vec::new();
    if !args.skip_correct {
        let mut seen = Vec::new();
        for detector in variants
            .iter()
            .flat_map(|v| v.detectors.iter())
            .filter(|d| wanted(d))
        {
            let key = match detector {
                Detector::Scenario { name, .. } => format!("scenario {name}"),
                // The correct build serves the unsafe mode's reads by ReadIndex.
                Detector::Kv { read_mode, .. } if *read_mode == ReadMode::UnsafeLocal => {
                    "kv read-index".to_string()
                }
                Detector::Kv { read_mode, .. } => format!("kv {read_mode}"),
                Detector::Loom { binary, .. } => format!("loom {binary}"),
                Detector::Shuttle { .. } => "shuttle cluster".to_string(),
            };
            if seen.contains(&key) {
                continue;
            }
            seen.push(key.clone());
            eprint!("{:<32} {:<22} ", "correct build", key);
            let cell = run_detector(detector, None, &workspace, Sweep::FirstKill);
            eprintln!("{}", if cell.killed() { "FAILED" } else { "passed" });
            correct.push((detector.column(), key, cell));
        }
    }
    // A variant none of whose detectors ran (its columns were skipped) is not judged.
    let survivors: Vec<&str> = rows
        .iter()
        .filter(|(_, cells)| !cells.is_empty() && !cells.iter().any(|(_, cell)| cell.killed()))
        .map(|(variant, _)| variant.broken.name())
        .collect();
    let not_run: Vec<&str> = rows
        .iter()
        .filter(|(_, cells)| cells.is_empty())
        .map(|(variant, _)| variant.broken.name())
        .collect();
    let correct_failures: Vec<&str> = correct
        .iter()
        .filter(|(_, _, cell)| !matches!(cell, Cell::Survived { .. }))
        .map(|(_, key, _)| key.as_str())
        .collect();
    if args.json {
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|(variant, cells)| {
                serde_json::json!({
                    "variant": variant.broken.name(),
                    "models": variant.models,
                    "cells": cells.iter().map(|(column, cell)| serde_json::json!({
                        "detector": column.title(),
                        "result": cell.short(),
                        "killed": cell.killed(),
                        "detail": match cell { Cell::Killed { how, .. } => how.clone(), Cell::Survived { tried, .. } => tried.clone(), Cell::Error(e) => e.clone() },
                        "seeds_killing": match cell { Cell::Killed { seeds_killing: Some((killing, tried)), .. } => serde_json::json!({"killing": killing, "tried": tried}), _ => serde_json::Value::Null },
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let summary = serde_json::json!({
            "rows": rows,
            "correct_build": correct.iter().map(|(_, key, cell)| serde_json::json!({"detector": key, "failed": !matches!(cell, Cell::Survived { .. })})).collect::<Vec<_>>(),
            "survivors": survivors,
            "not_run": not_run,
            "correct_failures": correct_failures,
            "wall_s": started.elapsed().as_secs_f64(),
        });
        println!("{summary}");
    } else {
        let mut header = "| variant | the real bug |".to_string();
        let mut rule = "| --- | --- |".to_string();
        for column in Column::ALL {
            header.push_str(&format!(" {} |", column.title()));
            rule.push_str(" --- |");
        }
        println!("{header}\n{rule}");
        for (variant, cells) in &rows {
            let mut line = format!("| `{}` | {} |", variant.broken.name(), variant.models);
            for column in Column::ALL {
                let text: Vec<String> = cells
                    .iter()
                    .filter(|(c, _)| *c == column)
                    .map(|(_, cell)| cell.short())
                    .collect();
                line.push_str(&format!(
                    " {} |",
                    if text.is_empty() {
                        "-".into()
                    } else {
                        text.join(", ")
                    }
                ));
            }
            println!("{line}");
        }
        if !correct.is_empty() {
            let mut line = "| correct build | the same detectors |".to_string();
            for column in Column::ALL {
                let cells: Vec<&Cell> = correct
                    .iter()
                    .filter(|(c, _, _)| *c == column)
                    .map(|(_, _, cell)| cell)
                    .collect();
                let failed = cells
                    .iter()
                    .filter(|cell| !matches!(cell, Cell::Survived { .. }))
                    .count();
                line.push_str(&if cells.is_empty() {
                    " - |".to_string()
                } else {
                    let plural = |n: usize, word: &str| {
                        format!("{n} {word}{}", if n == 1 { "" } else { "s" })
                    };
                    format!(
                        " {} ({}) |",
                        plural(failed, "failure"),
                        plural(cells.len(), "detector")
                    )
                });
            }
            println!("{line}");
        }
        let correct_build = if args.skip_correct {
            "skipped".to_string()
        } else {
            format!("{} failures", correct_failures.len())
        };
        println!(
            "\n{} variant{}, {} survived, correct build: {correct_build}; {:.0} s",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" },
            survivors.len(),
            started.elapsed().as_secs_f64()
        );
        for survivor in &survivors {
            println!("SURVIVED: {survivor} (a gap in the suite)");
        }
        if !not_run.is_empty() {
            println!(
                "not run (their detectors were skipped): {}",
                not_run.join(", ")
            );
        }
        for failure in &correct_failures {
            println!("CORRECT BUILD FAILED: {failure}");
        }
    }
    if survivors.is_empty() && correct_failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn chaos(args: &ChaosArgs) -> ExitCode {
    let workers = args
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .clamp(1, 64);
    let workload = Arc::new(args.workload.clone());
    let last_seed = args.first_seed.saturating_add(args.seeds - 1);
    if !args.json {
        let shape = match args.workload.workload {
            WorkloadKind::Raft => format!("{} rounds per seed", args.workload.rounds),
            WorkloadKind::Kv => format!(
                "key-value workload ({} reads, {} s per seed, linearizability checked)",
                args.workload.read_mode,
                args.workload.kv_config().duration.as_secs_f64()
            ),
        };
        println!(
        "interleave chaos: {} nodes, {shape}, seeds {}..={last_seed}, {} network, {workers} workers{}",
        args.workload.nodes,
        args.first_seed,
        if args.workload.reliable { "reliable" } else { "unreliable (10% request and 10% reply loss)" },
        if args.workload.mutations.is_empty() {
            String::new()
        } else {
            format!(", mutations: {}", args.workload.mutations.iter().map(|m| m.name()).collect::<Vec<_>>().join(", "))
        }
    );
    }
    let next_seed = Arc::new(AtomicU64::new(args.first_seed));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (results, finished) = mpsc::channel::<(u64, Outcome)>();
    let mut handles = Vec::new();
    for _ in 0..workers {
        let (next_seed, stop, results, workload) = (
            next_seed.clone(),
            stop.clone(),
            results.clone(),
            workload.clone(),
        );
        handles.push(std::thread::spawn(move || loop {
            let seed = next_seed.fetch_add(1, Ordering::SeqCst);
            if seed > last_seed || stop.load(Ordering::SeqCst) {
                return;
            }
            let outcome = workload.run_seed(seed);
            if results.send((seed, outcome)).is_err() {
                return;
            }
        }));
    }
    drop(results);

    let wall = std::time::Instant::now();
    let interactive = std::io::stderr().is_terminal();
    let (mut done, mut failures, mut stopped_early) = (0u64, Vec::new(), 0u64);
    let mut totals = ChaosReport::default();
    for (seed, outcome) in finished {
        done += 1;
        match outcome {
            Outcome::Passed(report) => {
                if args.json {
                    let object = serde_json::json!({
                        "seed": seed,
                        "verdict": "passed",
                        "simulated_s": report.simulated.as_secs_f64(),
                        "leaders_elected": report.leaders_elected,
                        "highest_applied": report.highest_applied,
                    });
                    println!("{object}");
                }
                add_to_totals(&mut totals, &report);
            }
            Outcome::Failed(message, evidence, report) => {
                match &report {
                    Some(report) => add_to_totals(&mut totals, report),
                    None => stopped_early += 1,
                }
                let saved = if failures.len() < MAX_SAVED_FAILURES {
                    save_failure(args, seed, &message, evidence.as_ref())
                } else {
                    None
                };
                if args.json {
                    let object = serde_json::json!({
                        "seed": seed,
                        "verdict": "failed",
                        "violation": message,
                        "replay": args.workload.replay(seed),
                        "output": saved.as_ref().map(|dir| dir.display().to_string()),
                    });
                    println!("{object}");
                } else {
                    eprintln!("{}", if interactive { "\r\x1b[K" } else { "" });
                    println!("FAILED seed {seed}: {message}");
                    println!("replay: {}", args.workload.replay(seed));
                    if let Some(dir) = &saved {
                        println!("trace and history: {}", dir.display());
                    }
                }
                failures.push(seed);
                if args.fail_fast {
                    stop.store(true, Ordering::SeqCst);
                }
            }
        }
        let elapsed = wall.elapsed().as_secs_f64().max(1e-9);
        let line = format!(
            "[{done}/{}] failures {} | {:.0} simulated s | {:.0}x real time | {:.1} seeds/s",
            args.seeds,
            failures.len(),
            totals.simulated.as_secs_f64(),
            totals.simulated.as_secs_f64() / elapsed,
            done as f64 / elapsed
        );
        if interactive {
            eprint!("\r\x1b[K{line}");
            let _ = std::io::stderr().flush();
        } else if done % 10 == 0 || done == args.seeds {
            eprintln!("{line}");
        }
    }
    for handle in handles {
        let _ = handle.join();
    }
    if interactive {
        eprintln!();
    }
    let elapsed = wall.elapsed();
    failures.sort_unstable();
    if args.json {
        let summary = serde_json::json!({
            "summary": {
                "seeds": done,
                "failures": failures,
                "wall_s": elapsed.as_secs_f64(),
                "simulated_s": totals.simulated.as_secs_f64(),
            }
        });
        println!("{summary}");
        return if failures.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
    }
    println!(
        "{done} seeds in {:.1} s wall, {:.0} s simulated: {} leaders elected, {} entries committed (max index per seed, summed), \
         {} crashes, {} partitions, {} one-way cuts",
        elapsed.as_secs_f64(),
        totals.simulated.as_secs_f64(),
        totals.leaders_elected,
        totals.highest_applied,
        totals.crashes,
        totals.partitions,
        totals.one_way_cuts
    );
    if stopped_early > 0 {
        println!(
            "({stopped_early} failing seed(s) stopped at their violation: their figures are not in the totals)"
        );
    }
    if failures.is_empty() {
        if totals.operations_checked > 0 {
            println!(
                "{} client operations checked: every history was linearizable",
                totals.operations_checked
            );
        }
        println!("found nothing: every invariant held on every seed");
        ExitCode::SUCCESS
    } else {
        println!("found {} failing seed(s): {failures:?}", failures.len());
        ExitCode::from(1)
    }
}

/// Failing seeds whose trace and history are saved (each costs one more run for the trace).
const MAX_SAVED_FAILURES: usize = 3;

/// Writes a failing seed's folder: `violation.txt`, for the key-value workload `history.jsonl`
/// and `counterexample.html`, and `trace.log` from a replay of the seed (a child process running
/// `replay`, so its event log is not mixed with other seeds'). Returns the folder.
fn save_failure(
    args: &ChaosArgs,
    seed: u64,
    message: &str,
    evidence: Option<&(
        models::History<models::KvInput, models::KvOutput>,
        models::Report,
    )>,
) -> Option<std::path::PathBuf> {
    let dir = args.out.join(format!("seed-{seed}"));
    let written = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("violation.txt"),
            format!("{message}\nreplay: {}\n", args.workload.replay(seed)),
        )?;
        if let Some((history, report)) = evidence {
            sim::kv_workload::write_failure(&dir, "history", history, report)?;
        }
        let exe = std::env::current_exe()?;
        let mut replay = std::process::Command::new(exe);
        replay
            .arg("replay")
            .arg("--seed")
            .arg(seed.to_string())
            .arg("--nodes")
            .arg(args.workload.nodes.to_string())
            .arg("--rounds")
            .arg(args.workload.rounds.to_string())
            .args(args.workload.flags().split_whitespace())
            .arg("--out")
            .arg(dir.join("trace.log"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        replay.status()?;
        Ok(())
    })();
    match written {
        Ok(()) => Some(dir),
        Err(error) => {
            eprintln!("interleave: cannot write {}: {error}", dir.display());
            None
        }
    }
}

fn replay(args: &ReplayArgs) -> ExitCode {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("INTERLEAVE_LOG")
        .unwrap_or_else(|_| EnvFilter::new("interleave=info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .without_time();
    let installed = match &args.out {
        Some(path) => match std::fs::File::create(path) {
            Ok(file) => builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .try_init(),
            Err(error) => {
                eprintln!("interleave: cannot write {}: {error}", path.display());
                return ExitCode::from(2);
            }
        },
        None => builder.with_writer(std::io::stderr).try_init(),
    };
    if let Err(error) = installed {
        eprintln!("interleave: cannot install the event log: {error}");
        return ExitCode::from(2);
    }
    let seed = args.seed;
    match args.workload.run_seed(seed) {
        Outcome::Passed(_) => {
            println!("seed {seed}: nothing found");
            ExitCode::SUCCESS
        }
        Outcome::Failed(message, _, _) => {
            tracing::error!(target: "interleave", "seed {seed} FAILED: {message}");
            println!("seed {seed} FAILED: {message}");
            ExitCode::from(1)
        }
    }
}
