//! **Snapshot agreement** (Raft §7): a snapshot holds exactly the state a service reaches by
//! applying the log up to its last index. Every snapshot a service takes reports a digest of its
//! state at that index, and every snapshot a service restores (installed from a leader, or its
//! own at restart) reports the digest of the state it restored: at one index, all of them must
//! be equal. A snapshot that leaves something out (the client sessions), or that claims an index
//! its bytes do not reach (a snapshot written apart from the log), restores another state.

use node::{LogIndex, NodeId};
use std::collections::BTreeMap;

/// How a service came to report its state at an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StateSeen {
    /// It took a snapshot there, having applied (or restored) everything before.
    Taken,
    /// It restored a snapshot of that index.
    Restored,
}

impl StateSeen {
    fn describe(self) -> &'static str {
        match self {
            StateSeen::Taken => "took a snapshot with",
            StateSeen::Restored => "restored a snapshot with",
        }
    }
}

/// The first state digest reported at every index, and by whom.
#[derive(Default)]
pub(super) struct SnapshotAgreement {
    first: BTreeMap<LogIndex, (u64, NodeId, StateSeen)>,
}

impl SnapshotAgreement {
    /// `node`'s service holds a state with `digest` at `index`, as `seen`.
    pub fn on_state(
        &mut self,
        node: NodeId,
        index: LogIndex,
        digest: u64,
        seen: StateSeen,
    ) -> Result<(), String> {
        match self.first.get(&index) {
            Some(&(first, by, how)) if first != digest => Err(format!(
                "Snapshot agreement: at {index} {node} {} state {digest:016x}, but {by} {} state \
                 {first:016x}",
                seen.describe(),
                how.describe()
            )),
            Some(_) => Ok(()),
            None => {
                self.first.insert(index, (digest, node, seen));
                Ok(())
            }
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_restored_state_that_differs_from_the_taken_one_is_a_violation() {
        let mut property = SnapshotAgreement::default();
        assert!(property
            .on_state(NodeId(0), LogIndex(7), 0xaa, StateSeen::Taken)
            .is_ok());
        assert!(property
            .on_state(NodeId(1), LogIndex(7), 0xaa, StateSeen::Restored)
            .is_ok());
        let violation = property
            .on_state(NodeId(2), LogIndex(7), 0xbb, StateSeen::Restored)
            .unwrap_err();
        assert!(
            violation.contains("at #7 n2 restored a snapshot with state 00000000000000bb, but n0 took a snapshot with"),
            "{violation}"
        );
        // Another index is another state.
        assert!(property
            .on_state(NodeId(2), LogIndex(8), 0xbb, StateSeen::Restored)
            .is_ok());
    }
}
