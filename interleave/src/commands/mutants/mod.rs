//! `interleave mutants`: every broken variant against every detector the catalogue names for it,
//! and the correct build against the same detectors; printed as a table (`table.rs`) or JSON
//! (`json.rs`).

use crate::cli::MutantsArgs;
use crate::engines::{run_seed, Watchdog};
use crate::run_spec::{EngineArgs, WITHOUT_BROKEN_VARIANTS};
use node::kv::ReadMode;
use runspec::RunSpec;
use sim::mutants::{
    catalogue, first_line, run_detector, sweep_seeds, Broken, Cell, ChaosWorkload, Column,
    Detector, Sweep, Variant,
};
use std::path::Path;
use std::process::ExitCode;

/// Runs one detector; the chaos column runs here, on `engine`'s scheduler, the others in
/// `sim::mutants`.
pub fn run_cell(
    detector: &Detector,
    broken: Option<Broken>,
    workspace: &Path,
    sweep: Sweep,
    (engine, watchdog): (&EngineArgs, Watchdog),
) -> Cell {
    let Detector::Chaos {
        workload, seeds, ..
    } = *detector
    else {
        return run_detector(detector, broken, workspace, sweep);
    };
    #[allow(clippy::disallowed_methods)] // the wall time a cell reports
    let started = std::time::Instant::now();
    let spec = RunSpec {
        scheduler: engine.scheduler,
        pct_depth: engine.pct_depth,
        ..workload.spec(broken)
    };
    sweep_seeds(seeds, sweep, started, |seed| {
        run_seed(&spec.with_seed(seed), watchdog)
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
        Detector::LeaseHunt { .. } => "kv lease hunt".to_string(),
        Detector::SessionChurn { .. } => "kv session churn".to_string(),
        Detector::Loom { binary, .. } => format!("loom {binary}"),
        Detector::Shuttle { .. } => "shuttle cluster".to_string(),
        // The correct build serves the unsafe mode's reads by ReadIndex.
        Detector::Chaos { workload, .. } => {
            let workload = match *workload {
                ChaosWorkload::Kv(ReadMode::UnsafeLocal) => ChaosWorkload::Kv(ReadMode::ReadIndex),
                ChaosWorkload::KvSnapshots(ReadMode::UnsafeLocal) => {
                    ChaosWorkload::KvSnapshots(ReadMode::ReadIndex)
                }
                other => other,
            };
            format!("chaos {}", workload.describe())
        }
    }
}

mod json;
mod table;

/// One variant's row: each detector that ran and what it did.
pub struct Row {
    /// The variant.
    pub variant: Variant,
    /// Each detector that ran, with its cell.
    pub cells: Vec<(Detector, Cell)>,
}

/// One detector of the correct build's row.
pub struct CorrectCell {
    /// The detector's column.
    pub column: Column,
    /// Its name in the row.
    pub key: String,
    /// What it did (anything but a survival is a failure).
    pub cell: Cell,
}

/// The kill matrix: every variant against its detectors, and the correct build.
pub struct Matrix {
    /// One row per variant.
    pub rows: Vec<Row>,
    /// The correct build's detectors (empty when skipped).
    pub correct: Vec<CorrectCell>,
    /// Whether the correct build was skipped.
    pub correct_skipped: bool,
    /// Wall time of the whole matrix.
    pub wall: std::time::Duration,
}

impl Matrix {
    /// Variants that some detector ran on and none killed: gaps in the suite.
    pub fn survivors(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|row| !row.cells.is_empty() && !row.cells.iter().any(|(_, cell)| cell.killed()))
            .map(|row| row.variant.broken.name())
            .collect()
    }

    /// Detectors the catalogue says must kill their variant that did not, or that killed it
    /// with a failure that is not the variant's (its signature): a detector grown weaker, even
    /// if another one still kills the variant. (Loom and shuttle tests check their own reason.)
    pub fn weakened(&self) -> Vec<String> {
        let mut weakened = Vec::new();
        for row in &self.rows {
            for (detector, cell) in &row.cells {
                let name = format!(
                    "{} ({})",
                    row.variant.broken.name(),
                    detector.column().title()
                );
                match cell {
                    Cell::Killed { how, .. }
                        if !matches!(detector.column(), Column::Loom | Column::Shuttle)
                            && !row.variant.recognises(how) =>
                    {
                        weakened.push(format!("{name}: killed by a different failure: {how}"))
                    }
                    Cell::Killed { .. } => {}
                    _ if detector.must_kill() => weakened.push(name),
                    _ => {}
                }
            }
        }
        weakened
    }

    /// Variants none of whose detectors ran (their columns were skipped): not judged.
    pub fn not_run(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|row| row.cells.is_empty())
            .map(|row| row.variant.broken.name())
            .collect()
    }

    /// The correct build's detectors that failed.
    pub fn correct_failures(&self) -> Vec<&str> {
        self.correct
            .iter()
            .filter(|correct| !matches!(correct.cell, Cell::Survived { .. }))
            .map(|correct| correct.key.as_str())
            .collect()
    }

    /// Every variant killed by every detector that must kill it, and the correct build clean.
    pub fn passed(&self) -> bool {
        self.survivors().is_empty()
            && self.weakened().is_empty()
            && self.correct_failures().is_empty()
    }
}

/// A cell as the matrix shows it: a chaos run the catalogue expects to miss says so.
pub fn cell_text(detector: &Detector, cell: &Cell) -> String {
    match cell {
        Cell::Survived { .. } if !detector.must_kill() => "missed (expected)".to_string(),
        _ => cell.short(),
    }
}

/// Runs the kill matrix; exit 0 when every variant is killed by every detector that must kill
/// it and the correct build passes.
pub fn mutants(args: &MutantsArgs, watchdog: Watchdog) -> ExitCode {
    if !node::MUTATIONS_AVAILABLE {
        eprintln!("interleave: mutants runs the broken variants; {WITHOUT_BROKEN_VARIANTS}");
        return ExitCode::from(2);
    }
    if let Some(Err(message)) = args.junit.as_deref().map(crate::junit::check_path) {
        eprintln!("interleave: {message}");
        return ExitCode::from(2);
    }
    let engine = (&args.engine, watchdog);
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
    // clap has checked every name against the catalogue (`variant_names`).
    if !args.only.is_empty() {
        variants.retain(|v| args.only.iter().any(|name| name == v.broken.name()));
    }
    if let Some(shard) = args.shard {
        let slice = shard.slice(variants.len() as u64);
        variants = (0u64..)
            .zip(variants)
            .filter(|(position, _)| slice.contains(position))
            .map(|(_, variant)| variant)
            .collect();
    }
    let wanted = |detector: &Detector| match detector.column() {
        Column::Loom => !args.skip_loom,
        Column::Shuttle => !args.skip_shuttle,
        _ => true,
    };
    let cells_to_run = variants
        .iter()
        .flat_map(|v| v.detectors.iter())
        .filter(|d| wanted(d))
        .count();
    // The correct build runs the chosen variants' detectors, so no cell means no run at all.
    if cells_to_run == 0 {
        eprintln!(
            "interleave: nothing to run: {}",
            if variants.is_empty() {
                "this shard holds no variant (more shards than variants)"
            } else {
                "every detector of the chosen variants is skipped"
            }
        );
        return ExitCode::from(2);
    }
    #[allow(clippy::disallowed_methods)] // the wall time of the whole matrix
    let started = std::time::Instant::now();
    let mut rows = Vec::new();
    for variant in variants {
        let mut cells = Vec::new();
        for detector in variant.detectors.iter().filter(|d| wanted(d)) {
            eprint!(
                "{:<32} {:<22} ",
                variant.broken.name(),
                detector.column().title()
            );
            let cell = run_cell(detector, Some(variant.broken), &workspace, sweep, engine);
            eprintln!("{}", cell_text(detector, &cell));
            cells.push((*detector, cell));
        }
        rows.push(Row { variant, cells });
    }
    // The correct build through the same detectors, each distinct one once.
    let mut correct = Vec::new();
    if !args.skip_correct {
        let mut seen = Vec::new();
        for detector in rows
            .iter()
            .flat_map(|row| row.variant.detectors.iter())
            .filter(|d| wanted(d))
        {
            let key = correct_build_key(detector);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key.clone());
            eprint!("{:<32} {:<22} ", "correct build", key);
            let cell = run_cell(detector, None, &workspace, Sweep::FirstKill, engine);
            eprintln!("{}", if cell.killed() { "FAILED" } else { "passed" });
            correct.push(CorrectCell {
                column: detector.column(),
                key,
                cell,
            });
        }
    }
    let matrix = Matrix {
        rows,
        correct,
        correct_skipped: args.skip_correct,
        wall: started.elapsed(),
    };
    if args.json {
        println!("{}", json::render(&matrix));
    } else {
        print!("{}", table::render(&matrix));
    }
    if let Some(file) = &args.junit {
        if let Err(message) = crate::junit::write(
            file,
            "interleave mutants",
            &junit_cases(&matrix),
            matrix.wall,
        ) {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    }
    if matrix.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The matrix as JUnit test cases: a variant a detector must kill and did not is a failure, as
/// is a detector that could not run or one that failed the correct build.
fn junit_cases(matrix: &Matrix) -> Vec<crate::junit::Case> {
    let wall = |cell: &Cell| match cell {
        Cell::Killed { wall, .. } | Cell::Survived { wall, .. } => Some(*wall),
        Cell::Error(_) => None,
    };
    let mut cases = Vec::new();
    for row in &matrix.rows {
        for (detector, cell) in &row.cells {
            let text = cell_text(detector, cell);
            let failed = match cell {
                Cell::Killed { .. } => false,
                Cell::Survived { .. } => detector.must_kill(),
                Cell::Error(_) => true,
            };
            cases.push(crate::junit::Case {
                name: format!(
                    "{} / {}",
                    row.variant.broken.name(),
                    detector.column().title()
                ),
                classname: "mutants".to_string(),
                failure: failed.then(|| {
                    (
                        format!("not killed: {text}"),
                        row.variant.models.to_string(),
                    )
                }),
                time: wall(cell),
            });
        }
    }
    for correct in &matrix.correct {
        let failed = !matches!(correct.cell, Cell::Survived { .. });
        cases.push(crate::junit::Case {
            name: format!("correct build / {}", correct.key),
            classname: "mutants correct build".to_string(),
            failure: failed.then(|| ("the correct build failed".to_string(), correct.cell.short())),
            time: wall(&correct.cell),
        });
    }
    cases
}
