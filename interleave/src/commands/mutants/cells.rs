//! Running one cell of the matrix: a detector against a variant (or the correct build). The chaos
//! column runs here, on the engine the command line chose; the others in `sim::mutants`.

use crate::engines::{run_seed, Watchdog};
use crate::run_spec::EngineArgs;
use node::kv::ReadMode;
use runspec::RunSpec;
use sim::mutants::{
    first_line, run_detector, sweep_seeds, Broken, Cell, ChaosWorkload, Detector, Sweep,
};
use std::path::Path;

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
pub(super) fn correct_build_key(detector: &Detector) -> String {
    match detector {
        Detector::Scenario { name, .. } => format!("scenario {name}"),
        // The correct build serves the unsafe mode's reads by ReadIndex.
        Detector::Kv { read_mode, .. } if *read_mode == ReadMode::UnsafeLocal => {
            "kv read-index".to_string()
        }
        Detector::Kv { read_mode, .. } => format!("kv {read_mode}"),
        Detector::LeaseHunt { .. } => "kv lease hunt".to_string(),
        Detector::SessionChurn { .. } => "kv session churn".to_string(),
        Detector::Transactions { .. } => "list-append".to_string(),
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
