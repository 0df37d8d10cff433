//! The RPCs between nodes.

use crate::{Entry, LogIndex, NodeId, Term};

/// A candidate asks for a vote (Raft Figure 2, RequestVote).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestVoteArgs {
    /// The candidate's term.
    pub term: Term,
    /// The candidate.
    pub candidate: NodeId,
    /// Index of the candidate's last log entry.
    pub last_log_index: LogIndex,
    /// Term of the candidate's last log entry.
    pub last_log_term: Term,
    /// A pre-vote (Raft thesis §9.6): "would you vote for me in `term`?", asked before starting
    /// an election. Answering changes nothing, so a node that cannot win never bumps terms.
    pub pre_vote: bool,
    /// The election was started by a [`TimeoutNowArgs`] from the leader of the term before:
    /// the leader hands over, so a voter that heard from it lately votes all the same (its
    /// lease is the leader's, and the leader gave it up; thesis §3.10).
    pub transfer: bool,
}

/// The answer to [`RequestVoteArgs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestVoteReply {
    /// The voter's current term, for the candidate to update itself.
    pub term: Term,
    /// Whether the vote was granted.
    pub vote_granted: bool,
}

/// A leader replicates entries or sends a heartbeat (Raft Figure 2, AppendEntries).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppendEntriesArgs {
    /// The leader's term.
    pub term: Term,
    /// The leader, so followers can redirect clients.
    pub leader: NodeId,
    /// Index of the entry immediately preceding `entries`.
    pub prev_log_index: LogIndex,
    /// Term of the entry at `prev_log_index`.
    pub prev_log_term: Term,
    /// Entries to store (empty for a heartbeat).
    pub entries: Vec<Entry>,
    /// The leader's commit index.
    pub leader_commit: LogIndex,
    /// The ReadIndex round in flight when this was sent (0: none); the follower echoes it, and an
    /// answer in the leader's term acknowledges that round.
    pub read_round: u64,
    /// The leader's clock when it built this request. Never read by the follower: the leader's
    /// lease counts from the send time of the heartbeats a majority answered (thesis §6.4.1).
    pub sent_at: threadsim::Instant,
}

/// Where a follower's log stops agreeing with the leader's, for fast backtracking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The term of the follower's entry at `prev_log_index`, or `None` if its log is shorter.
    pub term: Option<Term>,
    /// The first index of that term in the follower's log, or its last index + 1 if shorter.
    pub first_index: LogIndex,
}

/// The answer to [`AppendEntriesArgs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppendEntriesReply {
    /// The follower's current term.
    pub term: Term,
    /// Whether the follower's log matched at `prev_log_index` and took the entries.
    pub success: bool,
    /// On a mismatch, where to back up to.
    pub conflict: Option<Conflict>,
    /// The request's `read_round`, echoed.
    pub read_round: u64,
}

/// A leader sends a follower the snapshot its log's compacted prefix became, when the entries
/// the follower needs next are compacted (Raft section 7, InstallSnapshot), one chunk at a
/// time: each message carries the bytes from `offset`, at most `Config::max_bytes_per_append`
/// of them; the follower assembles them in order and installs the snapshot once it holds all
/// `total_bytes` and they match `checksum`. A leader resumes from what the follower says it
/// holds ([`InstallSnapshotReply::received`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstallSnapshotArgs {
    /// The leader's term.
    pub term: Term,
    /// The leader, so followers can redirect clients.
    pub leader: NodeId,
    /// The last index the snapshot covers.
    pub last_included_index: LogIndex,
    /// The term of the entry at `last_included_index`.
    pub last_included_term: Term,
    /// Where `data` starts in the snapshot.
    pub offset: u64,
    /// The snapshot's whole length.
    pub total_bytes: u64,
    /// The whole snapshot's checksum ([`crate::persist::checksum`]): the follower installs only
    /// bytes that match it.
    pub checksum: u64,
    /// A chunk of the service's state after every entry up to `last_included_index`: its
    /// bytes from `offset`.
    pub data: Vec<u8>,
    /// As in [`AppendEntriesArgs::read_round`].
    pub read_round: u64,
    /// As in [`AppendEntriesArgs::sent_at`].
    pub sent_at: threadsim::Instant,
}

/// The answer to [`InstallSnapshotArgs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstallSnapshotReply {
    /// The follower's current term.
    pub term: Term,
    /// How many bytes of the request's snapshot the follower holds now, in order: the whole
    /// length once it has installed it (or needs none of it), where to go on otherwise.
    pub received: u64,
    /// The request's `read_round`, echoed.
    pub read_round: u64,
}

/// A leader hands its leadership to a follower whose log holds all of its own: "start an
/// election now" (Raft thesis §3.10, TimeoutNow).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeoutNowArgs {
    /// The leader's term.
    pub term: Term,
    /// The leader.
    pub leader: NodeId,
    /// Index of the leader's last log entry when it sent this: the target's log holds it.
    pub last_log_index: LogIndex,
    /// Term of that entry.
    pub last_log_term: Term,
}

/// The answer to [`TimeoutNowArgs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeoutNowReply {
    /// The target's current term (after it started its election, if it did).
    pub term: Term,
}

/// A request from one node to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// See [`RequestVoteArgs`].
    RequestVote(RequestVoteArgs),
    /// See [`AppendEntriesArgs`].
    AppendEntries(AppendEntriesArgs),
    /// See [`InstallSnapshotArgs`].
    InstallSnapshot(InstallSnapshotArgs),
    /// See [`TimeoutNowArgs`].
    TimeoutNow(TimeoutNowArgs),
}

/// The answer to a [`Request`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// See [`RequestVoteReply`].
    RequestVote(RequestVoteReply),
    /// See [`AppendEntriesReply`].
    AppendEntries(AppendEntriesReply),
    /// See [`InstallSnapshotReply`].
    InstallSnapshot(InstallSnapshotReply),
    /// See [`TimeoutNowReply`].
    TimeoutNow(TimeoutNowReply),
}

impl Request {
    /// The sender's term.
    pub fn term(&self) -> Term {
        match self {
            Request::RequestVote(args) => args.term,
            Request::AppendEntries(args) => args.term,
            Request::InstallSnapshot(args) => args.term,
            Request::TimeoutNow(args) => args.term,
        }
    }
}

impl Response {
    /// The responder's term.
    pub fn term(&self) -> Term {
        match self {
            Response::RequestVote(reply) => reply.term,
            Response::AppendEntries(reply) => reply.term,
            Response::InstallSnapshot(reply) => reply.term,
            Response::TimeoutNow(reply) => reply.term,
        }
    }
}
