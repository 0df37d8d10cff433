//! [`WalPersister`]: a node's persistent state as an append-only log of what each save changed,
//! in segment files, with fsyncs shared among concurrent saves (group commit).
//!
//! A save appends one record (`record.rs`): the snapshot it points at (written to a file of its
//! own first, durably), a truncation of a conflicting suffix, the new entries, the term and
//! vote if they changed. Its fsync is shared ([`node::GroupCommit`]): the saves that arrive
//! while one is in flight share the next. A segment that grows past its size is closed and a
//! new one starts with a checkpoint (term, vote, snapshot), so once a later checkpoint's
//! snapshot covers every entry of a segment, the segment is deleted; old snapshot files go once
//! a newer one is durably referenced.
//!
//! Recovery (`recovery.rs`) replays the segments in order. A damaged record in the last segment
//! is a torn tail of a write that never returned: it is cut. Damage anywhere else, or a record
//! that cannot follow the ones before it, is refused with the file and the offset: those bytes
//! were acknowledged. See docs/storage.md for the format and the figures.

mod damage;
mod files;
mod flaws;
mod names;
mod record;
mod recovery;
mod writer;

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;

use crate::data_dir::OpenError;
use crate::filesystem::{DirectoryHold, Filesystem, RealFilesystem};
use node::persist::StateEncoder;
use node::{GroupCommit, GroupCommitStats, PersistentState, Persister, StorageError, WriteTicket};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use threadsim::sync::{Arc, Mutex};
use writer::Writer;

pub use damage::{Damage, RecordDamage, ReplayError};
pub use names::segment_name;

/// The size past which a segment is closed and a new one started.
pub const DEFAULT_SEGMENT_BYTES: u64 = 64 << 20;

/// Why a log cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum WalError {
    /// The data directory cannot be used.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// Acknowledged bytes are damaged: the node must not start on them.
    #[error("{}: damaged at offset {offset}: {why}", file.display())]
    Damaged {
        /// The file.
        file: PathBuf,
        /// Where in it.
        offset: u64,
        /// What is wrong.
        why: Damage,
    },
    /// A file the log needs is gone (deleted, or lost with its disk): what it held was
    /// acknowledged, so the node must not start as if it had never been written.
    #[error("{}: missing: {evidence}; restore it, or move the data directory away to start this node empty (as a new member)", file.display())]
    Missing {
        /// The file.
        file: PathBuf,
        /// How the log knows it existed.
        evidence: String,
    },
    /// A file cannot be read or written.
    #[error("{}: {source}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The directory holds the whole-state file of `--storage file`, which a log does not read.
    #[error(
        "{} holds a state file written by --storage file: start with --storage file, or move it away to start empty",
        file.display()
    )]
    StateFilePresent {
        /// The state file.
        file: PathBuf,
    },
    /// The directory holds a log, which `--storage file` does not read.
    #[error(
        "{} holds a log written by --storage wal: start with --storage wal, or move it away to start empty",
        dir.display()
    )]
    LogPresent {
        /// The data directory.
        dir: PathBuf,
    },
}

/// Whether `dir` holds a segment of a log.
pub fn holds_a_log(dir: &Path) -> bool {
    RealFilesystem.list(dir).is_ok_and(|names| {
        names
            .iter()
            .any(|name| matches!(names::parse_name(name), Some(names::Named::Segment(_))))
    })
}

/// What a log has done, for the figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Saves that wrote a record, and fsyncs run for them.
    pub group: GroupCommitStats,
    /// Bytes of records appended.
    pub bytes: u64,
    /// Segments created.
    pub segments_created: u64,
    /// Segments deleted once a checkpoint's snapshot covered them.
    pub segments_deleted: u64,
}

/// A node's state as an append-only log in a data directory (see the module's documentation).
pub struct WalPersister {
    filesystem: Arc<dyn Filesystem>,
    dir: PathBuf,
    /// Held while the log lives; dropping it releases the directory.
    _hold: DirectoryHold,
    writer: Mutex<Writer>,
    group: GroupCommit,
    /// Set by [`WalPersister::fail_writes`]: every later write fails with EIO.
    failing: AtomicBool,
}

impl WalPersister {
    /// Opens (creating it if needed) the data directory `dir`, locks it, and recovers its log:
    /// a torn tail is cut, files no record needs are deleted.
    pub fn open(dir: &Path) -> Result<WalPersister, WalError> {
        WalPersister::open_with_segment_size(dir, DEFAULT_SEGMENT_BYTES)
    }

    /// [`open`](Self::open), closing segments past `segment_bytes` (small in tests, so they
    /// roll over often).
    pub fn open_with_segment_size(
        dir: &Path,
        segment_bytes: u64,
    ) -> Result<WalPersister, WalError> {
        WalPersister::open_on(Arc::new(RealFilesystem), dir, segment_bytes)
    }

    /// [`open_with_segment_size`](Self::open_with_segment_size) on `filesystem`: the same
    /// engine on another disk (a [`crate::filesystem::MemoryFilesystem`] whose crashes a test
    /// or the simulation decides).
    pub fn open_on(
        filesystem: Arc<dyn Filesystem>,
        dir: &Path,
        segment_bytes: u64,
    ) -> Result<WalPersister, WalError> {
        assert!(
            segment_bytes <= files::MAX_ROLL_BYTES,
            "segments roll at {segment_bytes} bytes, past the most recovery reads ({})",
            files::MAX_ROLL_BYTES
        );
        let hold = filesystem.hold_directory(dir)?;
        let legacy = dir.join(crate::file_persister::STATE);
        let recovered = recovery::recover(&*filesystem, dir)?;
        if recovered.segments.is_empty() && filesystem.exists(&legacy) {
            return Err(WalError::StateFilePresent { file: legacy });
        }
        let writer = Writer::resume(filesystem.clone(), dir, recovered, segment_bytes)?;
        Ok(WalPersister {
            filesystem,
            dir: dir.to_path_buf(),
            _hold: hold,
            writer: Mutex::new(writer),
            group: GroupCommit::new(),
            failing: AtomicBool::new(false),
        })
    }

    /// [`open_with_segment_size`](Self::open_with_segment_size), appending in a deliberately
    /// broken way: records wait in a buffer of this process until 64 KiB have gathered, and a
    /// sync fsyncs the file without flushing it (a `BufWriter` never flushed before `fsync`), so
    /// a process killed after a save returned loses it. The crash test must catch it.
    #[cfg(feature = "mutations")]
    pub fn open_broken(dir: &Path, segment_bytes: u64) -> Result<WalPersister, WalError> {
        WalPersister::open_broken_on(Arc::new(RealFilesystem), dir, segment_bytes)
    }

    /// [`open_broken`](Self::open_broken) on `filesystem`.
    #[cfg(feature = "mutations")]
    pub fn open_broken_on(
        filesystem: Arc<dyn Filesystem>,
        dir: &Path,
        segment_bytes: u64,
    ) -> Result<WalPersister, WalError> {
        let wal = WalPersister::open_on(filesystem, dir, segment_bytes)?;
        wal.writer.lock().buffer_appends();
        Ok(wal)
    }

    /// Switches on the broken behaviours of the log the node mutations in `mutations` ask for
    /// (`roll-over-unsynced`, `segment-name-unsynced`, `snapshot-unsynced`; `flaws.rs`). Inert without the
    /// `mutations` feature, as every [`node::MutationSet`] is.
    pub fn break_as(&self, mutations: &node::MutationSet) {
        self.writer.lock().flaws = flaws::Flaws::of(mutations);
    }

    /// Makes every later write fail with EIO and write nothing, as a dying disk would (a
    /// nemesis's fault).
    pub fn fail_writes(&self) {
        self.failing.store(true, Ordering::SeqCst);
    }

    /// What the log has done so far.
    pub fn stats(&self) -> WalStats {
        let writer = self.writer.lock();
        WalStats {
            group: self.group.stats(),
            bytes: writer.bytes_appended,
            segments_created: writer.segments_created,
            segments_deleted: writer.segments_deleted,
        }
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn refuse_if_failing(&self) -> Result<(), StorageError> {
        if self.failing.load(Ordering::SeqCst) {
            let error = io::Error::from_raw_os_error(libc::EIO);
            return Err(StorageError::Io(format!(
                "appending to the log in {}: {error} (it writes nothing more after a write or \
                 sync that failed, or a disk fault asked for)",
                self.dir.display()
            )));
        }
        Ok(())
    }

    /// Makes every file written so far durable: the segments closed since the last fsync and
    /// the current one.
    ///
    /// A failed sync leaves the log's tail unknown (the kernel may have dropped the pages it
    /// could not write, and calls them clean): nothing more is written, so no record can follow
    /// the hole, and the node stops (every later wait fails, [`GroupCommit`]).
    fn fsync(&self) -> Result<(), StorageError> {
        let (files, flaws) = {
            let mut writer = self.writer.lock();
            (writer.files_to_sync(), writer.flaws)
        };
        for (path, file) in files {
            let mut synced = file.sync_data();
            if synced.is_err() && flaws.sync_error_retried {
                synced = file.sync_data();
            }
            if let Err(error) = synced {
                self.failing.store(true, Ordering::SeqCst);
                return Err(StorageError::Io(format!(
                    "syncing {}: {error}",
                    path.display()
                )));
            }
        }
        Ok(())
    }
}

impl Persister for WalPersister {
    /// Stores a whole encoded state (what the deliberately broken ways of persisting hand over):
    /// written as the difference from what the log holds, and synced.
    fn save(&self, bytes: &[u8]) -> Result<(), StorageError> {
        let state = PersistentState::decode(bytes)?;
        self.writer.lock().forget_what_the_node_saw();
        let ticket = self.write_state(&state, &mut StateEncoder::new())?;
        self.sync(ticket)
    }

    fn load(&self) -> Result<Option<Vec<u8>>, StorageError> {
        let _no_write_meanwhile = self.writer.lock();
        let recovered = recovery::recover(&*self.filesystem, &self.dir).map_err(storage_error)?;
        let state = recovered
            .state(&*self.filesystem, &self.dir)
            .map_err(storage_error)?;
        let empty = recovered.replay.is_empty();
        Ok((!empty).then(|| state.encode()))
    }

    /// Appends what changed since the last write (the encoder is not used: the log has its own
    /// form); durable once [`sync`](Persister::sync)ed.
    fn write_state(
        &self,
        state: &PersistentState,
        _encoder: &mut StateEncoder,
    ) -> Result<WriteTicket, StorageError> {
        self.refuse_if_failing()?;
        let mut writer = self.writer.lock();
        let wrote = writer.append(state).map_err(|error| {
            // A write that failed (a full disk, a dying one) may have left part of a record,
            // and the writer already counts what it meant to write as in the log: anything
            // written after it would follow a torn record, or leave out what the writer
            // thinks is there. The log writes nothing more; the node stops, and a restart
            // recovers from what the disk holds.
            self.failing.store(true, Ordering::SeqCst);
            StorageError::Io(format!(
                "appending to the log in {}: {error}",
                self.dir.display()
            ))
        })?;
        Ok(match wrote {
            writer::Appended::Records(records) => {
                let mut ticket = WriteTicket::DURABLE;
                for _ in 0..records {
                    ticket = self.group.wrote();
                }
                writer.note_ticket(ticket);
                ticket
            }
            writer::Appended::Nothing => self.group.last_written(),
        })
    }

    /// Yes: a write is an append without an fsync, so each client's proposal is written as it
    /// is made and concurrent proposals share the replicators' fsyncs.
    fn shares_fsyncs(&self) -> bool {
        true
    }

    fn sync(&self, ticket: WriteTicket) -> Result<(), StorageError> {
        self.group.wait_durable(ticket, || self.fsync())?;
        let due = self.writer.lock().deletions_due(self.group.durable());
        if !due.is_empty() {
            for path in &due {
                match self.filesystem.remove(path) {
                    Err(error) if error.kind() != io::ErrorKind::NotFound => {
                        return Err(StorageError::Io(format!(
                            "deleting {}: {error}",
                            path.display()
                        )))
                    }
                    _ => {}
                }
            }
            self.writer.lock().segments_deleted += due
                .iter()
                .filter(|path| path.extension().is_some_and(|ext| ext == "log"))
                .count() as u64;
        }
        Ok(())
    }
}

fn storage_error(error: WalError) -> StorageError {
    match error {
        WalError::Damaged { .. } => StorageError::Corrupt(error.to_string()),
        other => StorageError::Io(other.to_string()),
    }
}
