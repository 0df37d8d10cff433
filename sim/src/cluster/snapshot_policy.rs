//! The snapshot policy, checked the one way at the end of every simulated run (the rest of the
//! end every run shares is `crate::run_end`).

use super::Cluster;

impl Cluster {
    /// The snapshot policy at the end of a run: with a `threshold`, every node that applied its
    /// whole log keeps at most that many bytes of it (its service compacted the rest).
    pub fn check_snapshot_policy(&self, threshold: Option<usize>) {
        if let Some(threshold) = threshold {
            self.check_log_bounded(threshold);
        }
    }
}
