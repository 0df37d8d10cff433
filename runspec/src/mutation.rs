//! The names of the node's deliberately broken behaviours: what a run asks for with
//! `--mutation NAME`. The node switches them on (`node::MutationSet`, only in a build with the
//! `mutations` feature); here they are only names, so that both builds of the simulation and
//! every command share one type.

use std::fmt;
use std::str::FromStr;

/// One deliberately broken behaviour of the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mutation {
    /// A leader commits an entry from an earlier term by counting replicas (Raft §5.4.2,
    /// Figure 8): a committed entry can later be overwritten.
    CommitOldTermByCounting,
    /// The vote is not persisted: after a restart a node can vote twice in one term, giving two
    /// leaders in that term.
    ForgetVote,
    /// A vote is granted without checking that the candidate's log is at least as up to date
    /// (Raft §5.4.1): a leader can miss committed entries.
    VoteWithoutUpToDateCheck,
    /// A follower truncates its log after `prev_log_index` on a heartbeat even when it matches,
    /// losing entries (a stale or reordered heartbeat erases committed entries).
    TruncateOnMatchingHeartbeat,
    /// A leader that sees a higher term in a reply does not step down.
    NoStepDownOnHigherTermReply,
    /// The ticker polls every 10 ms on a grid shared by all nodes and fires after the fixed
    /// minimum timeout, which erases the randomness of election timeouts: split votes repeat
    /// forever (the lockstep bug fake time exposed in the reference suite).
    TickerLockstep,
    /// Persistence is not atomic and a torn write is accepted on restart: the state is written in
    /// place and a node salvages whatever prefix of it decodes, losing acknowledged entries.
    AcceptTornWrites,
    /// A handler replies before its state change is durable: the persist is deferred to the next
    /// change, so a crash in between forgets a vote or entries the reply promised.
    ReplyBeforePersist,
    /// The key-value state machine applies every command it is handed, even a retry of one it
    /// already applied: a retried append whose first attempt committed is applied twice.
    NoDuplicateSuppression,
    /// ReadIndex without the leadership round: a leader serves a read at its commit index
    /// without first confirming with a majority that it is still leader, so a deposed leader
    /// that has not heard of its successor serves stale reads.
    ReadIndexWithoutRound,
    /// The applier hands entries to the service while holding the node's lock: a service that
    /// calls into the node (`start`) while the apply channel is full deadlocks with it. (The
    /// broken node hands every entry to the applier, as the 6.5840 labs' nodes do; a handler
    /// never delivers on its own thread.)
    ApplyWithLockHeld,
    /// The applier is woken before the commit index advances (in `start`, before the lock is
    /// taken) instead of after: it can look too early, go back to sleep, and miss the commit
    /// (a lost wake-up).
    LostApplierWakeup,
    /// The ticker reads the election deadline under one lock acquisition and starts the election
    /// under the next: a heartbeat that pushed the deadline forward in between is ignored
    /// (check-then-act across a lock release).
    TickerCheckThenAct,
    /// Persist simulates an fsync delay by sleeping while the node's lock is held: every other
    /// thread of the node queues on the lock, nobody is durably blocked, and simulated time can
    /// never reach the sleeper's deadline (the hang of the reference suite).
    SleepInPersist,
    /// A handler that delivers newly committed entries on its own thread does not wake the
    /// applier for what it could not deliver (the apply channel was full, or another thread was
    /// delivering): those entries wait for the next commit, forever if none comes.
    LostDeliveryHandoff,
    /// A follower skips AppendEntries' consistency check (Raft Figure 2, AppendEntries step 2):
    /// it places the entries after `prev_log_index` even when its entry there has another term,
    /// so two logs can hold the same index and term after different histories.
    SkipConsistencyCheck,
    /// Half of an even cluster counts as a majority (`>=` instead of `>`): the two halves of a
    /// partition can each elect a leader and commit, and one of them later loses what it
    /// committed. Harmless in odd clusters, which is why only an even one finds it.
    HalfIsMajority,
    /// Elections start without a pre-vote (thesis §9.6): a follower cut off for a while comes
    /// back with a higher term and deposes a healthy leader. Safe, but disruptive.
    NoPreVote,
    /// A pre-vote is granted to an up-to-date candidate even while this node hears from a
    /// leader (thesis §4.2.3 asks for both: no leader heard within the lease, and the log): a
    /// node cut off from the leader alone wins a pre-vote, raises its term and deposes the
    /// leader when it is reconnected.
    PreVoteIgnoresLease,
    /// A leader's lease lasts a full minimum election timeout of its own clock, without the
    /// drift margin: a leader whose clock runs slow still serves reads after a follower whose
    /// clock runs fast has voted for a successor (skew within the configured bound suffices).
    LeaseWithoutDriftMargin,
    /// A leader that steps down keeps its lease and serves reads from it as a follower: once it
    /// has stepped down it votes, and a successor it voted for commits writes it has not seen.
    LeaseKeptAfterStepDown,
    /// The lease counts from when a heartbeat's answer arrived instead of when the heartbeat was
    /// sent: an answer that was slow to come back (a paused leader, a delayed reply) stretches
    /// the lease past the moment the follower stopped refusing votes.
    LeaseFromAnswerTime,
    /// The key-value snapshot holds the data but not the client sessions (Raft thesis §6.3: the
    /// sessions are part of the state): after a restore, a retry of an append applied before
    /// the snapshot is applied again.
    SnapshotWithoutSessions,
    /// A follower installs a leader's snapshot that is newer than its own snapshot but older
    /// than what it has applied (Raft §7 installs only what the log does not already hold; the
    /// 6.5840 lab 3D's stale InstallSnapshot): the service's state goes back.
    InstallOlderSnapshot,
    /// The compacted log and the snapshot are written apart: the state file first, the snapshot
    /// file a few milliseconds later, with the node's lock released in between. A crash in
    /// between leaves a log that starts after the new snapshot's index next to the old snapshot:
    /// the entries in between are lost.
    SnapshotPersistedApart,
    /// A handler that installed a snapshot hands it to the service at once, even while the
    /// applier is still sending entries it took before the snapshot: those entries can reach
    /// the service after the snapshot that covers them.
    EntriesAfterSnapshot,
    /// A handler that installed a snapshot hands it to the service itself, holding the node's
    /// lock and waiting for room in the apply channel (the 6.5840 lab 3D deadlock): a service
    /// that calls into the node from its apply loop (to see how large the log is, or to take
    /// its own snapshot) while the channel is full waits for that lock forever.
    DeliverSnapshotWithLockHeld,
    /// An operation from a client whose session expired opens a new session instead of being
    /// answered "session expired" (sessions created on first use, Raft thesis §6.3): a retry
    /// whose first attempt was applied before the session expired is applied again.
    ExpiredSessionReopened,
    /// A transaction's reads are served from the leader's state when it proposes the
    /// transaction, not at the transaction's position in the log: another transaction
    /// committed in between is missed by the reads but not by the appends (a read served
    /// outside its transaction's snapshot; Elle's G-single and G2).
    TxnReadsAtProposal,
    /// A leader starts a configuration change before an entry of its own term is committed:
    /// an earlier leader's uncommitted change and this one can form two configurations whose
    /// majorities do not overlap (the single-server change bug, raft-dev 2015).
    ChangeBeforeOwnTermCommit,
    /// A leader starts a configuration change while an earlier one is uncommitted: two
    /// single-server changes in flight add up to a change of two voters at once.
    TwoChangesInFlight,
    /// A learner's copy, vote and answers count toward majorities as a voter's do.
    LearnerCounted,
    /// A node no longer in the configuration still counts toward majorities.
    RemovedVotesCounted,
    /// A leader handing over sends TimeoutNow at once, without bringing the target's log up
    /// to its own first (thesis §3.10): a target behind campaigns, cannot win, and has
    /// deposed the leader; the cluster waits an election timeout with no leader.
    TransferToBehind,
    /// A new leader drops the entries of its log past its commit index, as if what it does not
    /// know committed were the old leader's business (Raft Figure 3, Leader Append-Only: a
    /// leader never overwrites or deletes entries in its log): entries a majority holds, which
    /// the old leader may have committed, are lost.
    LeaderDropsUncommittedTail,
    /// The leader commits only what every node holds, not a majority (Raft §5.3 commits on a
    /// majority): safe, since every majority is covered, but one node down for good stops
    /// every commit. Chaos that heals everything at the end never sees it.
    CommitNeedsEveryNode,
    /// A leader never steps down for lack of a quorum (check-quorum, Raft thesis §6.2, left
    /// out): safe, but a leader that can send and hears nothing (deaf) keeps every follower from
    /// campaigning with its heartbeats, and nothing commits until the fault heals. Chaos that
    /// heals everything at the end never sees it; the availability bound does.
    NoCheckQuorum,
    /// The node writes its state and never makes it durable (an fsync left out, as in a
    /// persister that trusts the page cache): a process crash keeps the writes, but a power
    /// loss takes back votes and entries the node acknowledged (the bug class Jepsen finds with
    /// LazyFS; Raft Figure 2 requires stable storage before answering).
    SkipFsync,
    /// A read of the state that fails (EIO) is taken for a disk with no state, and the node
    /// starts empty: it forgets its vote and its log (a real bug class: an error read as
    /// "not found"). Only read errors kill it.
    ReadErrorAsEmpty,
    /// The leader counts its own copy toward a commit while its write is still being synced
    /// (Raft thesis §10.2.1 lets it send before its own sync, and count itself only after):
    /// with one follower's acknowledgement it commits an entry that a power loss then takes
    /// from the leader, and a majority without it can elect a leader that never had it.
    CountSelfBeforeSync,
    /// The persister keeps two copies of the state and, when both copies' headers name the
    /// same save, takes the first without checking its checksum: a copy corrupted at rest is
    /// served (a record trusted without its checksum).
    TrustRecordWithoutChecksum,
    /// The persister takes the first copy of the state that checks out without comparing its
    /// sequence with the other's: after a misdirected write it is intact but stale, and the
    /// node comes back without the last save it acknowledged.
    ReadFirstGoodCopy,
    /// The persister syncs its file but never the directory that holds it: a power loss takes
    /// the file's entry, and the node comes back with no state at all.
    DirNotSynced,
    /// The write-ahead log rolls over to a new segment without syncing the one it closes: a
    /// power cut then leaves a torn closed segment behind a newer one holding records, which
    /// recovery must refuse as damage, and the node never starts again. (The log had this bug
    /// until its power-cut test found it, storage/tests/power_loss.rs.) Only the log in the
    /// simulation (`--storage log`) and the server have it.
    RollOverUnsynced,
    /// The write-ahead log creates a new segment and syncs its header but never its directory
    /// entry: a power cut takes the segment's name while the closed segment's seal, synced,
    /// names it, and the node refuses to start on a log that lost a file (fsync of a file does
    /// not make its name durable; Pillai et al., OSDI '14).
    SegmentNameUnsynced,
    /// The write-ahead log renames a new snapshot file into place without syncing its bytes
    /// first: a power cut keeps the name and tears the bytes, and the log's record points at a
    /// damaged snapshot (the zero-length files of ext4's delayed allocation, 2009).
    SnapshotUnsynced,
    /// The write-ahead log tries a failed fsync again and believes the second answer: the
    /// kernel dropped the pages it could not write and calls them clean, so the retry succeeds
    /// having written nothing, and a power loss takes back saves the node acknowledged
    /// (PostgreSQL's "fsyncgate", 2018).
    SyncErrorRetried,
    /// A replicator with nothing to send polls again at once instead of waiting to be woken: a
    /// busy loop that only burns a core on real threads, and never lets the node's threads all
    /// block, so fake time stands still (a livelock).
    ReplicatorBusyWaits,
}

impl Mutation {
    /// Every mutation, in a fixed order.
    pub const ALL: [Mutation; 48] = [
        Mutation::CommitOldTermByCounting,
        Mutation::ForgetVote,
        Mutation::VoteWithoutUpToDateCheck,
        Mutation::TruncateOnMatchingHeartbeat,
        Mutation::NoStepDownOnHigherTermReply,
        Mutation::TickerLockstep,
        Mutation::AcceptTornWrites,
        Mutation::ReplyBeforePersist,
        Mutation::NoDuplicateSuppression,
        Mutation::ReadIndexWithoutRound,
        Mutation::ApplyWithLockHeld,
        Mutation::LostApplierWakeup,
        Mutation::TickerCheckThenAct,
        Mutation::SleepInPersist,
        Mutation::LostDeliveryHandoff,
        Mutation::SkipConsistencyCheck,
        Mutation::HalfIsMajority,
        Mutation::NoPreVote,
        Mutation::PreVoteIgnoresLease,
        Mutation::LeaseWithoutDriftMargin,
        Mutation::LeaseKeptAfterStepDown,
        Mutation::LeaseFromAnswerTime,
        Mutation::SnapshotWithoutSessions,
        Mutation::InstallOlderSnapshot,
        Mutation::SnapshotPersistedApart,
        Mutation::EntriesAfterSnapshot,
        Mutation::DeliverSnapshotWithLockHeld,
        Mutation::ExpiredSessionReopened,
        Mutation::LeaderDropsUncommittedTail,
        Mutation::CommitNeedsEveryNode,
        Mutation::NoCheckQuorum,
        Mutation::SkipFsync,
        Mutation::ReadErrorAsEmpty,
        Mutation::CountSelfBeforeSync,
        Mutation::TrustRecordWithoutChecksum,
        Mutation::ReadFirstGoodCopy,
        Mutation::DirNotSynced,
        Mutation::RollOverUnsynced,
        Mutation::SegmentNameUnsynced,
        Mutation::SnapshotUnsynced,
        Mutation::SyncErrorRetried,
        Mutation::TxnReadsAtProposal,
        Mutation::ChangeBeforeOwnTermCommit,
        Mutation::TwoChangesInFlight,
        Mutation::LearnerCounted,
        Mutation::RemovedVotesCounted,
        Mutation::TransferToBehind,
        Mutation::ReplicatorBusyWaits,
    ];

    /// The mutation's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Mutation::CommitOldTermByCounting => "commit-old-term",
            Mutation::ForgetVote => "forget-vote",
            Mutation::VoteWithoutUpToDateCheck => "vote-without-up-to-date-check",
            Mutation::TruncateOnMatchingHeartbeat => "truncate-on-matching-heartbeat",
            Mutation::NoStepDownOnHigherTermReply => "no-step-down-on-higher-term",
            Mutation::TickerLockstep => "ticker-lockstep",
            Mutation::AcceptTornWrites => "accept-torn-writes",
            Mutation::ReplyBeforePersist => "reply-before-persist",
            Mutation::NoDuplicateSuppression => "no-duplicate-suppression",
            Mutation::ReadIndexWithoutRound => "read-index-without-round",
            Mutation::ApplyWithLockHeld => "apply-with-lock-held",
            Mutation::LostApplierWakeup => "lost-applier-wakeup",
            Mutation::TickerCheckThenAct => "ticker-check-then-act",
            Mutation::SleepInPersist => "sleep-in-persist",
            Mutation::LostDeliveryHandoff => "lost-delivery-handoff",
            Mutation::SkipConsistencyCheck => "skip-consistency-check",
            Mutation::HalfIsMajority => "half-is-majority",
            Mutation::NoPreVote => "no-pre-vote",
            Mutation::PreVoteIgnoresLease => "pre-vote-ignores-lease",
            Mutation::LeaseWithoutDriftMargin => "lease-without-drift-margin",
            Mutation::LeaseKeptAfterStepDown => "lease-kept-after-step-down",
            Mutation::LeaseFromAnswerTime => "lease-from-answer-time",
            Mutation::SnapshotWithoutSessions => "snapshot-without-sessions",
            Mutation::InstallOlderSnapshot => "install-older-snapshot",
            Mutation::SnapshotPersistedApart => "snapshot-persisted-apart",
            Mutation::EntriesAfterSnapshot => "entries-after-snapshot",
            Mutation::DeliverSnapshotWithLockHeld => "deliver-snapshot-with-lock-held",
            Mutation::ExpiredSessionReopened => "expired-session-reopened",
            Mutation::LeaderDropsUncommittedTail => "leader-drops-uncommitted-tail",
            Mutation::CommitNeedsEveryNode => "commit-needs-every-node",
            Mutation::NoCheckQuorum => "no-check-quorum",
            Mutation::SkipFsync => "skip-fsync",
            Mutation::ReadErrorAsEmpty => "read-error-as-empty",
            Mutation::CountSelfBeforeSync => "count-self-before-sync",
            Mutation::TrustRecordWithoutChecksum => "trust-record-without-checksum",
            Mutation::ReadFirstGoodCopy => "read-first-good-copy",
            Mutation::DirNotSynced => "dir-not-synced",
            Mutation::RollOverUnsynced => "roll-over-unsynced",
            Mutation::SegmentNameUnsynced => "segment-name-unsynced",
            Mutation::SnapshotUnsynced => "snapshot-unsynced",
            Mutation::SyncErrorRetried => "sync-error-retried",
            Mutation::ReplicatorBusyWaits => "replicator-busy-waits",
            Mutation::TxnReadsAtProposal => "txn-reads-at-proposal",
            Mutation::ChangeBeforeOwnTermCommit => "change-before-own-term-commit",
            Mutation::TwoChangesInFlight => "two-changes-in-flight",
            Mutation::LearnerCounted => "learner-counted",
            Mutation::RemovedVotesCounted => "removed-votes-counted",
            Mutation::TransferToBehind => "transfer-to-behind",
        }
    }
}

impl fmt::Display for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A mutation name that is not known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown mutation {0:?}; known: {known}", known = Mutation::ALL.map(Mutation::name).join(", "))]
pub struct UnknownMutation(pub String);

impl FromStr for Mutation {
    type Err = UnknownMutation;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Mutation::ALL
            .into_iter()
            .find(|mutation| mutation.name() == name)
            .ok_or_else(|| UnknownMutation(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for mutation in Mutation::ALL {
            assert_eq!(mutation.name().parse(), Ok(mutation));
        }
        let error = "no-such-bug".parse::<Mutation>().unwrap_err();
        assert!(error.to_string().contains("commit-old-term"));
    }
}
