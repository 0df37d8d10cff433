//! How every simulated run ends, whatever its workload (raft chaos, key-value, list-append):
//! every fault healed and every crashed node restarted ([`heal_everything`]), an entry the
//! healed cluster must commit ([`commit_after_healing`]), the snapshot policy
//! ([`Cluster::check_snapshot_policy`]), the two probes where they fit ([`probe_the_end`]),
//! and what the run amounted to read off the cluster (what the invariants observed, the faults'
//! windows on the leader, the disks' and logs' figures, the simulated time), and the cluster
//! shut down ([`finish_run`]). The workloads differ in their clients, their timelines and their
//! checkers, not in this.

use crate::cluster::{Cluster, Restarted};
use crate::leader_faults::LeaderFaults;
use crate::runner::Sim;
use crate::{availability_probe, non_disruption_probe};
use node::{Command, NodeId};
use runspec::{FaultMix, FaultWindows, RunFigures};
use threadsim::Instant;

/// Heals what the run's faults left: every link, pause and message loss, the disks' pending
/// faults (`faults` says which there may be), and every crashed node but those `staying_down`
/// restarted (a node whose disk's read failed refuses once and reads it at the next try); the
/// restarts counted in `report`.
pub fn heal_everything(
    cluster: &Cluster,
    faults: FaultMix,
    staying_down: &[NodeId],
    report: &mut RunFigures,
) {
    let ids = cluster.ids();
    cluster.heal();
    cluster.resume_every_paused_node();
    cluster.set_unreliable(false);
    for &id in &ids {
        if faults.torn_writes {
            cluster.end_torn_save(id);
        }
        if faults.power_loss {
            cluster.end_power_cut_in_sync(id);
            cluster.end_sync_failure(id);
            cluster.end_disk_full(id);
        }
        if faults.misdirected_writes {
            cluster.end_misdirected_save(id);
        }
    }
    for &id in &ids {
        if cluster.is_running(id) || staying_down.contains(&id) {
            continue;
        }
        for attempt in 0.. {
            report.restarts += 1;
            let restarted = cluster
                .restart_unless_unreadable(id)
                .unwrap_or_else(|error| panic!("{id} cannot restart: {error}"));
            if restarted == Restarted::Running {
                break;
            }
            report.refused_starts += 1;
            assert!(
                attempt < 1,
                "{id} refused to start twice: a read error is transient"
            );
        }
    }
}

/// The healed cluster commits `command` on `live` nodes (with membership changes, on every
/// member of its configuration: a node outside it applies nothing), or the run fails: a
/// liveness failure after 10 s of simulated time.
pub fn commit_after_healing(cluster: &Cluster, faults: FaultMix, live: usize, command: Command) {
    if faults.membership {
        cluster.one_on_every_member(command);
    } else {
        cluster.one(command, live, true);
    }
}

/// Whether a run with `faults` on `nodes` nodes ends with the two probes of the healed cluster
/// (non-disruption, then availability), whatever its workload. Not in liveness mode, whose
/// minority is already down for good (one more fault could leave no majority at all); not with
/// membership changes (the probes cut nodes off by their ids, as if every node voted, and with
/// changes the voters are some of the nodes); not on two nodes, where one cut leaves no majority.
pub fn ends_with_probes(faults: FaultMix, nodes: usize) -> bool {
    !faults.liveness && !faults.membership && nodes >= 3
}

/// The two probes of the healed, caught-up cluster, where they fit ([`ends_with_probes`]): a
/// follower cut off must not disrupt the leader ([`non_disruption_probe`]), and one fault on the
/// leader must cost no more than the service levels allow ([`availability_probe`]). The
/// windows they measured.
pub fn probe_the_end(sim: &Sim, cluster: &Cluster, faults: FaultMix) -> FaultWindows {
    let mut probed = FaultWindows::default();
    if ends_with_probes(faults, cluster.ids().len()) {
        non_disruption_probe::probe(sim, cluster);
        availability_probe::probe(sim, cluster, &mut probed);
    }
    probed
}

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
