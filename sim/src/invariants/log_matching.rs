//! **Log Matching** (Raft §5.3, Figure 3): if two logs contain an entry with the same index and
//! term, then the logs are identical in all entries up through the given index. Checked on every
//! entry any node appends: the first log seen with an (index, term) pair fixes the chain digest
//! every later log with that pair must have.

use super::log_mirror::Mirrored;
use node::{LogIndex, NodeId, Term};
use std::collections::BTreeMap;

/// The chain digest each (index, term) pair was first seen with, and on which node.
#[derive(Default)]
pub(super) struct LogMatching {
    first_seen: BTreeMap<(LogIndex, Term), (u64, NodeId)>,
}

impl LogMatching {
    /// `node` now holds `entry` at `index`.
    pub fn on_appended(
        &mut self,
        node: NodeId,
        index: LogIndex,
        entry: Mirrored,
    ) -> Result<(), String> {
        match self.first_seen.get(&(index, entry.term)) {
            Some(&(chain, other)) if chain != entry.chain => Err(format!(
                "Log Matching: {other} and {node} both hold an entry of {} at {index}, but their \
                 logs differ at or before it",
                entry.term
            )),
            Some(_) => Ok(()),
            None => {
                self.first_seen
                    .insert((index, entry.term), (entry.chain, node));
                Ok(())
            }
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn the_same_index_and_term_with_different_histories_violates_log_matching() {
        let mut property = LogMatching::default();
        let entry = |chain| Mirrored {
            term: Term(2),
            chain,
        };
        assert!(property
            .on_appended(NodeId(0), LogIndex(3), entry(7))
            .is_ok());
        assert!(property
            .on_appended(NodeId(1), LogIndex(3), entry(7))
            .is_ok());
        let violation = property
            .on_appended(NodeId(2), LogIndex(3), entry(8))
            .unwrap_err();
        assert!(
            violation.contains("n0 and n2 both hold an entry of t2 at #3"),
            "{violation}"
        );
    }
}
