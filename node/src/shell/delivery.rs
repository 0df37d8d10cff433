//! Handing committed entries (and a snapshot in place of those it covers) to the service, in
//! index order, exactly once: by the applier thread, or by the handler that advanced a
//! follower's commit index when that cannot block. A token under the lock (`delivering`) lets
//! one thread at a time do it.

use super::state::{Locked, Shell};
use super::{Applied, Delivery};
use crate::broken;
use crate::fault_points::{self, FaultPoint};
use crate::mutation::Mutation;
use crate::LogIndex;
use threadsim::sync::MutexGuard;

impl Shell {
    /// Takes up to `limit` deliveries not yet handed to the service: the log's snapshot first
    /// if it is due, then committed entries.
    pub fn take_committed(&self, locked: &mut Locked, limit: usize) -> Vec<Delivery> {
        let mut batch = Vec::new();
        if limit == 0 {
            return batch;
        }
        let state = locked.core.persistent();
        let log = &state.log;
        if std::mem::take(&mut locked.snapshot_due) {
            // (Broken variant `install-older-snapshot` hands it over anyway: the state goes back.)
            assert!(
                log.snapshot_index() > locked.last_applied
                    || self.config.mutations.has(Mutation::InstallOlderSnapshot),
                "{}: a snapshot up to {} due, the service already at {}",
                self.id,
                log.snapshot_index(),
                locked.last_applied
            );
            let (_, service) = crate::core::Membership::unwrap_snapshot(&state.snapshot)
                .expect("a snapshot the node stored carries its configuration");
            batch.push(Delivery::Snapshot {
                index: log.snapshot_index(),
                term: log.snapshot_term(),
                data: service.to_vec(),
            });
            locked.last_applied = log.snapshot_index();
        }
        let ready = locked.core.commit_index().min(log.last_index());
        let room = (limit - batch.len()) as u64;
        let upto = LogIndex(ready.0.min(locked.last_applied.0 + room));
        for index in locked.last_applied.0 + 1..=upto.0 {
            let entry = log
                .entry(LogIndex(index))
                .expect("committed entry in the log");
            batch.push(Delivery::Entry(Applied {
                index: LogIndex(index),
                term: entry.term,
                command: entry.command.clone(),
            }));
        }
        if let Some(last) = batch.last() {
            locked.last_applied = last.index();
        }
        batch
    }

    /// Whether a snapshot or committed entries wait to be handed to the service.
    pub fn apply_pending(locked: &Locked) -> bool {
        let log = &locked.core.persistent().log;
        locked.snapshot_due
            || locked.core.commit_index().min(log.last_index()) > locked.last_applied
    }

    /// After a handler's effects advanced the commit index: hands the newly committed entries to
    /// the service from this thread, after releasing the lock, when that cannot block (nobody
    /// else is delivering and they fit in the apply channel); otherwise wakes the applier. A
    /// follower's commit index moves only in its AppendEntries handler, so this saves it a
    /// hand-off to the applier thread on every round.
    pub fn deliver_on_this_thread(&self, mut locked: MutexGuard<'_, Locked>) {
        if !std::mem::take(&mut locked.apply_due) {
            return;
        }
        if locked.snapshot_due && !locked.stopped {
            crate::coverage::sometimes(
                locked.delivering,
                crate::coverage::Point::SnapshotDueWhileDelivering,
            );
            let mutations = &self.config.mutations;
            if locked.delivering && mutations.has(Mutation::EntriesAfterSnapshot) {
                return broken::entries_after_snapshot::deliver_now(self, locked);
            }
            if !locked.delivering && mutations.has(Mutation::DeliverSnapshotWithLockHeld) {
                return broken::deliver_snapshot_with_lock_held::deliver(self, locked);
            }
        }
        // Broken variant `lost-delivery-handoff`: what is not delivered here is stranded.
        let hand_off = !self.config.mutations.has(Mutation::LostDeliveryHandoff);
        let full = fault_points::fires(FaultPoint::ApplyChannelFull, self.clock.now());
        let room = if locked.delivering || locked.stopped || full {
            0
        } else {
            self.apply_sender.room()
        };
        let batch = self.take_committed(
            &mut locked,
            room.min(self.config.max_entries_per_apply_batch),
        );
        if batch.is_empty() {
            crate::coverage::sometimes(
                !locked.delivering && !locked.stopped && room == 0,
                crate::coverage::Point::ApplyChannelFull,
            );
            if hand_off {
                self.applier_wake.notify();
            }
            return;
        }
        assert!(!locked.delivering, "{}: two threads delivering", self.id);
        locked.delivering = true;
        drop(locked);
        // Fits without blocking: while `delivering` is set this thread is the only sender, so
        // the room seen above can only have grown. A failed send means the node was stopped
        // meanwhile (the channel is closed); nothing more is delivered then.
        let _ = self.apply_sender.send_all(batch);
        let mut locked = self.lock();
        assert!(locked.delivering, "{}: delivery token lost", self.id);
        locked.delivering = false;
        if Self::apply_pending(&locked) && hand_off {
            self.applier_wake.notify();
        }
    }
}
