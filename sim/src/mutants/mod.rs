//! The catalogue of deliberately broken variants and the detectors that must kill them: the data
//! behind `interleave mutants` and its kill matrix.
//!
//! - `catalogue.rs`: every variant, the real bug it models (with a reference), the detectors that
//!   apply and what its failure says;
//! - `detector.rs`: the kinds of detector, one column each (continuous invariants in a targeted
//!   scenario, linearizability of the key-value workload, a loom model, a shuttle exploration,
//!   chaos itself);
//! - `run.rs`: running a detector and the cell it fills.

mod catalogue;
mod detector;
mod run;

pub use catalogue::{catalogue, Broken, Variant};
pub use detector::{
    ChaosWorkload, Column, Detector, ScenarioFn, CHAOS_KV_SEEDS, CHAOS_RAFT_SEEDS,
    CHAOS_SNAPSHOT_THRESHOLD,
};
pub use run::{first_line, run_detector, sweep_seeds, Cell, Sweep};
