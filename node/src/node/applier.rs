//! The applier: hands committed entries to the service, in order, exactly once.

use super::shared::Shared;
use super::Step;
use crate::mutation::Mutation;

/// One pass of the applier: copies a batch of committed entries out under the lock (unless a
/// handler is delivering on its own thread: it wakes the applier for what it leaves) and sends
/// them after releasing it, so a service that calls into the node while handling an entry cannot
/// deadlock with the applier. Returns [`Step::Continue`] after delivering, [`Step::WaitUntil`]
/// when there is nothing to apply, [`Step::Exit`] when killed or the receiver is gone.
pub(super) fn step(shared: &Shared) -> Step {
    let lock_held = shared.config.mutations.has(Mutation::ApplyWithLockHeld);
    let mut held = None;
    let batch = {
        let mut inner = shared.lock();
        if let Some(step) = inner.gate() {
            return step;
        }
        if inner.delivering {
            // Another thread is handing entries over; it wakes the applier if more are left.
            return Step::WaitUntil(None);
        }
        let batch = shared.take_committed(&mut inner, shared.config.max_entries_per_apply_batch);
        assert!(!inner.delivering, "{}: two threads delivering", shared.id);
        inner.delivering = !batch.is_empty();
        if lock_held {
            // Broken: the batch is sent with the node's lock still held.
            held = Some(inner);
        }
        batch
    };
    if batch.is_empty() {
        return Step::WaitUntil(None);
    }
    // One wake-up of the service per batch, not one per entry.
    let sent = shared.apply_sender.send_all(batch).is_ok();
    match held {
        Some(mut inner) => inner.delivering = false,
        None => shared.lock().delivering = false,
    }
    if sent {
        Step::Continue
    } else {
        Step::Exit
    }
}
