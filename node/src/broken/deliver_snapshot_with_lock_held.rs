//! `deliver-snapshot-with-lock-held`: a handler that installed a leader's snapshot hands it to
//! the service itself while still holding the node's lock, waiting for room in the apply channel
//! (the 6.5840 lab 3D deadlock: `applyCh <- msg` under `rf.mu` in InstallSnapshot). A service
//! that calls into the node from its apply loop while the channel is full (to see how large the
//! log is, or to take its own snapshot) waits for that lock, and the handler for the room only
//! the service can make.

use crate::shell::{Locked, Shell};
use threadsim::sync::MutexGuard;

/// Sends the snapshot (and the entries ready after it) with the lock held.
pub fn deliver(shell: &Shell, mut locked: MutexGuard<'_, Locked>) {
    let batch = shell.take_committed(&mut locked, shell.config.max_entries_per_apply_batch);
    let _ = shell.apply_sender.send_all(batch);
    drop(locked);
    shell.applier_wake.notify();
}
