//! Group commit: two saves race on one append-only file. Under every interleaving each save
//! returns only after an fsync that started after its write, and the saves share fsyncs. The
//! broken variant (an fsync that publishes what was written when it ended) is rejected.
#![cfg(loom)]

use loom_tests::panic_message;
use node::{GroupCommit, StorageError};
use threadsim::sync::atomic::{AtomicU64, Ordering};
use threadsim::sync::{thread, Arc, Mutex};

/// A file that counts the writes it holds and the writes an fsync made durable.
#[derive(Default)]
struct File {
    /// Serializes the writes, as a persister's write lock does.
    appending: Mutex<()>,
    written: AtomicU64,
    durable: AtomicU64,
}

impl File {
    /// An fsync: what the file held when it started becomes durable once it returns.
    fn fsync(&self) -> Result<(), StorageError> {
        let held = self.written.load(Ordering::SeqCst);
        self.durable.fetch_max(held, Ordering::SeqCst);
        Ok(())
    }
}

/// Two are enough for every shape: one saver's write lands while the other's fsync runs, or
/// before it starts. (Three take loom over 20 minutes.)
const SAVES: u64 = 2;

fn concurrent_saves(make: fn() -> GroupCommit) {
    loom::model(move || {
        let file = Arc::new(File::default());
        let group = Arc::new(make());
        let savers: Vec<_> = (0..SAVES)
            .map(|_| {
                let (file, group) = (file.clone(), group.clone());
                thread::spawn(move || {
                    let (position, ticket) = {
                        let _appending = file.appending.lock();
                        let position = file.written.fetch_add(1, Ordering::SeqCst) + 1;
                        (position, group.wrote())
                    };
                    group
                        .wait_durable(ticket, || file.fsync())
                        .expect("no failure");
                    assert!(
                        file.durable.load(Ordering::SeqCst) >= position,
                        "save {position} returned before an fsync covered it"
                    );
                })
            })
            .collect();
        for saver in savers {
            saver.join().expect("a saver");
        }
        let stats = group.stats();
        assert_eq!(stats.writes, SAVES);
        assert!(
            (1..=SAVES).contains(&stats.syncs),
            "{} fsyncs for {SAVES} saves",
            stats.syncs
        );
    });
}

#[test]
fn every_save_returns_after_an_fsync_that_covers_it() {
    concurrent_saves(GroupCommit::new);
}

#[test]
fn an_fsync_that_publishes_what_was_written_when_it_ended_is_caught() {
    let caught = std::panic::catch_unwind(|| concurrent_saves(GroupCommit::marking_durable_late))
        .expect_err("the broken group commit passed the model");
    let message = panic_message(&*caught);
    assert!(
        message.contains("returned before an fsync covered it"),
        "{message}"
    );
}
