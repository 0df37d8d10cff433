//! The kinds of fault a run injects.

use crate::ClockSkew;

/// The kinds of fault a run injects (message loss is [`crate::RunSpec::reliable`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FaultMix {
    /// Crashes and restarts.
    pub crashes: bool,
    /// Symmetric partitions (including the leader cut off with a minority).
    pub partitions: bool,
    /// One-way link cuts.
    pub one_way: bool,
    /// Clock skew: nodes' clocks change rate (and, beyond the bound, jump forward).
    pub skew: ClockSkew,
    /// Process pauses (raft workload): a node, the leader half the time, stops every thread
    /// for a round or more (past an election timeout, as a long garbage collection or a
    /// stopped VM would) and goes on as if nothing happened. Off by default: switching it on
    /// changes what every seed draws.
    pub pauses: bool,
    /// Fault points in the node's own code (`node::fault_points`, FoundationDB's BUGGIFY):
    /// each armed by the seed one time in four, firing one time in four it is passed (spurious
    /// wake-ups, thread switches inside critical sections, a full apply channel, replies handled
    /// twice, election timeouts at their minimum, requests sent late).
    pub fault_points: bool,
    /// Liveness mode (raft workload; TigerBeetle's simulator has one): when the faults end, a
    /// minority stays failed for good (crashed, cut off from everyone, or deaf), and the rest must
    /// still commit, every one of them, within the bound that the healed cluster has.
    pub liveness: bool,
    /// Crashes are power losses: a crashed node's disk loses every write it had not synced
    /// (the page cache goes with the machine), where a process crash keeps them. Off by
    /// default: a correct node syncs before it answers, so only a node that does not (the
    /// `skip-fsync` variant) is hurt, and switching it on changes what every seed with a crash
    /// does.
    pub power_loss: bool,
    /// Latent read errors: the first read of a crashed node's disk fails (EIO, a sector that
    /// cannot be read), and the node must refuse to start rather than take the state for
    /// missing; a later restart reads it. Off by default, like power losses: it changes what
    /// every seed with a crash does.
    pub read_errors: bool,
    /// Torn writes (raft workload): now and then a crash comes in the middle of a node's next
    /// save instead of between two, and only some of the save's 512-byte sectors reach the
    /// disk. A node must come back with its state from before the save or after it.
    pub torn_writes: bool,
    /// Corruption at rest (raft workload): now and then, instead of a restart, one bit of a
    /// crashed node's state flips on its disk, in one of the two copies a node keeps while the
    /// other holds the newest state. A node must never serve the damaged copy.
    pub corruption: bool,
    /// Misdirected writes (raft workload): now and then a crash comes right after a save that
    /// wrote one of its two copies over the other's place, leaving that place intact but
    /// stale. A node must come back with the save, not the stale copy.
    pub misdirected_writes: bool,
    /// Session churn (key-value workload): the store keeps at most 20 client sessions for its
    /// 30 clients and expires one unused for 2 s of the log's clock, so retries keep meeting
    /// sessions that are gone and must be answered "session expired", never applied again.
    pub session_churn: bool,
    /// Membership changes (raft workload): the cluster starts with three voters (the rest of
    /// its nodes outside the configuration), and now and then the leader is asked to add a
    /// node as a learner, promote a learner, demote a voter or remove a node, one server at a
    /// time. Off by default: it changes who votes, and what every seed draws.
    pub membership: bool,
}

impl FaultMix {
    /// The default mix: crashes, partitions, one-way cuts and clocks within their bound.
    pub const DEFAULT: FaultMix = FaultMix {
        crashes: true,
        partitions: true,
        one_way: true,
        skew: ClockSkew::WithinBound,
        pauses: false,
        fault_points: false,
        liveness: false,
        power_loss: false,
        read_errors: false,
        torn_writes: false,
        corruption: false,
        misdirected_writes: false,
        session_churn: false,
        membership: false,
    };
}

impl Default for FaultMix {
    fn default() -> FaultMix {
        FaultMix::DEFAULT
    }
}
