//! `interleave mutants`: every broken variant against every detector that applies, and the
//! correct build against the same detectors; printed as a table or JSON.

use crate::cli::{workload_args, MutantsArgs};
use crate::engines::{run_seed, EngineChoice};
use node::kv::ReadMode;
use sim::mutants::{
    first_line, run_detector, sweep_seeds, Broken, Cell, ChaosWorkload, Detector, Sweep,
};
use std::path::Path;
use std::process::ExitCode;

/// Runs one detector; the chaos column runs here, on `engine`, the others in `sim::mutants`.
fn run_cell(
    detector: &Detector,
    broken: Option<Broken>,
    workspace: &Path,
    sweep: Sweep,
    engine: &EngineChoice,
) -> Cell {
    let Detector::Chaos { workload, seeds } = *detector else {
        return run_detector(detector, broken, workspace, sweep);
    };
    #[allow(clippy::disallowed_methods)] // the wall time a cell reports
    let started = std::time::Instant::now();
    let mut words: Vec<String> = match workload {
        ChaosWorkload::Raft => vec![],
        ChaosWorkload::Kv(read_mode) => {
            // The correct build serves the unsafe mode's reads by ReadIndex.
            let read_mode = match (broken, read_mode) {
                (None, ReadMode::UnsafeLocal) => ReadMode::ReadIndex,
                (Some(Broken::UnsafeLocalReads), _) => ReadMode::UnsafeLocal,
                _ => read_mode,
            };
            vec![
                "--workload".into(),
                "kv".into(),
                "--read-mode".into(),
                read_mode.to_string(),
            ]
        }
    };
    if let Some(Broken::Node(mutation)) = broken {
        words.extend(["--mutation".to_string(), mutation.to_string()]);
    }
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let workload = workload_args(&words);
    sweep_seeds(seeds, sweep, started, |seed| {
        run_seed(engine, &workload, seed)
            .failure
            .map(|failure| first_line(&failure))
    })
}

/// How a detector is named in the correct build's row (each distinct one runs once).
fn correct_build_key(detector: &Detector) -> String {
    match detector {
        Detector::Scenario { name, .. } => format!("scenario {name}"),
        // The correct build serves the unsafe mode's reads by ReadIndex.
        Detector::Kv { read_mode, .. } if *read_mode == ReadMode::UnsafeLocal => {
            "kv read-index".to_string()
        }
        Detector::Kv { read_mode, .. } => format!("kv {read_mode}"),
        Detector::Loom { binary, .. } => format!("loom {binary}"),
        Detector::Shuttle { .. } => "shuttle cluster".to_string(),
        Detector::Chaos {
            workload: ChaosWorkload::Raft,
            ..
        } => "chaos raft".to_string(),
        Detector::Chaos {
            workload: ChaosWorkload::Kv(ReadMode::UnsafeLocal),
            ..
        } => "chaos kv read-index".to_string(),
        Detector::Chaos {
            workload: ChaosWorkload::Kv(read_mode),
            ..
        } => format!("chaos kv {read_mode}"),
    }
}

/// Runs the kill matrix; exit 0 when every variant is killed and the correct build passes.
pub fn mutants(args: &MutantsArgs, watchdog: std::time::Duration) -> ExitCode {
    use sim::mutants::{catalogue, Column};
    let engine = args.engine.choice(watchdog);
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
    #[allow(clippy::disallowed_methods)] // the wall time of the whole matrix
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
            let cell = run_cell(detector, Some(variant.broken), &workspace, sweep, &engine);
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
            let key = correct_build_key(detector);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key.clone());
            eprint!("{:<32} {:<22} ", "correct build", key);
            let cell = run_cell(detector, None, &workspace, Sweep::FirstKill, &engine);
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
