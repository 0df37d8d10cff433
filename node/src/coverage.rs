//! The node's coverage points: the states a test run should reach now and then, each marked
//! where it holds (`reached(Point::...)`), counted per simulated run by
//! [`threadsim::coverage`] and reported by `interleave chaos` (which points no seed reached,
//! how often the others were). A point nobody reaches is a part of the protocol the run never
//! tested; one that becomes unreachable after a change is a regression of the tests, not only
//! of the code. Outside a simulation marking a point does nothing.

/// A state worth reaching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Point {
    /// A pre-vote refused because the voter heard from a leader within its lease.
    PreVoteRefusedByLease,
    /// A real vote refused, without adopting the term, because the voter heard from a leader
    /// within its lease.
    VoteRefusedByLease,
    /// A vote refused because the candidate's log is behind the voter's (§5.4.1).
    VoteRefusedLogBehind,
    /// A vote refused because the voter already voted for another candidate in the term.
    VoteRefusedAlreadyVoted,
    /// A pre-candidate won its pre-vote and started a real election.
    PreVoteWon,
    /// A candidate deposed by a higher term in a vote reply.
    CandidateDeposedByReply,
    /// A leader elected with entries past its commit index (from earlier terms, Figure 8).
    NewLeaderWithUncommittedTail,
    /// A leader stepped down because a majority stopped answering (check-quorum).
    CheckQuorumStepDown,
    /// AppendEntries of a stale leader (an earlier term) rejected.
    StaleLeaderRejected,
    /// AppendEntries rejected: the follower's log ends before the previous index.
    AppendRejectedLogShort,
    /// AppendEntries rejected: the follower's entry at the previous index has another term.
    AppendRejectedTermMismatch,
    /// A follower removed a conflicting suffix of its log.
    FollowerTruncatedSuffix,
    /// AppendEntries whose previous index the follower has compacted into its snapshot.
    AppendPrevCompacted,
    /// A leader deposed by a higher term in a reply.
    LeaderDeposedByReply,
    /// A reply to a request of an earlier term, ignored.
    ReplyToOldTermIgnored,
    /// A leader moved a follower's next index back past a whole conflicting term at once.
    BacktrackedPastConflictTerm,
    /// An entry of an earlier term on a majority that the leader does not commit by counting
    /// (Raft Figure 8).
    OldTermEntryOnMajorityNotCounted,
    /// Entries of earlier terms committed by an entry of the leader's own term.
    OldTermEntriesCommittedIndirectly,
    /// A log's prefix compacted into the service's snapshot.
    LogCompacted,
    /// A leader sent InstallSnapshot to a follower that needs compacted entries.
    SnapshotSent,
    /// A snapshot that took more than one InstallSnapshot chunk.
    SnapshotSentInChunks,
    /// A follower installed a snapshot and kept the entries after it.
    SnapshotInstalledKeptSuffix,
    /// A follower installed a snapshot in place of its whole log.
    SnapshotInstalledLogReplaced,
    /// InstallSnapshot of a prefix the follower had already committed, ignored.
    SnapshotAlreadyCommitted,
    /// A read served from the leader's state under its lease.
    LeaseReadServed,
    /// A lease read served within the last millisecond of the lease.
    LeaseReadInLastMillisecond,
    /// A lease read refused because the lease had run out.
    LeaseReadExpired,
    /// A read refused because no entry of the leader's term is committed yet.
    ReadRefusedNoCommitInTerm,
    /// A ReadIndex round confirmed by a majority.
    ReadRoundConfirmed,
    /// Reads waiting for a round failed because their leader stepped down.
    ReadsFailedOnStepDown,
    /// A snapshot became due while another thread was delivering entries to the service.
    SnapshotDueWhileDelivering,
    /// The apply channel had no room: committed entries left for the applier thread.
    ApplyChannelFull,
    /// A reply handled late, after the node was paused and resumed.
    ReplyHandledAfterPause,
    /// A retried operation answered from its client session instead of applied again.
    DuplicateSuppressed,
    /// An operation of an expired client session refused.
    SessionExpiredRefused,
    /// A voter started an election on a leader's TimeoutNow (a transfer of leadership).
    TransferElectionStarted,
}

impl Point {
    /// Every point, in a fixed order.
    pub const ALL: [Point; 36] = [
        Point::PreVoteRefusedByLease,
        Point::VoteRefusedByLease,
        Point::VoteRefusedLogBehind,
        Point::VoteRefusedAlreadyVoted,
        Point::PreVoteWon,
        Point::CandidateDeposedByReply,
        Point::NewLeaderWithUncommittedTail,
        Point::CheckQuorumStepDown,
        Point::StaleLeaderRejected,
        Point::AppendRejectedLogShort,
        Point::AppendRejectedTermMismatch,
        Point::FollowerTruncatedSuffix,
        Point::AppendPrevCompacted,
        Point::LeaderDeposedByReply,
        Point::ReplyToOldTermIgnored,
        Point::BacktrackedPastConflictTerm,
        Point::OldTermEntryOnMajorityNotCounted,
        Point::OldTermEntriesCommittedIndirectly,
        Point::LogCompacted,
        Point::SnapshotSent,
        Point::SnapshotSentInChunks,
        Point::SnapshotInstalledKeptSuffix,
        Point::SnapshotInstalledLogReplaced,
        Point::SnapshotAlreadyCommitted,
        Point::LeaseReadServed,
        Point::LeaseReadInLastMillisecond,
        Point::LeaseReadExpired,
        Point::ReadRefusedNoCommitInTerm,
        Point::ReadRoundConfirmed,
        Point::ReadsFailedOnStepDown,
        Point::SnapshotDueWhileDelivering,
        Point::ApplyChannelFull,
        Point::ReplyHandledAfterPause,
        Point::DuplicateSuppressed,
        Point::SessionExpiredRefused,
        Point::TransferElectionStarted,
    ];

    /// The point's name in reports: where it is, then what holds.
    pub fn name(self) -> &'static str {
        match self {
            Point::PreVoteRefusedByLease => "election: pre-vote refused by a lease",
            Point::VoteRefusedByLease => "election: vote refused by a lease",
            Point::VoteRefusedLogBehind => "election: vote refused, candidate's log behind",
            Point::VoteRefusedAlreadyVoted => "election: vote refused, already voted",
            Point::PreVoteWon => "election: pre-vote won",
            Point::CandidateDeposedByReply => "election: candidate deposed by a vote reply",
            Point::NewLeaderWithUncommittedTail => {
                "election: leader elected with uncommitted entries"
            }
            Point::CheckQuorumStepDown => "election: leader stepped down by check-quorum",
            Point::StaleLeaderRejected => "replication: stale leader rejected",
            Point::AppendRejectedLogShort => "replication: rejected, follower's log too short",
            Point::AppendRejectedTermMismatch => "replication: rejected, term mismatch",
            Point::FollowerTruncatedSuffix => "replication: follower truncated a suffix",
            Point::AppendPrevCompacted => "replication: previous index compacted",
            Point::LeaderDeposedByReply => "replication: leader deposed by a reply",
            Point::ReplyToOldTermIgnored => "replication: reply of an earlier term ignored",
            Point::BacktrackedPastConflictTerm => "replication: backtracked past a term",
            Point::OldTermEntryOnMajorityNotCounted => {
                "commit: old-term entry on a majority not counted (Figure 8)"
            }
            Point::OldTermEntriesCommittedIndirectly => {
                "commit: old-term entries committed indirectly"
            }
            Point::LogCompacted => "snapshot: log compacted",
            Point::SnapshotSent => "snapshot: InstallSnapshot sent",
            Point::SnapshotSentInChunks => "snapshot: sent in several chunks",
            Point::SnapshotInstalledKeptSuffix => "snapshot: installed, suffix kept",
            Point::SnapshotInstalledLogReplaced => "snapshot: installed, log replaced",
            Point::SnapshotAlreadyCommitted => "snapshot: already committed, ignored",
            Point::LeaseReadServed => "lease: read served",
            Point::LeaseReadInLastMillisecond => "lease: read in the lease's last millisecond",
            Point::LeaseReadExpired => "lease: read refused, lease expired",
            Point::ReadRefusedNoCommitInTerm => "read: refused, nothing committed in the term",
            Point::ReadRoundConfirmed => "read-index: round confirmed",
            Point::ReadsFailedOnStepDown => "read-index: reads failed at step-down",
            Point::SnapshotDueWhileDelivering => "shell: snapshot due while delivering",
            Point::ApplyChannelFull => "shell: apply channel full",
            Point::ReplyHandledAfterPause => "shell: reply handled after a pause",
            Point::DuplicateSuppressed => "kv: retry answered from its session",
            Point::SessionExpiredRefused => "kv: operation of an expired session refused",
            Point::TransferElectionStarted => "transfer: election started by TimeoutNow",
        }
    }

    /// Whether only a run whose services snapshot reaches the point.
    pub fn needs_snapshots(self) -> bool {
        matches!(
            self,
            Point::LogCompacted
                | Point::SnapshotSent
                | Point::SnapshotSentInChunks
                | Point::SnapshotInstalledKeptSuffix
                | Point::SnapshotInstalledLogReplaced
                | Point::SnapshotAlreadyCommitted
                | Point::AppendPrevCompacted
                | Point::SnapshotDueWhileDelivering
        )
    }

    /// Whether only a key-value run serving reads by lease reaches the point.
    pub fn needs_lease_reads(self) -> bool {
        matches!(
            self,
            Point::LeaseReadServed | Point::LeaseReadInLastMillisecond | Point::LeaseReadExpired
        )
    }

    /// Whether only a run that changes membership (and hands leadership over) reaches it.
    pub fn needs_membership(self) -> bool {
        self == Point::TransferElectionStarted
    }

    /// Whether only a run that pauses nodes reaches the point.
    pub fn needs_pauses(self) -> bool {
        self == Point::ReplyHandledAfterPause
    }

    /// Whether only a run with the key-value service reaches the point (reads, leases,
    /// sessions, and anything that needs a service that snapshots its state).
    pub fn needs_kv(self) -> bool {
        matches!(
            self,
            Point::LeaseReadServed
                | Point::LeaseReadInLastMillisecond
                | Point::LeaseReadExpired
                | Point::ReadRefusedNoCommitInTerm
                | Point::ReadRoundConfirmed
                | Point::ReadsFailedOnStepDown
                | Point::DuplicateSuppressed
                | Point::SessionExpiredRefused
                // The raft workload's service keeps a 16-byte state (its snapshots are one
                // chunk) and takes each entry at once (its node's applier never waits long
                // enough for a snapshot to arrive meanwhile).
                | Point::SnapshotSentInChunks
                | Point::SnapshotDueWhileDelivering
        )
    }
}

/// Marks `point` reached in the current simulated run.
pub fn reached(point: Point) {
    threadsim::coverage::reached(point.name());
}

/// Marks `point` reached if `condition` holds; returns the condition.
pub fn sometimes(condition: bool, point: Point) -> bool {
    threadsim::coverage::sometimes(condition, point.name())
}

#[cfg(all(test, not(any(loom, shuttle))))]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_point_has_its_own_name() {
        let names: BTreeSet<&str> = Point::ALL.iter().map(|point| point.name()).collect();
        assert_eq!(names.len(), Point::ALL.len());
    }

    /// Every `.rs` file of the node's sources but `coverage.rs` and `fault_points.rs`, joined.
    pub(crate) fn node_sources() -> String {
        let mut sources = String::new();
        let mut folders = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).expect("the node's sources") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|ext| ext == "rs")
                    && !path.ends_with("coverage.rs")
                    && !path.ends_with("fault_points.rs")
                {
                    sources.push_str(&std::fs::read_to_string(&path).expect("a source file"));
                }
            }
        }
        sources
    }

    /// Every point is marked somewhere in the node's code (a point in the list that no code
    /// marks could never be reached, and would fail every coverage gate for nothing).
    #[test]
    fn every_point_is_marked_in_the_code() {
        let sources = node_sources();
        for point in Point::ALL {
            let marked = format!("Point::{point:?}");
            assert!(sources.contains(&marked), "{marked} is marked nowhere");
        }
    }
}
