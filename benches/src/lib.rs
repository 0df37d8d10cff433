//! Shared pieces of the criterion benchmarks in `benches/` and of the profiling examples.

mod applied_index;
mod commit_totals;
mod in_process;
mod read_cluster;
mod real_cluster;
mod steal_time;

pub use applied_index::AppliedIndex;
pub use commit_totals::{against_one, CommitTotals};
pub use read_cluster::ReadCluster;
pub use real_cluster::{RealCluster, Run};
pub use steal_time::{report_steal_since, steal_time};
