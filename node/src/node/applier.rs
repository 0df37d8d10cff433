//! The applier: hands committed entries to the service, in order, exactly once.

use super::shared::Shared;
use super::{Applied, Step};
use crate::mutation::Mutation;
use crate::LogIndex;

/// One pass of the applier: copies a batch of committed entries out under the lock and sends
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
        let log = &inner.core.persistent().log;
        let ready = inner.core.commit_index().min(log.last_index());
        let limit = shared.config.max_entries_per_apply_batch as u64;
        let upto = LogIndex(ready.0.min(inner.last_applied.0 + limit));
        let batch: Vec<Applied> = (inner.last_applied.0 + 1..=upto.0)
            .map(|index| {
                let entry = log
                    .entry(LogIndex(index))
                    .expect("committed entry in the log");
                Applied {
                    index: LogIndex(index),
                    term: entry.term,
                    command: entry.command.clone(),
                }
            })
            .collect();
        if let Some(last) = batch.last() {
            inner.last_applied = last.index;
            // Replicators that held their next round for the applier may go on.
            let lost = shared.config.mutations.has(Mutation::LostRoundWakeup);
            if std::mem::take(&mut inner.rounds_held) && !lost {
                for signal in shared.peer_wake.values() {
                    signal.notify();
                }
            }
        }
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
    if shared.apply_sender.send_all(batch).is_err() {
        return Step::Exit;
    }
    drop(held);
    Step::Continue
}
