//! What a run did: the evidence that it exercised what it claims to, the same for every
//! workload and engine, added up over a range of seeds.

use crate::FaultWindows;
use std::ops::AddAssign;
use std::time::Duration;

/// What a run did. A figure a workload does not produce stays 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunFigures {
    /// Simulated time covered.
    pub simulated: Duration,
    /// Leaders elected (distinct terms with a leader).
    pub leaders_elected: u64,
    /// Highest index applied anywhere (summed over seeds: the sum of each seed's highest).
    pub highest_applied: u64,
    /// Crashes.
    pub crashes: u64,
    /// Crashes of a node whose log held entries not yet known committed.
    pub crashes_mid_replication: u64,
    /// Restarts.
    pub restarts: u64,
    /// Restarts a node refused because its disk could not be read (latent read errors).
    pub refused_starts: u64,
    /// Saves a crash tore (torn writes).
    pub torn_saves: u64,
    /// Saves that wrote one copy of the state over the other (misdirected writes).
    pub misdirected_saves: u64,
    /// Copies of a state corrupted at rest (corruption).
    pub copies_corrupted: u64,
    /// Loads that found one copy of the state damaged or stale and read the other.
    pub damaged_copies_read_past: u64,
    /// Power losses of a node whose state is in the server's log (`--storage log`).
    pub log_power_losses: u64,
    /// Bytes written to a log and not synced that its power losses took back.
    pub log_bytes_lost: u64,
    /// Segments the logs rolled over to.
    pub log_roll_overs: u64,
    /// Symmetric partitions.
    pub partitions: u64,
    /// Partitions that left the leader in a minority.
    pub leader_isolations: u64,
    /// One-way link cuts.
    pub one_way_cuts: u64,
    /// Clock rate changes and jumps.
    pub clock_changes: u64,
    /// Process pauses.
    pub pauses: u64,
    /// Groups of events (a raft round; the events of one instant) after which entries were
    /// committed while some fault was in force.
    pub rounds_committing_under_faults: u64,
    /// Commands offered to nodes (raft workload).
    pub commands_offered: u64,
    /// Commands a node accepted as leader (raft workload).
    pub commands_accepted: u64,
    /// Client operations checked for linearizability (key-value workload).
    pub operations_checked: u64,
    /// Client operations whose outcome stayed unknown (key-value workload).
    pub operations_unknown: u64,
    /// Operations refused because their client's session had expired (key-value workload).
    pub sessions_expired: u64,
    /// Gets served from a node's local state (key-value workload).
    pub local_reads: u64,
    /// Of those, gets served by a node that had been deposed (key-value workload).
    pub reads_by_deposed_leaders: u64,
    /// Gets served under a leader's lease (key-value workload).
    pub lease_reads: u64,
    /// Snapshots services handed their nodes.
    pub snapshots_taken: u64,
    /// Snapshots followers installed from a leader.
    pub snapshots_installed: u64,
    /// Configuration changes a leader appended (learners added, promoted, demoted, removed).
    pub membership_changes: u64,
    /// Transfers of leadership a leader started.
    pub leadership_transfers: u64,
    /// How long each fault on the leader stopped the commits, by kind.
    pub fault_windows: FaultWindows,
}

impl AddAssign<&RunFigures> for RunFigures {
    /// Adds one seed's figures to the totals of a range.
    fn add_assign(&mut self, seed: &RunFigures) {
        let RunFigures {
            simulated,
            leaders_elected,
            highest_applied,
            crashes,
            crashes_mid_replication,
            restarts,
            refused_starts,
            torn_saves,
            misdirected_saves,
            copies_corrupted,
            damaged_copies_read_past,
            log_power_losses,
            log_bytes_lost,
            log_roll_overs,
            partitions,
            leader_isolations,
            one_way_cuts,
            clock_changes,
            pauses,
            rounds_committing_under_faults,
            commands_offered,
            commands_accepted,
            operations_checked,
            operations_unknown,
            sessions_expired,
            local_reads,
            reads_by_deposed_leaders,
            lease_reads,
            snapshots_taken,
            snapshots_installed,
            membership_changes,
            leadership_transfers,
            fault_windows,
        } = seed;
        self.simulated += *simulated;
        self.fault_windows.extend(fault_windows);
        for (total, value) in [
            (&mut self.leaders_elected, leaders_elected),
            (&mut self.highest_applied, highest_applied),
            (&mut self.crashes, crashes),
            (&mut self.crashes_mid_replication, crashes_mid_replication),
            (&mut self.restarts, restarts),
            (&mut self.refused_starts, refused_starts),
            (&mut self.torn_saves, torn_saves),
            (&mut self.misdirected_saves, misdirected_saves),
            (&mut self.copies_corrupted, copies_corrupted),
            (&mut self.damaged_copies_read_past, damaged_copies_read_past),
            (&mut self.log_power_losses, log_power_losses),
            (&mut self.log_bytes_lost, log_bytes_lost),
            (&mut self.log_roll_overs, log_roll_overs),
            (&mut self.partitions, partitions),
            (&mut self.leader_isolations, leader_isolations),
            (&mut self.one_way_cuts, one_way_cuts),
            (&mut self.clock_changes, clock_changes),
            (&mut self.pauses, pauses),
            (
                &mut self.rounds_committing_under_faults,
                rounds_committing_under_faults,
            ),
            (&mut self.commands_offered, commands_offered),
            (&mut self.commands_accepted, commands_accepted),
            (&mut self.operations_checked, operations_checked),
            (&mut self.operations_unknown, operations_unknown),
            (&mut self.sessions_expired, sessions_expired),
            (&mut self.local_reads, local_reads),
            (&mut self.membership_changes, membership_changes),
            (&mut self.leadership_transfers, leadership_transfers),
            (&mut self.reads_by_deposed_leaders, reads_by_deposed_leaders),
            (&mut self.lease_reads, lease_reads),
            (&mut self.snapshots_taken, snapshots_taken),
            (&mut self.snapshots_installed, snapshots_installed),
        ] {
            *total += *value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every figure is added (the destructuring above fails to compile when one is added to the
    /// struct and not to the sum).
    #[test]
    fn totals_add_every_figure() {
        let one = RunFigures {
            simulated: Duration::from_secs(2),
            leaders_elected: 1,
            highest_applied: 2,
            crashes: 3,
            crashes_mid_replication: 4,
            restarts: 5,
            refused_starts: 22,
            torn_saves: 23,
            misdirected_saves: 24,
            copies_corrupted: 25,
            damaged_copies_read_past: 26,
            log_power_losses: 28,
            log_bytes_lost: 29,
            log_roll_overs: 30,
            partitions: 6,
            leader_isolations: 7,
            one_way_cuts: 8,
            clock_changes: 9,
            pauses: 21,
            rounds_committing_under_faults: 10,
            commands_offered: 11,
            commands_accepted: 12,
            operations_checked: 13,
            operations_unknown: 14,
            sessions_expired: 15,
            local_reads: 16,
            reads_by_deposed_leaders: 17,
            lease_reads: 18,
            snapshots_taken: 19,
            snapshots_installed: 20,
            membership_changes: 21,
            leadership_transfers: 27,
            fault_windows: FaultWindows::default(),
        };
        let mut one = one;
        one.fault_windows
            .record("leader crashed", Some(Duration::from_secs(1)));
        let mut totals = RunFigures::default();
        totals += &one;
        totals += &one;
        assert_eq!(totals.simulated, Duration::from_secs(4));
        assert_eq!(totals.snapshots_installed, 40);
        assert_eq!(totals.membership_changes, 42);
        assert_eq!(totals.leadership_transfers, 54);
        assert_eq!(totals.leaders_elected, 2);
        assert_eq!(totals.operations_unknown, 28);
        assert_eq!(totals.refused_starts, 44);
        assert_eq!(totals.torn_saves, 46);
        assert_eq!(totals.log_bytes_lost, 58);
        assert_eq!(
            (
                totals.misdirected_saves,
                totals.copies_corrupted,
                totals.damaged_copies_read_past
            ),
            (48, 50, 52)
        );
        assert_eq!(totals.fault_windows.of("leader crashed").len(), 2);
    }
}
