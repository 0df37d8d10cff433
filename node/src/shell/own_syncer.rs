//! The syncer of the leader's own writes (run only with a persister that shares fsyncs; see
//! `persistence.rs`): woken when a follower acknowledges entries it has not been asked to
//! sync, it takes every write the proposals made since its last pass, syncs them
//! with no lock held (one fsync for all of them, shared with any other writer's), and tells the
//! core, which may then count the leader's copy toward a commit (Raft thesis §10.2.1).

use super::state::Shell;
use super::Pass;

/// One pass of the syncer: the writes owed, made durable, reported in the term they were made.
pub(super) fn pass(shell: &Shell) -> Pass {
    let owed = {
        let mut locked = shell.lock();
        if let Some(pass) = locked.gate() {
            return pass;
        }
        let Some(owed) = locked.own_sync_owed.take() else {
            return Pass::WaitUntil(None);
        };
        locked.own_sync_started = Some(owed);
        owed
    };
    if shell.sync_written(owed.ticket).is_err() {
        return Pass::Exit;
    }
    let mut locked = shell.lock();
    if locked.stopped {
        return Pass::Exit;
    }
    let effects = locked.core.own_entries_synced(owed.term, owed.through);
    shell.execute(&mut locked, effects);
    // What was written during the sync waits for an acknowledgement of it (a wake that came
    // meanwhile is kept by the signal): syncing it at once would make the syncer eager again.
    Pass::WaitUntil(None)
}
