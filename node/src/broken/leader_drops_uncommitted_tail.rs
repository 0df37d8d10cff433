//! `leader-drops-uncommitted-tail`: a new leader drops the entries of its log past its commit
//! index (Raft Figure 3, Leader Append-Only, forbids a leader to delete entries of its log).
//! Those entries may be on a majority and committed by the old leader: they are lost, and a
//! later leader may put other commands at their indices.

use crate::core::{Effect, Effects};
use crate::log::RaftLog;
use crate::LogIndex;

/// Drops `log`'s entries after `commit_index`.
pub fn drop_tail(log: &mut RaftLog, commit_index: LogIndex) -> Effects {
    let mut effects = Effects::default();
    if commit_index < log.last_index() {
        let from = commit_index.next();
        log.truncate_from(from);
        effects.push_from_outside(Effect::Persist);
        effects.push_from_outside(Effect::LogChanged {
            truncated_from: Some(from),
            appended_from: None,
        });
    }
    effects
}
