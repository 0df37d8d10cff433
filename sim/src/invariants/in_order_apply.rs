//! **In-order apply** (Raft Figure 2, rules for all servers: apply `log[lastApplied]` after
//! incrementing `lastApplied`): each node instance applies indices 1, 2, 3, ... with no gap or
//! repeat; a restarted instance starts again from 1. A snapshot handed to the service stands for
//! every entry up to its index (Raft §7): it must lie ahead of what was applied (a snapshot never
//! takes the state back), and the entries after it follow from its index on.

use node::{LogIndex, NodeId};
use std::collections::BTreeMap;

/// The highest index each node instance applied.
#[derive(Default)]
pub(super) struct InOrderApply {
    applied_upto: BTreeMap<NodeId, LogIndex>,
}

impl InOrderApply {
    /// A new instance of `node` starts from nothing applied.
    pub fn on_restart(&mut self, node: NodeId) {
        self.applied_upto.insert(node, LogIndex(0));
    }

    /// `node` applied `index`.
    pub fn on_applied(&mut self, node: NodeId, index: LogIndex) -> Result<(), String> {
        let expected = self.applied_upto(node).next();
        self.applied_upto.insert(node, index);
        if index == expected {
            Ok(())
        } else {
            Err(format!(
                "{node} applied index {index} but the next index to apply was {expected}"
            ))
        }
    }

    /// `node`'s service was handed a snapshot up to `index` in place of the entries before it.
    pub fn on_snapshot(&mut self, node: NodeId, index: LogIndex) -> Result<(), String> {
        let applied = self.applied_upto(node);
        self.applied_upto.insert(node, index);
        if index > applied {
            Ok(())
        } else {
            Err(format!(
                "{node} was handed a snapshot up to {index} after applying up to {applied}: its \
                 state went back"
            ))
        }
    }

    /// The highest index `node` applied in its current instance.
    pub fn applied_upto(&self, node: NodeId) -> LogIndex {
        self.applied_upto.get(&node).copied().unwrap_or_default()
    }

    /// How many nodes have applied `index`.
    pub fn nodes_that_applied(&self, index: LogIndex) -> usize {
        self.applied_upto
            .values()
            .filter(|&&upto| upto >= index)
            .count()
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_gap_or_a_repeat_is_a_violation_and_a_restart_starts_over() {
        let mut property = InOrderApply::default();
        assert!(property.on_applied(NodeId(0), LogIndex(1)).is_ok());
        let gap = property.on_applied(NodeId(0), LogIndex(3)).unwrap_err();
        assert!(gap.contains("next index to apply was #2"), "{gap}");
        property.on_restart(NodeId(0));
        assert!(property.on_applied(NodeId(0), LogIndex(1)).is_ok());
        assert!(
            property.on_applied(NodeId(0), LogIndex(1)).is_err(),
            "a repeat"
        );
    }

    #[test]
    fn a_snapshot_must_lie_ahead_and_the_entries_follow_it() {
        let mut property = InOrderApply::default();
        assert!(property.on_applied(NodeId(0), LogIndex(1)).is_ok());
        assert!(property.on_snapshot(NodeId(0), LogIndex(5)).is_ok());
        let before = property.on_applied(NodeId(0), LogIndex(4)).unwrap_err();
        assert!(before.contains("next index to apply was #6"), "{before}");
        assert!(property.on_applied(NodeId(1), LogIndex(1)).is_ok());
        assert!(property.on_applied(NodeId(1), LogIndex(2)).is_ok());
        let back = property.on_snapshot(NodeId(1), LogIndex(2)).unwrap_err();
        assert!(
            back.contains("after applying up to #2: its state went back"),
            "{back}"
        );
        // A restarted instance may restore its snapshot at once.
        property.on_restart(NodeId(1));
        assert!(property.on_snapshot(NodeId(1), LogIndex(2)).is_ok());
        assert!(property.on_applied(NodeId(1), LogIndex(3)).is_ok());
    }
}
