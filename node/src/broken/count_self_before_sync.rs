//! `count-self-before-sync`: the leader sends its new entries while its own copy is being
//! synced (Raft thesis §10.2.1 allows that) but counts that copy toward their commit at once,
//! where it may count itself only once the sync returned. With one follower's acknowledgement
//! in a cluster of three it commits an entry held durably by one node; a power loss on the leader
//! takes the entry back, and the two nodes without it can elect a leader that never had it: a
//! committed entry lost.

/// Whether the leader's own copy counts toward a commit: always, synced or not.
pub fn counts_itself() -> bool {
    true
}
