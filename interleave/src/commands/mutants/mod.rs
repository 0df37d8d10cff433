//! `interleave mutants`: every broken variant against every detector the catalogue names for it,
//! and the correct build against the same detectors ([`matrix`]), each cell run by [`cells`];
//! printed as a table (`table.rs`) or JSON (`json.rs`).

mod cells;
mod json;
pub mod matrix;
mod table;

use crate::cli::MutantsArgs;
use crate::command_error::CommandError;
use crate::engines::Watchdog;
use crate::run_spec::EngineArgs;
use cells::{correct_build_key, run_cell};
pub use matrix::{cell_text, CorrectCell, Matrix, Row};
use sim::mutants::{catalogue, Column, Detector, Sweep, Variant};
use std::path::PathBuf;
use std::process::ExitCode;

/// What one run of the matrix runs: the variants, which detectors, where and how.
struct Plan<'a> {
    variants: Vec<Variant>,
    args: &'a MutantsArgs,
    workspace: PathBuf,
    engine: (&'a EngineArgs, Watchdog),
}

impl Plan<'_> {
    /// Whether `detector`'s column runs (loom and shuttle can be skipped).
    fn wanted(&self, detector: &Detector) -> bool {
        match detector.column() {
            Column::Loom => !self.args.skip_loom,
            Column::Shuttle => !self.args.skip_shuttle,
            _ => true,
        }
    }
}

/// Runs the kill matrix; exit 0 when every variant is killed by every detector that must kill
/// it and the correct build passes, 1 when not, 2 on bad input.
pub fn mutants(args: &MutantsArgs, watchdog: Watchdog) -> ExitCode {
    let plan = match plan(args, watchdog) {
        Ok(plan) => plan,
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    #[allow(clippy::disallowed_methods)] // the wall time of the whole matrix
    let started = std::time::Instant::now();
    let rows = run_variants(&plan);
    let correct = if args.skip_correct {
        Vec::new()
    } else {
        run_correct_build(&plan, &rows)
    };
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
        let cases = matrix::junit_cases(&matrix);
        if let Err(message) = crate::junit::write(file, "interleave mutants", &cases, matrix.wall) {
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

/// The variants `args` choose (`--only`, `--shard`) and the rest of the plan; an error when this
/// build has no broken variants, the JUnit path cannot be written, or nothing would run.
fn plan(args: &MutantsArgs, watchdog: Watchdog) -> Result<Plan<'_>, CommandError> {
    if !node::MUTATIONS_AVAILABLE {
        return Err(CommandError::MutantsNeedBrokenVariants);
    }
    if let Some(checked) = args.junit.as_deref().map(crate::junit::check_path) {
        checked?;
    }
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
    let plan = Plan {
        variants,
        args,
        workspace: args
            .workspace
            .clone()
            .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")),
        engine: (&args.engine, watchdog),
    };
    let cells = plan.variants.iter().flat_map(|v| v.detectors.iter());
    // The correct build runs the chosen variants' detectors, so no cell means no run at all.
    if cells.filter(|d| plan.wanted(d)).count() == 0 {
        return Err(CommandError::NothingToRun(if plan.variants.is_empty() {
            "this shard holds no variant (more shards than variants)"
        } else {
            "every detector of the chosen variants is skipped"
        }));
    }
    Ok(plan)
}

/// Every chosen variant through its wanted detectors, each cell said as it ends.
fn run_variants(plan: &Plan<'_>) -> Vec<Row> {
    let sweep = if plan.args.every_seed {
        Sweep::EverySeed
    } else {
        Sweep::FirstKill
    };
    let mut rows = Vec::new();
    for variant in &plan.variants {
        let mut cells = Vec::new();
        for detector in variant.detectors.iter().filter(|d| plan.wanted(d)) {
            let (name, column) = (variant.broken.name(), detector.column().title());
            eprint!("{name:<32} {column:<22} ");
            let broken = Some(variant.broken);
            let cell = run_cell(detector, broken, &plan.workspace, sweep, plan.engine);
            eprintln!("{}", cell_text(detector, &cell));
            cells.push((*detector, cell));
        }
        rows.push(Row {
            variant: variant.clone(),
            cells,
        });
    }
    rows
}

/// The correct build through the same detectors as `rows`, each distinct one once.
fn run_correct_build(plan: &Plan<'_>, rows: &[Row]) -> Vec<CorrectCell> {
    let mut correct: Vec<CorrectCell> = Vec::new();
    let detectors = rows.iter().flat_map(|row| row.variant.detectors.iter());
    for detector in detectors.filter(|d| plan.wanted(d)) {
        let key = correct_build_key(detector);
        if correct.iter().any(|done| done.key == key) {
            continue;
        }
        eprint!("{:<32} {:<22} ", "correct build", key);
        let cell = run_cell(
            detector,
            None,
            &plan.workspace,
            Sweep::FirstKill,
            plan.engine,
        );
        eprintln!("{}", if cell.killed() { "FAILED" } else { "passed" });
        correct.push(CorrectCell {
            column: detector.column(),
            key,
            cell,
        });
    }
    correct
}
