//! [`Observer`]: how a harness watches a node's state changes as they happen.

use crate::{LogIndex, NodeId, Term};

/// The role a node plays in its current term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Follows a leader (or waits for one).
    Follower,
    /// Asks whether it could win an election, without changing its term (pre-vote).
    PreCandidate,
    /// Asks for votes.
    Candidate,
    /// Leads.
    Leader,
}

/// A state change of a node, reported under the node's lock, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeEvent {
    /// The node took `role` in `term`.
    RoleChanged {
        /// The node's term after the change.
        term: Term,
        /// The new role.
        role: Role,
    },
    /// The node's log changed: entries from `truncated_from` on were removed (if any), then
    /// `appended` were added. A restarted node reports its whole restored log. Only sent to
    /// observers that [watch logs](Observer::watches_logs).
    LogChanged {
        /// The first index removed.
        truncated_from: Option<LogIndex>,
        /// The entries added, in index order.
        appended: Vec<LoggedEntry>,
        /// The configurations among them, with their indices (see [`crate::Membership`]).
        configurations: Vec<(LogIndex, crate::Membership)>,
    },
    /// The node's commit index advanced.
    CommitAdvanced {
        /// The new commit index.
        commit_index: LogIndex,
    },
    /// The log's prefix up to `index` gave way to the service's snapshot of its state there
    /// (every entry of it committed and applied); a restarted node that restored a snapshot
    /// reports it first, then its log after it as a [`NodeEvent::LogChanged`].
    LogCompacted {
        /// The last index the snapshot covers.
        index: LogIndex,
        /// The term of the entry there.
        term: Term,
    },
    /// The node took a leader's snapshot covering every entry up to `index` (now committed);
    /// its entries after `index` were kept if its log agreed there (`kept_suffix`), and removed
    /// otherwise.
    SnapshotInstalled {
        /// The last index the snapshot covers.
        index: LogIndex,
        /// The term of the entry there.
        term: Term,
        /// Whether the entries after `index` were kept.
        kept_suffix: bool,
    },
    /// The node answered a vote request of `term` from `candidate` with a grant (not a
    /// pre-vote): it may never grant another candidate that term, restarts included (Raft
    /// Figure 2: `votedFor` is on stable storage before the answer).
    VoteGranted {
        /// The term of the vote.
        term: Term,
        /// Who got it.
        candidate: NodeId,
    },
    /// A new instance of the node restored its hard state from its disk, before anything else
    /// happened to it: the term, and whom it voted for in that term.
    HardStateRestored {
        /// The restored term.
        term: Term,
        /// The restored vote of that term.
        voted_for: Option<NodeId>,
    },
    /// The node broke one of its own local invariants (only reachable with a mutation on).
    InvariantViolated {
        /// What broke, with the values involved.
        description: String,
    },
}

/// One log entry as an observer sees it: where it is, its term, and a digest of its command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoggedEntry {
    /// Its index.
    pub index: LogIndex,
    /// The term it was created in.
    pub term: Term,
    /// A digest of its command.
    pub digest: u64,
}

/// Receives every [`NodeEvent`]. Called with the node's lock held: it must not call into a node.
pub trait Observer: Send + Sync {
    /// `node` went through `event`.
    fn on_event(&self, node: NodeId, event: &NodeEvent);

    /// Whether this observer wants [`NodeEvent::LogChanged`] (building it costs a digest per
    /// entry, so a node skips it for observers that do not).
    fn watches_logs(&self) -> bool {
        false
    }
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct NoObserver;

impl Observer for NoObserver {
    fn on_event(&self, _node: NodeId, _event: &NodeEvent) {}
}
