//! `truncate-on-matching-heartbeat`: a follower truncates its log after `prev_log_index` on a
//! heartbeat even when it matches (a 6.5840 lab 3B pitfall; Raft Figure 2, AppendEntries step 3
//! truncates only on a conflict). A stale or reordered heartbeat then erases committed entries.

use crate::core::Effects;
use crate::log::RaftLog;
use crate::messages::AppendEntriesArgs;

/// Truncates `log` after a matching heartbeat's `prev_log_index`.
pub fn truncate(log: &mut RaftLog, args: &AppendEntriesArgs) -> Effects {
    if args.entries.is_empty() && args.prev_log_index < log.last_index() {
        super::remove_entries_from(log, args.prev_log_index.next())
    } else {
        Effects::default()
    }
}
