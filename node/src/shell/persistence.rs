//! Writing the node's persistent state: the encoder keeps the last encoding, so a write encodes
//! only the entries appended since (see [`crate::persist::StateEncoder`]).

use super::state::{Locked, Shell};
use crate::broken;
use crate::fault_points::{self, FaultPoint};
use crate::mutation::Mutation;
use crate::StorageError;

impl Shell {
    /// Writes current term, vote and log. Fails when the machine crashed during the write; the
    /// caller then stops the node.
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
        locked.encoder.update(state);
        // Every update is saved (a failed save stops the node), so what the update kept is what
        // the persister holds.
        self.persister
            .save_changed(locked.encoder.bytes(), locked.encoder.unchanged())
    }
}
