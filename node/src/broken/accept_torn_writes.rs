//! `accept-torn-writes`: persistence that is not atomic, and a node that trusts a torn write
//! (Alagappan et al., OSDI '16). The state is written in place (the simulated disk's in-place
//! layout), and on restart a state that fails its integrity check is salvaged instead of refused:
//! every entry that still decodes completely is kept, so acknowledged entries torn off are lost.

use crate::log::RaftLog;
use crate::persist::{body_reader, PersistentState};
use crate::{Command, Entry, LogIndex, NodeId, Term};

/// What the broken node does with bytes that fail their check: ignores lengths and checksum and
/// keeps every entry that decodes completely.
pub fn salvage(bytes: &[u8]) -> PersistentState {
    let mut reader = body_reader(bytes);
    let mut state = PersistentState::default();
    let Ok(term) = reader.u64() else { return state };
    state.current_term = Term(term);
    state.voted_for = match (reader.u8(), reader.u32()) {
        (Ok(1), Ok(node)) => Some(NodeId(node)),
        _ => None,
    };
    let (Ok(snapshot_index), Ok(snapshot_term), Ok(snapshot_len), Ok(count)) =
        (reader.u64(), reader.u64(), reader.u64(), reader.u64())
    else {
        return state;
    };
    let Ok(snapshot) = reader.take(snapshot_len.min(1 << 28) as usize) else {
        return state;
    };
    let mut entries = Vec::new();
    for _ in 0..count.min(1 << 20) {
        let (Ok(term), Ok(len)) = (reader.u64(), reader.u32()) else {
            break;
        };
        let Ok(command) = reader.take(len as usize) else {
            break;
        };
        entries.push(Entry {
            term: Term(term),
            command: Command(command.to_vec()),
        });
    }
    if snapshot_index > 0 {
        state.log = RaftLog::after_snapshot(LogIndex(snapshot_index), Term(snapshot_term), entries);
        state.snapshot = snapshot.to_vec();
    } else {
        state.log = RaftLog::from_entries(entries);
    }
    state
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn salvage_keeps_the_entries_a_torn_prefix_still_holds() {
        let mut log = RaftLog::default();
        log.append(Entry {
            term: Term(1),
            command: Command::from_text("x"),
        });
        log.append(Entry {
            term: Term(3),
            command: Command(vec![]),
        });
        let bytes = PersistentState {
            current_term: Term(3),
            voted_for: Some(NodeId(2)),
            log,
            snapshot: Vec::new(),
        }
        .encode();
        assert!(PersistentState::decode(&bytes[..bytes.len() - 10]).is_err());
        let salvaged = salvage(&bytes[..bytes.len() - 10]);
        assert_eq!(salvaged.current_term, Term(3));
        assert_eq!(
            salvaged.log.last_index(),
            crate::LogIndex(1),
            "the second entry was torn off"
        );
    }
}
