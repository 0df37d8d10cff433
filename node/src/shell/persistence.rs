//! Writing the node's persistent state: the encoder keeps the last encoding, so a write encodes
//! only the entries appended since (see [`crate::persist::StateEncoder`]); a persister with a
//! form of its own (an append-only log) writes only what changed in that form.
//!
//! A persist is durable before the lock is released, with one exception, taken only with a
//! persister that [shares fsyncs](crate::Persister::shares_fsyncs): the leader's own new
//! entries, written by the client's thread as it proposes (and again, if anything is left, by a
//! replicator as it builds the AppendEntries that carries them). The replicators send them at
//! once, and the node's syncer (`own_syncer.rs`) makes them durable meanwhile, after the lock
//! is released, so clients keep appending and their writes share the next fsync (group commit),
//! and the leader's own fsync runs beside its followers' instead of before them (Raft thesis
//! §10.2.1). The leader counts itself toward their commit only once that sync has returned
//! (`core/own_sync.rs`); every other persist syncs under the lock, covering every write before
//! it, and a follower syncs before it answers.

use super::state::{Locked, OwnSyncOwed, Shell};
use crate::broken;
use crate::fault_points::{self, FaultPoint};
use crate::messages::{Request, Response};
use crate::mutation::Mutation;
use crate::persist::WriteTicket;
use crate::{LogIndex, StorageError};

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

    /// Hands the leader's writes made so far to the syncer: every write up to the last, which
    /// hold the log through its last entry in the current term. The syncer runs once a
    /// follower acknowledges them ([`Shell::sync_after_acknowledgement`]).
    pub fn owe_own_sync(&self, locked: &mut Locked) {
        if locked.written == WriteTicket::DURABLE {
            return;
        }
        locked.own_sync_owed = Some(OwnSyncOwed {
            ticket: locked.written,
            term: locked.core.term(),
            through: locked.core.persistent().log.last_index(),
        });
    }

    /// Called after a follower's reply to `request` was handled: if it acknowledged entries
    /// the syncer has not yet been asked to make durable, the syncer starts on every write owed.
    /// The leader's copy can count toward a commit no sooner than a follower's acknowledgement
    /// (a node alone syncs as it proposes), so the sync starts there: it runs beside the other
    /// followers' answers, and every proposal written by then (most of a round's, and those that
    /// came during it) shares one fsync.
    pub fn sync_after_acknowledgement(
        &self,
        locked: &mut Locked,
        request: &Request,
        response: Option<&Response>,
    ) {
        let Some(owed) = locked.own_sync_owed else {
            return;
        };
        let (Request::AppendEntries(args), Some(Response::AppendEntries(reply))) =
            (request, response)
        else {
            return;
        };
        let acknowledged = LogIndex(args.prev_log_index.0 + args.entries.len() as u64);
        let started = locked
            .own_sync_started
            .filter(|started| started.term == owed.term);
        if reply.success
            && args.term == owed.term
            && started.is_none_or(|started| acknowledged > started.through)
        {
            self.own_sync_wake.notify();
        }
    }

    /// Called by the syncer with no lock held: returns once every write up to `written` is
    /// durable. A failed sync stops the node.
    pub fn sync_written(&self, written: WriteTicket) -> Result<(), StorageError> {
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
