//! `truncate-on-matching-heartbeat`: a follower truncates its log after `prev_log_index` on a
//! heartbeat even when it matches (a 6.5840 lab 3B pitfall; Raft Figure 2, AppendEntries step 3
//! truncates only on a conflict). A stale or reordered heartbeat then erases committed entries.

use crate::core::{Effect, Effects};
use crate::log::RaftLog;
use crate::messages::AppendEntriesArgs;

/// Truncates `log` after a matching heartbeat's `prev_log_index`.
pub fn truncate(log: &mut RaftLog, args: &AppendEntriesArgs) -> Effects {
    let mut effects = Effects::default();
    if args.entries.is_empty() && args.prev_log_index < log.last_index() {
        let from = args.prev_log_index.next();
        log.truncate_from(from);
        effects.push_from_outside(Effect::Persist);
        effects.push_from_outside(Effect::LogChanged {
            truncated_from: Some(from),
            appended_from: None,
        });
    }
    effects
}
