//! `leader-drops-uncommitted-tail`: a new leader drops the entries of its log past its commit
//! index (Raft Figure 3, Leader Append-Only, forbids a leader to delete entries of its log).
//! Those entries may be on a majority and committed by the old leader: they are lost, and a
//! later leader may put other commands at their indices.

use crate::core::Effects;
use crate::log::RaftLog;
use crate::LogIndex;

/// Drops `log`'s entries after `commit_index`.
pub fn drop_tail(log: &mut RaftLog, commit_index: LogIndex) -> Effects {
    if commit_index < log.last_index() {
        super::remove_entries_from(log, commit_index.next())
    } else {
        Effects::default()
    }
}
