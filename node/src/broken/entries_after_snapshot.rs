//! `entries-after-snapshot`: a handler that installed a leader's snapshot hands it to the
//! service at once, even while the applier is still sending entries it took before the snapshot
//! (it ignores the delivery token). The two sends race: the entries can reach the service after
//! the snapshot that covers them, taking its state back.

use crate::shell::{Locked, Shell};
use threadsim::sync::MutexGuard;

/// Hands the installed snapshot over from this handler's thread, after releasing the lock,
/// whoever else is delivering.
pub fn deliver_now(shell: &Shell, mut locked: MutexGuard<'_, Locked>) {
    let batch = shell.take_committed(&mut locked, 1);
    drop(locked);
    let _ = shell.apply_sender.send_all(batch);
    shell.applier_wake.notify();
}
