//! The catalogue: every broken variant, the real bug it models, the detectors that must kill it
//! and what its failure says. The one list the kill matrix, the tests and the docs are checked
//! against.

use super::detector::Detector;
use super::detector::{
    chaos_kv, chaos_kv_misses, chaos_kv_snapshots, CHAOS_LIST_APPEND, CHAOS_RAFT,
    CHAOS_RAFT_CORRUPTION, CHAOS_RAFT_LIVENESS, CHAOS_RAFT_LOG_POWER_LOSS, CHAOS_RAFT_MEMBERSHIP,
    CHAOS_RAFT_MISDIRECTED_WRITES, CHAOS_RAFT_MISSES, CHAOS_RAFT_POWER_LOSS,
    CHAOS_RAFT_READ_ERRORS, CHAOS_RAFT_SNAPSHOTS_MISSES, CHAOS_RAFT_TORN_WRITES,
};
use crate::runner::Sim;
use crate::scenarios;
use node::kv::ReadMode;
use node::{Mutation, MutationSet};

/// What is broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// A node or service mutation.
    Node(Mutation),
    /// The key-value service's unsafe local reads (a read mode, not a mutation).
    UnsafeLocalReads,
}

impl Broken {
    /// The variant's name.
    pub fn name(self) -> &'static str {
        match self {
            Broken::Node(mutation) => mutation.name(),
            Broken::UnsafeLocalReads => "unsafe-local-reads",
        }
    }
}

/// One row of the catalogue.
#[derive(Clone, Debug)]
pub struct Variant {
    /// What is broken.
    pub broken: Broken,
    /// The real bug it models, with a reference.
    pub models: &'static str,
    /// The detectors that apply.
    pub detectors: Vec<Detector>,
    /// What a simulation, key-value or chaos detector's failure says when it kills this variant
    /// for the reason it models (one of these, in its first line); empty when only loom and
    /// shuttle kill it.
    pub signature: &'static [&'static str],
}

impl Variant {
    /// Whether `failure` (a first line) is this variant's failure, not another one.
    pub fn recognises(&self, failure: &str) -> bool {
        self.signature.iter().any(|text| failure.contains(text))
    }
}

fn transfer_to_a_follower_behind(sim: &Sim, mutations: &MutationSet) {
    scenarios::transfer_to_a_follower_behind(sim, mutations);
}
fn deaf_leader_replaced_within_its_bound(sim: &Sim, mutations: &MutationSet) {
    scenarios::availability::deaf_leader_replaced_within_its_bound(sim, mutations);
}
fn lease_after_a_step_down(sim: &Sim, mutations: &MutationSet) {
    scenarios::lease_after_a_step_down(sim, mutations);
}
fn figure8_constructed(sim: &Sim, mutations: &MutationSet) {
    scenarios::figure8_constructed(sim, mutations);
}
fn vote_storm(sim: &Sim, mutations: &MutationSet) {
    scenarios::vote_storm(sim, 60, mutations);
}
fn long_reordering(sim: &Sim, mutations: &MutationSet) {
    scenarios::long_reordering(sim, mutations);
}
fn repeated_leader_crashes(sim: &Sim, mutations: &MutationSet) {
    scenarios::repeated_leader_crashes(sim, 20, mutations);
}
fn change_before_an_own_term_commit(sim: &Sim, mutations: &MutationSet) {
    scenarios::change_before_an_own_term_commit(sim, mutations);
}
fn torn_persistence(sim: &Sim, mutations: &MutationSet) {
    scenarios::torn_persistence(sim, mutations);
}
fn halves_of_an_even_cluster(sim: &Sim, mutations: &MutationSet) {
    scenarios::halves_of_an_even_cluster(sim, mutations);
}
fn rejoining_follower(sim: &Sim, mutations: &MutationSet) {
    scenarios::rejoining_follower(sim, mutations);
}
fn follower_cut_off_from_the_leader(sim: &Sim, mutations: &MutationSet) {
    scenarios::follower_cut_off_from_the_leader(sim, mutations);
}

/// Every broken variant, one line each.
pub fn catalogue() -> Vec<Variant> {
    use Detector::*;
    let node = Broken::Node;
    vec![
        Variant {
            broken: node(Mutation::CommitOldTermByCounting),
            models: "commit of an old-term entry by counting replicas (Raft §5.4.2, Figure 8)",
            detectors: vec![Scenario { name: "figure 8 (constructed)", run: figure8_constructed, seeds: 20 }, CHAOS_RAFT],
            signature: &["invariant violated"],
        },
        Variant {
            broken: node(Mutation::ForgetVote),
            models: "the vote is not persisted; a restarted node votes twice in a term (Raft Figure 2: persist votedFor)",
            // Vote durability catches the forgotten vote at the voter's first restart.
            detectors: vec![Scenario { name: "vote storm", run: vote_storm, seeds: 60 }, CHAOS_RAFT],
            signature: &["Election Safety", "Vote durability"],
        },
        Variant {
            broken: node(Mutation::VoteWithoutUpToDateCheck),
            models: "vote granted without the up-to-date check (Raft §5.4.1)",
            detectors: vec![CHAOS_RAFT],
            signature: &["invariant violated"],
        },
        Variant {
            broken: node(Mutation::TruncateOnMatchingHeartbeat),
            models: "a follower truncates on a matching heartbeat (6.5840 lab 3B pitfall, Raft Figure 2 AppendEntries step 3)",
            detectors: vec![Scenario { name: "long reordering", run: long_reordering, seeds: 30 }, CHAOS_RAFT],
            signature: &["invariant violated", "failed to reach agreement"],
        },
        Variant {
            broken: node(Mutation::NoStepDownOnHigherTermReply),
            models: "a leader ignores a higher term in a reply (Raft Figure 2, rules for all servers)",
            detectors: vec![CHAOS_RAFT],
            signature: &["in a reply but stayed in"],
        },
        Variant {
            broken: node(Mutation::TickerLockstep),
            models: "polling on a shared grid erases election randomness (split votes forever; Raft §5.2)",
            detectors: vec![Scenario { name: "repeated leader crashes", run: repeated_leader_crashes, seeds: 10 }, CHAOS_RAFT],
            signature: &["liveness"],
        },
        Variant {
            broken: node(Mutation::AcceptTornWrites),
            models: "non-atomic persistence and a node that trusts a torn write (Alagappan et al., OSDI '16)",
            detectors: vec![Scenario { name: "torn persistence", run: torn_persistence, seeds: 30 }, CHAOS_RAFT_TORN_WRITES, CHAOS_RAFT_MISSES],
            signature: &["invariant violated", "failed to reach agreement"],
        },
        Variant {
            broken: node(Mutation::ReplyBeforePersist),
            models: "a vote or append answered before it is durable (Raft Figure 2: persist before responding)",
            detectors: vec![Loom { binary: "persist_path", test: "a_node_that_replies_before_persisting_is_rejected" }, CHAOS_RAFT],
            signature: &["invariant violated", "failed to reach agreement"],
        },
        Variant {
            broken: Broken::UnsafeLocalReads,
            models: "a deposed leader serves reads from local state (Raft thesis §6.4; etcd issue 741)",
            detectors: vec![Kv { read_mode: ReadMode::UnsafeLocal, seeds: 5 }, chaos_kv(ReadMode::UnsafeLocal)],
            signature: &["NotLinearizable"],
        },
        Variant {
            broken: node(Mutation::ReadIndexWithoutRound),
            models: "ReadIndex without the heartbeat round that confirms leadership (Raft thesis §6.4 step 3)",
            detectors: vec![Kv { read_mode: ReadMode::ReadIndex, seeds: 5 }, chaos_kv(ReadMode::ReadIndex)],
            signature: &["NotLinearizable"],
        },
        Variant {
            broken: node(Mutation::LeaseWithoutDriftMargin),
            models: "a lease that lasts a full election timeout, with no margin for clock drift (Raft thesis §6.4.1)",
            detectors: vec![LeaseHunt { seeds: 5 }, chaos_kv_misses(ReadMode::Lease)],
            signature: &["NotLinearizable"],
        },
        Variant {
            broken: node(Mutation::LeaseKeptAfterStepDown),
            models: "a lease that outlives the leadership it was granted to: a deposed leader serves stale reads (Raft thesis §6.4.1)",
            detectors: vec![Scenario { name: "lease after a step-down", run: lease_after_a_step_down, seeds: 5 }, chaos_kv_misses(ReadMode::Lease)],
            signature: &["stale read", "NotLinearizable"],
        },
        Variant {
            broken: node(Mutation::LeaseFromAnswerTime),
            models: "a lease counted from when the heartbeat's answer arrived, not when it was sent (Raft thesis §6.4.1)",
            detectors: vec![LeaseHunt { seeds: 5 }, chaos_kv(ReadMode::Lease)],
            signature: &["NotLinearizable"],
        },
        Variant {
            broken: node(Mutation::NoDuplicateSuppression),
            models: "retries applied twice without client sessions (Raft thesis §6.3)",
            detectors: vec![Kv { read_mode: ReadMode::Log, seeds: 5 }, chaos_kv(ReadMode::Log)],
            signature: &["NotLinearizable"],
        },
        Variant {
            broken: node(Mutation::ApplyWithLockHeld),
            models: "the applier blocks on the service holding the node's lock (6.5840 lab 3 deadlock)",
            detectors: vec![
                Loom { binary: "apply_path", test: "an_applier_that_sends_with_the_lock_held_deadlocks_with_the_service" },
                Shuttle { test: "an_applier_blocked_on_the_service_with_the_node_lock_held_deadlocks_the_kv_store" },
                chaos_kv(ReadMode::ReadIndex),
            ],
            signature: &["deadlock"],
        },
        Variant {
            broken: node(Mutation::LostApplierWakeup),
            models: "notify before the state change: a lost wake-up (condition-variable misuse)",
            detectors: vec![Loom { binary: "apply_path", test: "a_wakeup_sent_before_the_commit_is_lost" }, CHAOS_RAFT],
            signature: &["failed to reach agreement"],
        },
        Variant {
            broken: node(Mutation::TickerCheckThenAct),
            models: "check-then-act across a lock release in the election timer",
            detectors: vec![
                Loom { binary: "ticker_path", test: "a_ticker_that_checks_then_acts_across_a_lock_release_is_rejected" },
                Shuttle { test: "a_ticker_that_checks_then_acts_is_found" },
                CHAOS_RAFT,
            ],
            // Chaos's end probe finds its liveness failure first: an election deadline acted on
            // after it moved leaves the cluster without a leader past the probe's bound.
            signature: &["pushed the deadline", "past its bound"],
        },
        Variant {
            broken: node(Mutation::SleepInPersist),
            models: "an fsync delay slept while holding the node's lock (the hang of the reference Go suite)",
            detectors: vec![Shuttle { test: "sleeping_in_persist_with_the_lock_held_is_a_deadlock_naming_the_threads" }, CHAOS_RAFT],
            signature: &["deadlock"],
        },
        Variant {
            broken: node(Mutation::SkipConsistencyCheck),
            models: "a follower skips AppendEntries' consistency check (Raft Figure 2, AppendEntries step 2; §5.3)",
            detectors: vec![CHAOS_RAFT],
            signature: &["Log Matching", "State Machine Safety"],
        },
        Variant {
            broken: node(Mutation::LostDeliveryHandoff),
            models: "a handler delivers what fits and strands the rest (a lost hand-off to the applier)",
            // Chaos draws its apply channel's capacity (1 to 64): with a small one the
            // stranded entries are never applied, and the cluster cannot agree at the end.
            detectors: vec![Loom { binary: "apply_path", test: "a_handler_that_strands_what_it_cannot_deliver_is_rejected" }, CHAOS_RAFT],
            signature: &["failed to reach agreement"],
        },
        Variant {
            broken: node(Mutation::HalfIsMajority),
            models: "half of an even cluster counted as a majority (`>=` for `>`; Raft §5.2): two leaders, two histories",
            detectors: vec![Scenario { name: "halves of an even cluster", run: halves_of_an_even_cluster, seeds: 10 }, CHAOS_RAFT_MISSES],
            signature: &["invariant violated", "leaders"],
        },
        Variant {
            broken: node(Mutation::NoPreVote),
            models: "elections without pre-vote: a rejoining node deposes a healthy leader (thesis §9.6)",
            // Chaos's end probe makes a node deaf: without pre-vote its elections depose every
            // leader, for good.
            detectors: vec![Scenario { name: "rejoining follower", run: rejoining_follower, seeds: 10 }, CHAOS_RAFT],
            signature: &["disrupted", "past its bound"],
        },
        Variant {
            broken: node(Mutation::PreVoteIgnoresLease),
            models: "pre-votes granted while a leader is heard: a node cut off from the leader alone deposes it (thesis §4.2.3)",
            // Chaos's end cuts a follower off from the leader alone (`non_disruption_probe`).
            detectors: vec![Scenario { name: "follower cut off from the leader", run: follower_cut_off_from_the_leader, seeds: 10 }, CHAOS_RAFT],
            signature: &["disrupted"],
        },
        Variant {
            broken: node(Mutation::SnapshotWithoutSessions),
            models: "a snapshot without the client sessions: retries applied again after a restore (Raft thesis §6.3; 6.5840 lab 4B)",
            detectors: vec![chaos_kv_snapshots(ReadMode::Log)],
            signature: &["Snapshot agreement"],
        },
        Variant {
            broken: node(Mutation::InstallOlderSnapshot),
            models: "a follower installs a snapshot older than what it applied: its state goes back (Raft §7; 6.5840 lab 3D)",
            detectors: vec![chaos_kv_snapshots(ReadMode::Log)],
            signature: &["went back", "after applying"],
        },
        Variant {
            broken: node(Mutation::SnapshotPersistedApart),
            models: "the compacted log and the snapshot written apart: a crash in between loses entries (Raft §7: write them together)",
            detectors: vec![chaos_kv_snapshots(ReadMode::Log)],
            signature: &["Snapshot agreement", "holds the state at another index"],
        },
        Variant {
            broken: node(Mutation::EntriesAfterSnapshot),
            models: "a snapshot handed over while the applier still sends older entries: they arrive after it (6.5840 lab 3D)",
            detectors: vec![
                Loom { binary: "snapshot_path", test: "a_snapshot_handed_over_while_the_applier_still_sends_older_entries_is_rejected" },
                CHAOS_RAFT_SNAPSHOTS_MISSES,
            ],
            signature: &[],
        },
        Variant {
            broken: node(Mutation::DeliverSnapshotWithLockHeld),
            models: "InstallSnapshot sends to the service holding the node's lock while the service calls into the node (6.5840 lab 3D deadlock)",
            detectors: vec![
                Loom { binary: "snapshot_path", test: "a_handler_that_delivers_a_snapshot_holding_the_lock_deadlocks_with_the_service" },
                CHAOS_RAFT_SNAPSHOTS_MISSES,
            ],
            signature: &[],
        },
        Variant {
            broken: node(Mutation::ExpiredSessionReopened),
            models: "an expired client session opened again by the client's next operation (sessions created on first use): a retry applied before the expiry is applied again (Raft thesis §6.3)",
            detectors: vec![SessionChurn { seeds: 5 }, chaos_kv_misses(ReadMode::Log)],
            signature: &["NotLinearizable"],
        },
        Variant {
            broken: node(Mutation::LeaderDropsUncommittedTail),
            models: "a new leader drops the entries past its commit index, which the old leader may have committed (Raft Figure 3, Leader Append-Only)",
            detectors: vec![CHAOS_RAFT],
            signature: &["Leader Append-Only"],
        },
        Variant {
            broken: node(Mutation::CommitNeedsEveryNode),
            models: "the leader commits only what every node holds, not a majority (Raft §5.3): safe, but one node down for good stops every commit",
            detectors: vec![CHAOS_RAFT_LIVENESS, CHAOS_RAFT],
            signature: &["failed to reach agreement", "past its bound"],
        },
        Variant {
            broken: node(Mutation::NoCheckQuorum),
            models: "a leader never steps down for lack of a quorum (Raft thesis §6.2 check-quorum left out): safe, but a deaf leader's heartbeats hold its followers and nothing commits until the fault heals (chaos's liveness mode leaves the leader deaf for good at times)",
            detectors: vec![Scenario { name: "deaf leader within its bound", run: deaf_leader_replaced_within_its_bound, seeds: 3 }, CHAOS_RAFT_LIVENESS, CHAOS_RAFT],
            signature: &["past its bound", "failed to reach agreement"],
        },
        Variant {
            broken: node(Mutation::SkipFsync),
            models: "the state is written but never synced: a power loss takes back votes and entries the node acknowledged (Raft Figure 2; Jepsen's LazyFS finds it)",
            detectors: vec![CHAOS_RAFT_POWER_LOSS, CHAOS_RAFT_MISSES],
            signature: &["invariant violated"],
        },
        Variant {
            broken: node(Mutation::CountSelfBeforeSync),
            models: "the leader sends its new entries while its own copy is being synced (Raft thesis §10.2.1) but counts that copy toward their commit at once: a power loss on the leader takes back an entry committed with one follower",
            detectors: vec![CHAOS_RAFT_POWER_LOSS, CHAOS_RAFT_MISSES],
            signature: &["invariant violated"],
        },
        Variant {
            broken: node(Mutation::ReadErrorAsEmpty),
            models: "a read of the state that fails (EIO) is taken for an empty disk: the node starts with no vote and no log, having forgotten what it acknowledged (an error read as not-found)",
            detectors: vec![CHAOS_RAFT_READ_ERRORS, CHAOS_RAFT_MISSES],
            signature: &["invariant violated"],
        },
        Variant {
            broken: node(Mutation::TrustRecordWithoutChecksum),
            models: "of two copies of the state whose headers agree, the first is read without its checksum: a bit flipped at rest is served (a record trusted without its checksum; TigerBeetle's storage fault model)",
            detectors: vec![CHAOS_RAFT_CORRUPTION, CHAOS_RAFT_MISSES],
            signature: &["invariant violated", "cannot restart"],
        },
        Variant {
            broken: node(Mutation::ReadFirstGoodCopy),
            models: "the first copy of the state that checks out is read, its sequence never compared: a misdirected write leaves it intact but stale, and the node forgets a save it acknowledged (checksums do not catch misdirected writes)",
            detectors: vec![CHAOS_RAFT_MISDIRECTED_WRITES, CHAOS_RAFT_MISSES],
            signature: &["invariant violated"],
        },
        Variant {
            broken: node(Mutation::DirNotSynced),
            models: "the state file is synced but its directory never is: a power loss takes the file's entry and the node comes back empty (fsync of the file does not make its name durable; Pillai et al., OSDI '14)",
            detectors: vec![CHAOS_RAFT_POWER_LOSS, CHAOS_RAFT_MISSES],
            signature: &["invariant violated"],
        },
        Variant {
            broken: node(Mutation::RollOverUnsynced),
            models: "the write-ahead log rolls over to a new segment without syncing the one it closes: a power cut leaves a torn closed segment behind a newer one that holds records, and recovery refuses the log, so the node never starts again (this log's own bug, found by its power-cut test)",
            detectors: vec![CHAOS_RAFT_LOG_POWER_LOSS, CHAOS_RAFT_MISSES],
            signature: &["cannot restart", "invariant violated"],
        },
        Variant {
            broken: node(Mutation::SegmentNameUnsynced),
            models: "the write-ahead log syncs a new segment's header but never its directory entry: a power cut takes the segment's name while the closed segment's seal names it, and the node refuses a log that lost a file (fsync of a file does not make its name durable; Pillai et al., OSDI '14)",
            detectors: vec![CHAOS_RAFT_LOG_POWER_LOSS, CHAOS_RAFT_MISSES],
            signature: &["cannot restart", "invariant violated"],
        },
        Variant {
            broken: node(Mutation::SnapshotUnsynced),
            models: "the write-ahead log renames a new snapshot file into place before its bytes are synced: a power cut keeps the name and tears the bytes, and the log points at a damaged snapshot (ext4's zero-length files after delayed allocation, 2009)",
            detectors: vec![CHAOS_RAFT_LOG_POWER_LOSS, CHAOS_RAFT_MISSES],
            signature: &["cannot restart", "invariant violated"],
        },
        Variant {
            broken: node(Mutation::SyncErrorRetried),
            models: "the write-ahead log tries a failed fsync again and believes the second answer: the kernel dropped the pages it could not write and calls them clean, so the retry writes nothing and a power loss takes back acknowledged saves (PostgreSQL's fsyncgate, 2018)",
            detectors: vec![CHAOS_RAFT_LOG_POWER_LOSS, CHAOS_RAFT_MISSES],
            signature: &["cannot restart", "invariant violated"],
        },
        Variant {
            broken: node(Mutation::TxnReadsAtProposal),
            models: "a transaction's reads served from the leader's state when it is proposed, not at its position in the log: a transaction committed in between is missed by the reads, not by the appends (reads outside the transaction's snapshot; Elle's G-single)",
            detectors: vec![Transactions { seeds: 5 }, CHAOS_LIST_APPEND],
            signature: &["transactions not-serializable"],
        },
        Variant {
            broken: node(Mutation::ChangeBeforeOwnTermCommit),
            models: "a configuration change started before an entry of the leader's term commits: an uncommitted change of an earlier leader and this one are two voters apart, and their majorities need not meet (the single-server change bug, Ongaro, raft-dev 2015)",
            detectors: vec![
                Scenario { name: "single-server change bug", run: change_before_an_own_term_commit, seeds: 3 },
                CHAOS_RAFT_MEMBERSHIP,
            ],
            signature: &["Configuration overlap", "Election Safety", "Leader Completeness"],
        },
        Variant {
            broken: node(Mutation::TwoChangesInFlight),
            models: "a second configuration change started while the first is uncommitted: together they move two voters at once (Raft thesis §4.1: one change at a time)",
            detectors: vec![CHAOS_RAFT_MEMBERSHIP],
            signature: &["Configuration overlap", "Election Safety", "Leader Completeness"],
        },
        Variant {
            broken: node(Mutation::LearnerCounted),
            models: "a learner's copy and vote counted toward majorities as a voter's (etcd and TiKV learners count in no quorum)",
            detectors: vec![CHAOS_RAFT_MEMBERSHIP],
            signature: &["Leader Completeness", "Election Safety", "State Machine Safety", "Configuration overlap"],
        },
        Variant {
            broken: node(Mutation::RemovedVotesCounted),
            models: "a node outside the configuration still asked for its vote and counted (a stale peer list after a removal)",
            detectors: vec![CHAOS_RAFT_MEMBERSHIP],
            signature: &["Leader Completeness", "Election Safety", "State Machine Safety", "Configuration overlap"],
        },
        Variant {
            broken: node(Mutation::TransferToBehind),
            models: "TimeoutNow sent as soon as a transfer is asked for, before the target's log has caught up: the target campaigns behind, cannot win, and its term has deposed the leader (thesis §3.10: the leader brings the target up to date first)",
            detectors: vec![
                Scenario { name: "transfer to a follower behind", run: transfer_to_a_follower_behind, seeds: 3 },
                CHAOS_RAFT_MEMBERSHIP,
            ],
            signature: &["told to take over", "did not land"],
        },
        Variant {
            broken: node(Mutation::ReplicatorBusyWaits),
            models: "a replicator with nothing to send polls again at once instead of waiting to be woken: harmless-looking on real threads (a core burnt), but the node's threads never all block (a busy loop; under fake time, a livelock)",
            detectors: vec![CHAOS_RAFT],
            signature: &["livelock"],
        },
    ]
}
