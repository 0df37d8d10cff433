//! `commit-needs-every-node`: the leader commits only entries every node holds, where Raft
//! §5.3 needs a majority. Safe (every majority is among the holders), not live: one node down for
//! good and nothing commits again.

/// Whether an entry `replicas` nodes of `nodes` hold may commit: all of them must hold it.
pub fn committable(replicas: usize, nodes: usize) -> bool {
    replicas == nodes
}
