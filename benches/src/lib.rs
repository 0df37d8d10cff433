//! Shared pieces of the criterion benchmarks in `benches/` and of the profiling examples.

mod applied_index;
mod real_cluster;

pub use applied_index::AppliedIndex;
pub use real_cluster::{RealCluster, Run};
