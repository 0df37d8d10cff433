//! `commit-needs-every-node`: the leader commits only entries every node holds, where Raft
//! §5.3 needs a majority. Safe (every majority is among the holders), not live: one node down for
//! good and nothing commits again.

use crate::core::Quorum;
use crate::NodeId;

/// Whether an entry `holders` hold may commit: every voter must hold it.
pub fn committable(quorum: &Quorum, holders: impl IntoIterator<Item = NodeId>) -> bool {
    let holders: std::collections::BTreeSet<NodeId> = holders.into_iter().collect();
    quorum.voters().is_subset(&holders)
}
