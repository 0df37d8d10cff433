//! How every simulated run ends, whatever its workload (raft chaos, key-value, list-append):
//! the snapshot policy checked the one way, then what the run amounted to read off the cluster
//! (what the invariants observed, the faults' windows on the leader, the disks' and logs'
//! figures, the simulated time), and the cluster shut down. The workloads differ in their
//! clients, their timelines and their checkers, not in this.

use super::Cluster;
use crate::leader_faults::LeaderFaults;
use runspec::{FaultWindows, RunFigures};
use threadsim::Instant;

impl Cluster {
    /// The snapshot policy at the end of a run: with a `threshold`, every node that applied its
    /// whole log keeps at most that many bytes of it (its service compacted the rest).
    pub fn check_snapshot_policy(&self, threshold: Option<usize>) {
        if let Some(threshold) = threshold {
            self.check_log_bounded(threshold);
        }
    }

    /// What the run that began at `started` amounted to: `counts` (what its timeline did) with
    /// what the invariants observed, each fault's window (`on_leader`'s, and those the run's own
    /// probes measured, `probed`), the disks' and logs' figures and the simulated time. Shuts
    /// the cluster down: nothing runs on it after.
    pub fn finish_run(
        &self,
        started: Instant,
        on_leader: &LeaderFaults,
        probed: &FaultWindows,
        counts: RunFigures,
    ) -> RunFigures {
        let observed = self.invariants().observed();
        let now = self.clock().now();
        assert!(now >= started, "a run ends after it began");
        let mut figures = RunFigures {
            simulated: now - started,
            leaders_elected: observed.leaders_elected,
            highest_applied: observed.highest_applied.0,
            local_reads: observed.local_reads,
            reads_by_deposed_leaders: observed.reads_by_deposed_leaders,
            lease_reads: observed.lease_reads,
            snapshots_taken: observed.snapshots_taken,
            snapshots_installed: observed.snapshots_installed,
            ..counts
        };
        let disks: Vec<_> = self.ids().iter().map(|&id| self.disk(id).stats()).collect();
        figures.torn_saves = disks.iter().map(|disk| disk.torn).sum();
        figures.misdirected_saves = disks.iter().map(|disk| disk.misdirected).sum();
        figures.copies_corrupted = disks.iter().map(|disk| disk.corrupted).sum();
        figures.damaged_copies_read_past =
            disks.iter().map(|disk| disk.damaged_copies_read_past).sum();
        self.count_log_figures(&mut figures);
        figures.fault_windows = on_leader.windows(self);
        figures.fault_windows.extend(probed);
        self.shutdown();
        figures
    }
}
