//! How every simulated run ends, whatever its workload (raft chaos, key-value, list-append):
//! after the snapshot policy ([`Cluster::check_snapshot_policy`]), what the run amounted to read
//! off the cluster (what the invariants observed, the faults' windows on the leader, the disks'
//! and logs' figures, the simulated time), and the cluster shut down. The workloads differ in
//! their clients, their timelines and their checkers, not in this.

use crate::cluster::Cluster;
use crate::leader_faults::LeaderFaults;
use runspec::{FaultWindows, RunFigures};
use threadsim::Instant;

/// What the run that began at `started` amounted to: `counts` (what its timeline did) with
/// what the invariants observed, each fault's window (`on_leader`'s, and those the run's own
/// probes measured, `probed`), the disks' and logs' figures and the simulated time. Shuts
/// the cluster down: nothing runs on it after.
pub fn finish_run(
    cluster: &Cluster,
    started: Instant,
    on_leader: &LeaderFaults,
    probed: &FaultWindows,
    counts: RunFigures,
) -> RunFigures {
    let observed = cluster.invariants().observed();
    let now = cluster.clock().now();
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
    let disks: Vec<_> = cluster
        .ids()
        .iter()
        .map(|&id| cluster.disk(id).stats())
        .collect();
    figures.torn_saves = disks.iter().map(|disk| disk.torn).sum();
    figures.misdirected_saves = disks.iter().map(|disk| disk.misdirected).sum();
    figures.copies_corrupted = disks.iter().map(|disk| disk.corrupted).sum();
    figures.damaged_copies_read_past = disks.iter().map(|disk| disk.damaged_copies_read_past).sum();
    cluster.count_log_figures(&mut figures);
    figures.fault_windows = on_leader.windows(cluster);
    figures.fault_windows.extend(probed);
    cluster.shutdown();
    figures
}
