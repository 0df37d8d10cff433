//! [`GroupCommit`]: saves that arrive while an fsync is in flight share the next one.
//!
//! A persister that appends to a log calls [`GroupCommit::wrote`] after each write has reached
//! the file (under its own write lock), and a save waits with [`GroupCommit::wait_durable`]. The
//! first waiter to find no fsync in flight becomes the syncer: it notes how much has been
//! written, syncs without any lock held, and publishes that mark as durable; the waiters whose
//! writes it covered return, the others wait for the next round (which one of them leads). So a
//! save returns only after an fsync that started after its write, and a burst of concurrent
//! saves costs two fsyncs, not one each. The loom model `loom-tests/tests/group_commit.rs`
//! checks this under every interleaving.

use super::StorageError;
use threadsim::sync::{Condvar, Mutex};

/// A write a persister has made, not necessarily durable yet: the count of writes up to and
/// including it. [`WriteTicket::DURABLE`] is one that is durable already (a persister that syncs
/// in every write hands it out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct WriteTicket(pub u64);

impl WriteTicket {
    /// A write already durable when it returned.
    pub const DURABLE: WriteTicket = WriteTicket(0);
}

/// Where the writes stand.
#[derive(Debug, Default)]
struct Progress {
    /// Writes made (the last ticket handed out).
    written: u64,
    /// Writes covered by a completed fsync.
    durable: u64,
    /// A syncer is running an fsync.
    syncing: bool,
    /// The fsyncs run.
    syncs: u64,
    /// An fsync failed: what was not durable then never will be, and every later wait fails.
    failed: Option<StorageError>,
}

/// Shares fsyncs among concurrent saves (see the module's documentation).
#[derive(Debug, Default)]
pub struct GroupCommit {
    progress: Mutex<Progress>,
    round_done: Condvar,
    /// Broken (only with the `mutations` feature): an fsync publishes as durable what was
    /// written when it *ended*, so writes made during it return without an fsync after them.
    marks_durable_late: bool,
}

/// What a [`GroupCommit`] has done, for the figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// Writes made.
    pub writes: u64,
    /// Fsyncs run.
    pub syncs: u64,
}

impl GroupCommit {
    /// Nothing written yet.
    pub fn new() -> GroupCommit {
        GroupCommit::default()
    }

    /// The broken variant the loom model must reject (see `marks_durable_late`).
    #[cfg(feature = "mutations")]
    pub fn marking_durable_late() -> GroupCommit {
        GroupCommit {
            marks_durable_late: true,
            ..GroupCommit::default()
        }
    }

    /// Records a write that has reached the file (call it under the lock that orders the
    /// writes, after the write) and returns its ticket.
    pub fn wrote(&self) -> WriteTicket {
        let mut progress = self.progress.lock();
        progress.written += 1;
        WriteTicket(progress.written)
    }

    /// Returns once `ticket`'s write is durable: at once if it already is, else after an fsync
    /// that started after the write. `sync` makes durable everything written before it is
    /// called; the caller that finds no fsync in flight runs it, with no lock held. A failed
    /// fsync fails this wait and every later one.
    pub fn wait_durable(
        &self,
        ticket: WriteTicket,
        sync: impl FnOnce() -> Result<(), StorageError>,
    ) -> Result<(), StorageError> {
        let mut sync = Some(sync);
        let mut progress = self.progress.lock();
        assert!(
            ticket.0 <= progress.written,
            "ticket {} was never handed out ({} writes)",
            ticket.0,
            progress.written
        );
        loop {
            if progress.durable >= ticket.0 {
                return Ok(());
            }
            if let Some(error) = &progress.failed {
                return Err(error.clone());
            }
            if progress.syncing {
                progress = self.round_done.wait(progress);
                continue;
            }
            // Everything written so far is in the file: one fsync from now covers it.
            let target = progress.written;
            progress.syncing = true;
            drop(progress);
            let outcome = sync.take().expect("a waiter syncs at most once")();
            progress = self.progress.lock();
            progress.syncing = false;
            progress.syncs += 1;
            let target = if self.marks_durable_late {
                progress.written
            } else {
                target
            };
            match outcome {
                Ok(()) => {
                    assert!(target >= progress.durable, "durability went backwards");
                    progress.durable = target;
                }
                Err(error) => progress.failed = Some(error),
            }
            self.round_done.notify_all();
        }
    }

    /// The ticket of the last write (durable once [`wait_durable`](Self::wait_durable) of it
    /// returns): for a save that found nothing to write.
    pub fn last_written(&self) -> WriteTicket {
        WriteTicket(self.progress.lock().written)
    }

    /// The last write a completed fsync covered.
    pub fn durable(&self) -> WriteTicket {
        WriteTicket(self.progress.lock().durable)
    }

    /// Writes made and fsyncs run so far.
    pub fn stats(&self) -> GroupCommitStats {
        let progress = self.progress.lock();
        GroupCommitStats {
            writes: progress.written,
            syncs: progress.syncs,
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_lone_save_syncs_once_and_a_durable_one_not_at_all() {
        let group = GroupCommit::new();
        let ticket = group.wrote();
        let mut syncs = 0;
        group
            .wait_durable(ticket, || {
                syncs += 1;
                Ok(())
            })
            .unwrap();
        group
            .wait_durable(ticket, || panic!("synced again"))
            .unwrap();
        group
            .wait_durable(WriteTicket::DURABLE, || panic!("synced"))
            .unwrap();
        assert_eq!(syncs, 1);
        assert_eq!(
            group.stats(),
            GroupCommitStats {
                writes: 1,
                syncs: 1
            }
        );
    }

    #[test]
    fn one_sync_covers_every_write_before_it() {
        let group = GroupCommit::new();
        let first = group.wrote();
        let second = group.wrote();
        group.wait_durable(second, || Ok(())).unwrap();
        group.wait_durable(first, || panic!("covered")).unwrap();
        assert_eq!(group.stats().syncs, 1);
    }

    #[test]
    fn a_failed_sync_fails_every_later_wait() {
        let group = GroupCommit::new();
        let ticket = group.wrote();
        let error = StorageError::Io("EIO".into());
        assert_eq!(
            group.wait_durable(ticket, || Err(error.clone())),
            Err(error.clone())
        );
        let later = group.wrote();
        assert_eq!(group.wait_durable(later, || Ok(())), Err(error));
    }

    #[test]
    #[should_panic(expected = "never handed out")]
    fn a_ticket_from_elsewhere_is_a_bug() {
        GroupCommit::new()
            .wait_durable(WriteTicket(3), || Ok(()))
            .unwrap();
    }
}
