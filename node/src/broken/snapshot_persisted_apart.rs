//! `snapshot-persisted-apart`: the compacted log and the snapshot are written apart, as two
//! files would be: the state first, the snapshot a few milliseconds later, with the node's lock
//! released in between. Until the second write, every write of the state still carries the old
//! snapshot. A crash in between leaves a log that starts after the new snapshot's index next to
//! the old snapshot: the entries in between are gone, and the restored service holds another
//! state than the one at the index the node believes it restored.

use crate::persist::Persister;
use crate::persist::StateEncoder;
use crate::shell::{Locked, Shell};
use crate::{LogIndex, StorageError};
use std::time::Duration;

/// How long writing the snapshot's own file takes.
const SNAPSHOT_FILE_WRITE: Duration = Duration::from_millis(5);

/// `Node::snapshot` with the snapshot written after the compacted log.
pub fn snapshot(shell: &Shell, index: LogIndex, snapshot: Vec<u8>) -> bool {
    let mut locked = shell.lock();
    if locked.stopped {
        return false;
    }
    let previous = locked.core.persistent().snapshot.clone();
    locked.snapshot_file_behind = Some(previous);
    let effects = locked.core.compact(index, snapshot);
    shell.execute(&mut locked, effects);
    drop(locked);
    shell.clock.sleep(SNAPSHOT_FILE_WRITE);
    let mut locked = shell.lock();
    locked.snapshot_file_behind = None;
    if locked.stopped {
        return false;
    }
    if shell.persist(&mut locked).is_err() {
        shell.stop(&mut locked);
    }
    !locked.stopped
}

/// A write of the state while the snapshot's file still holds `behind`.
pub fn save(
    persister: &dyn Persister,
    locked: &mut Locked,
    behind: Vec<u8>,
) -> Result<(), StorageError> {
    let mut stale = locked.core.persistent().clone();
    stale.snapshot = behind;
    // The encoder no longer knows what the persister holds.
    locked.encoder = StateEncoder::new();
    locked.log_bytes_written = 0;
    persister.save(&stale.encode())
}
