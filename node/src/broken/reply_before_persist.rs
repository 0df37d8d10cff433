//! `reply-before-persist`: a vote or append is answered before it is durable (Raft Figure 2:
//! persist before responding). A persist the core asks for is deferred to the next batch of
//! effects, so a crash in between forgets a vote or entries the reply promised.

use crate::shell::{Locked, Shell};

/// Writes the persist deferred from the last batch, if any. Returns false if the write crashed
/// (the node has stopped).
pub fn write_owed(shell: &Shell, locked: &mut Locked) -> bool {
    if std::mem::take(&mut locked.persist_owed) && shell.persist(locked).is_err() {
        shell.stop(locked);
        return false;
    }
    true
}
