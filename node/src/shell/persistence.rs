//! Writing the node's persistent state: the encoder keeps the last encoding, so a write encodes
//! only the entries appended since (see [`crate::persist::StateEncoder`]); a persister with a
//! form of its own (an append-only log) writes only what changed in that form.
//!
//! A persist is durable before the lock is released, with one exception, taken only with a
//! persister that [shares fsyncs](crate::Persister::shares_fsyncs): the leader's own new
//! entries, written by the client's thread as it proposes and by a replicator as it builds the
//! AppendEntries that carries them. That write's fsync runs after the lock is released
//! ([`Shell::sync_before_sending`]), so clients keep appending and their writes share the next
//! fsync (group commit). Nothing leaves the node before it is durable: every replicator syncs
//! up to the last write before it sends, and every other persist syncs under the lock, covering
//! every write before it. A leader counts itself toward a commit only for entries a follower
//! has acknowledged, and followers receive only what the leader has synced.

use super::state::{Locked, Shell};
use crate::broken;
use crate::fault_points::{self, FaultPoint};
use crate::mutation::Mutation;
use crate::persist::WriteTicket;
use crate::StorageError;

impl Shell {
    /// Writes current term, vote and log, durably, unless the write may wait for the sync a
    /// replicator makes before it sends ([`Locked::sync_deferred`], with a persister that
    /// [shares fsyncs](crate::Persister::shares_fsyncs)). Fails when the machine crashed
    /// during the write; the caller then stops the node.
    pub fn persist(&self, locked: &mut Locked) -> Result<(), StorageError> {
        if self.config.mutations.has(Mutation::SleepInPersist) {
            broken::sleep_in_persist::fsync_delay(&self.clock);
        }
        if let Some(behind) = locked.snapshot_file_behind.clone() {
            return broken::snapshot_persisted_apart::save(&*self.persister, locked, behind);
        }
        let state = locked.core.persistent();
        if self.config.mutations.has(Mutation::ForgetVote) {
            return broken::forget_vote::save(&*self.persister, state);
        }
        if fault_points::fires(FaultPoint::SwitchInPersist, self.clock.now()) {
            threadsim::sync::thread::yield_now();
        }
        // Every write is saved (a failed one stops the node), so what the encoder kept is what
        // the persister holds.
        let encoder = &mut locked.encoder;
        let deferred = locked.sync_deferred && self.persister.shares_fsyncs();
        if deferred || self.config.mutations.has(Mutation::SkipFsync) {
            let ticket = self.persister.write_state(state, encoder)?;
            if deferred {
                locked.written = locked.written.max(ticket);
            } else {
                broken::skip_fsync::never_synced(ticket);
            }
        } else {
            self.persister.save_state(state, encoder)?;
        }
        locked.log_bytes_written = crate::persist::stored_log_bytes(&state.log);
        Ok(())
    }

    /// Called by a replicator after it built a request under the lock and released it: returns
    /// once every write made up to `written` (the lock's [`Locked::written`] as the request was
    /// built) is durable, so the request carries nothing a crash could take back. A failed sync
    /// stops the node.
    pub fn sync_before_sending(&self, written: WriteTicket) -> Result<(), StorageError> {
        if written == WriteTicket::DURABLE || self.config.mutations.has(Mutation::SkipFsync) {
            return Ok(());
        }
        let synced = self.persister.sync(written);
        if synced.is_err() {
            let mut locked = self.lock();
            if !locked.stopped {
                self.stop(&mut locked);
            }
        }
        synced
    }
}
