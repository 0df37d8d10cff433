//! The applier: hands committed entries to the service, in order, exactly once.

use super::state::Shell;
use super::Pass;
use crate::broken;
use crate::mutation::Mutation;

/// One pass of the applier: copies a batch of committed entries out under the lock (unless a
/// handler is delivering on its own thread: it wakes the applier for what it leaves) and sends
/// them after releasing it, so a service that calls into the node while handling an entry cannot
/// deadlock with the applier. Returns [`Pass::Again`] after delivering, [`Pass::WaitUntil`]
/// when there is nothing to apply, [`Pass::Exit`] when stopped or the receiver is gone.
pub(super) fn pass(shell: &Shell) -> Pass {
    if shell.config.mutations.has(Mutation::ApplyWithLockHeld) {
        return broken::apply_with_lock_held::applier_pass(shell);
    }
    let batch = {
        let mut locked = shell.lock();
        if let Some(pass) = locked.gate() {
            return pass;
        }
        if locked.delivering {
            // Another thread is handing entries over; it wakes the applier if more are left.
            return Pass::WaitUntil(None);
        }
        let batch = shell.take_committed(&mut locked, shell.config.max_entries_per_apply_batch);
        locked.delivering = !batch.is_empty();
        batch
    };
    if batch.is_empty() {
        return Pass::WaitUntil(None);
    }
    // One wake-up of the service per batch, not one per entry.
    let sent = shell.apply_sender.send_all(batch).is_ok();
    shell.lock().delivering = false;
    if sent {
        Pass::Again
    } else {
        Pass::Exit
    }
}
