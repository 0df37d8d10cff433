//! **Leader Append-Only** (Raft Figure 3): a leader never overwrites or deletes entries in its
//! log; it only appends new ones. Checked on every change of any node's log: a node that took
//! the leader's role in a term and has not left it may not report entries removed.

use node::{LogIndex, NodeId, Role, Term};
use std::collections::BTreeMap;

/// The term each node currently leads, for the nodes that lead.
#[derive(Default)]
pub(super) struct LeaderAppendOnly {
    leading: BTreeMap<NodeId, Term>,
}

impl LeaderAppendOnly {
    /// `node` took `role` in `term`.
    pub fn on_role(&mut self, node: NodeId, term: Term, role: Role) {
        if role == Role::Leader {
            self.leading.insert(node, term);
        } else {
            self.leading.remove(&node);
        }
    }

    /// `node`'s log changed, with the entries from `truncated_from` on removed if it is set.
    pub fn on_log_changed(
        &self,
        node: NodeId,
        truncated_from: Option<LogIndex>,
    ) -> Result<(), String> {
        match (self.leading.get(&node), truncated_from) {
            (Some(term), Some(from)) => Err(format!(
                "Leader Append-Only: {node}, leader of {term}, removed the entries of its log \
                 from {from} on"
            )),
            _ => Ok(()),
        }
    }

    /// A new instance of `node` starts, not a leader.
    pub fn on_restart(&mut self, node: NodeId) {
        self.leading.remove(&node);
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_leader_that_removes_entries_violates_leader_append_only() {
        let mut property = LeaderAppendOnly::default();
        property.on_role(NodeId(1), Term(3), Role::Leader);
        assert!(property.on_log_changed(NodeId(1), None).is_ok());
        let violation = property
            .on_log_changed(NodeId(1), Some(LogIndex(5)))
            .unwrap_err();
        assert!(
            violation.contains("n1, leader of t3, removed the entries of its log from #5 on"),
            "{violation}"
        );
    }

    #[test]
    fn a_follower_or_a_restarted_leader_may_remove_entries() {
        let mut property = LeaderAppendOnly::default();
        property.on_role(NodeId(1), Term(3), Role::Leader);
        property.on_role(NodeId(1), Term(4), Role::Follower);
        assert!(property
            .on_log_changed(NodeId(1), Some(LogIndex(5)))
            .is_ok());
        property.on_role(NodeId(2), Term(5), Role::Leader);
        property.on_restart(NodeId(2));
        assert!(property
            .on_log_changed(NodeId(2), Some(LogIndex(1)))
            .is_ok());
    }
}
