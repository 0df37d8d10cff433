//! The applier thread: hands committed entries to the service, in order, exactly once.

use super::shared::Shared;
use super::Applied;
use crate::LogIndex;

/// Runs until the node is killed or the service drops its receiver. Entries are copied out under
/// the lock and sent after releasing it, so a service that calls into the node while handling an
/// entry cannot deadlock with the applier.
pub(super) fn run(shared: &Shared) {
    loop {
        let batch = {
            let mut inner = shared.lock();
            if inner.killed {
                return;
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
            }
            batch
        };
        if batch.is_empty() {
            shared.applier_wake.wait();
            continue;
        }
        for applied in batch {
            if shared.apply_sender.send(applied).is_err() {
                return;
            }
        }
    }
}
