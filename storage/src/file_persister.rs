//! [`FilePersister`]: a node's persistent state in a file of a data directory, replaced
//! atomically so that a process killed at any point leaves the old state or the new one.
//!
//! A save writes the framed state ([`crate::encode_state_file`]) to `state.tmp`, `fdatasync`s
//! it, renames it over `state` and `fsync`s the directory, so the rename itself is durable.
//! Only then does it return, and only then may the node answer. A `LOCK` file, held locked
//! while the persister lives, keeps a second server off the same directory.

use crate::data_dir::OpenError;
use crate::filesystem::{DirectoryHold, Filesystem, RealFilesystem};
use crate::state_file::{decode_state_file, encode_state_file};
use node::{Persister, StorageError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use threadsim::sync::{Arc, Mutex};

/// The state, in the data directory.
pub(crate) const STATE: &str = "state";
/// Where the next state is written before it is renamed over [`STATE`].
const STATE_TMP: &str = "state.tmp";
/// Deliberately broken ways of writing the state, which the crash test must catch.
#[cfg(feature = "mutations")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokenWrite {
    /// Truncates the state file and writes the new state into it: a process killed mid-write
    /// leaves a torn file, which a restart refuses.
    InPlace,
    /// Acknowledges a save before writing it: the bytes wait in memory until the next save (as
    /// in a writer that buffers), so a process killed after the acknowledgement loses them.
    AckBeforeWrite,
    /// Reports a write the disk refused as made: the node goes on as if its state were durable
    /// (what the nemesis's disk fault must catch).
    IgnoreFailures,
    /// Renames the new state over the old without syncing the directory: a process killed
    /// keeps the rename, but a power cut may undo it (what the nemesis's power cut must catch).
    NoDirSync,
}

/// Stores a node's state in `state` in a data directory (see the module's documentation).
pub struct FilePersister {
    filesystem: Arc<dyn Filesystem>,
    dir: PathBuf,
    state: PathBuf,
    state_tmp: PathBuf,
    /// Held while the persister lives; dropping it releases the directory.
    _hold: DirectoryHold,
    /// Serializes saves; the broken [`BrokenWrite::AckBeforeWrite`] keeps its owed bytes here.
    owed: Mutex<Option<Vec<u8>>>,
    /// Set by [`FilePersister::fail_writes`]: every later save fails with EIO.
    failing: AtomicBool,
    #[cfg(feature = "mutations")]
    broken: Option<BrokenWrite>,
}

impl FilePersister {
    /// Opens (creating it if needed) the data directory `dir` and locks it for this process. A
    /// `state.tmp` left by a process killed mid-save is removed: the save it held never
    /// returned.
    pub fn open(dir: &Path) -> Result<FilePersister, OpenError> {
        FilePersister::open_on(Arc::new(RealFilesystem), dir)
    }

    /// [`open`](Self::open) on `filesystem`.
    pub fn open_on(
        filesystem: Arc<dyn Filesystem>,
        dir: &Path,
    ) -> Result<FilePersister, OpenError> {
        let hold = filesystem.hold_directory(dir)?;
        let unusable = |source| OpenError::Unusable {
            dir: dir.to_path_buf(),
            source,
        };
        let state_tmp = dir.join(STATE_TMP);
        match filesystem.remove(&state_tmp) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(unusable(error)),
            _ => {}
        }
        Ok(FilePersister {
            filesystem,
            dir: dir.to_path_buf(),
            state: dir.join(STATE),
            state_tmp,
            _hold: hold,
            owed: Mutex::new(None),
            failing: AtomicBool::new(false),
            #[cfg(feature = "mutations")]
            broken: None,
        })
    }

    /// [`open`](Self::open), writing the state in a deliberately broken way.
    #[cfg(feature = "mutations")]
    pub fn open_broken(dir: &Path, broken: BrokenWrite) -> Result<FilePersister, OpenError> {
        FilePersister::open_broken_on(Arc::new(RealFilesystem), dir, broken)
    }

    /// [`open_broken`](Self::open_broken) on `filesystem`.
    #[cfg(feature = "mutations")]
    pub fn open_broken_on(
        filesystem: Arc<dyn Filesystem>,
        dir: &Path,
        broken: BrokenWrite,
    ) -> Result<FilePersister, OpenError> {
        let mut persister = FilePersister::open_on(filesystem, dir)?;
        persister.broken = Some(broken);
        Ok(persister)
    }

    /// Makes every later save fail with EIO and write nothing, as a dying disk would (a
    /// nemesis's fault). A save already under way finishes.
    pub fn fail_writes(&self) {
        self.failing.store(true, Ordering::SeqCst);
    }

    /// The state file's path.
    pub fn state_path(&self) -> &Path {
        &self.state
    }

    /// Writes `file` to `state.tmp`, makes it durable, renames it over `state` and makes the
    /// rename durable.
    fn replace(&self, file: &[u8]) -> Result<(), StorageError> {
        self.rename_into_place(file)?;
        self.filesystem.sync_directory(&self.dir).map_err(|error| {
            StorageError::Io(format!(
                "syncing the directory of {}: {error}",
                self.state.display()
            ))
        })
    }

    /// Writes `file` to `state.tmp`, makes it durable and renames it over `state` (durable
    /// once the directory is synced).
    fn rename_into_place(&self, file: &[u8]) -> Result<(), StorageError> {
        let failed = |path: &Path, what: &str, error: io::Error| {
            StorageError::Io(format!("{what} {}: {error}", path.display()))
        };
        self.filesystem
            .write_synced(&self.state_tmp, file)
            .map_err(|error| failed(&self.state_tmp, "writing", error))?;
        self.filesystem
            .rename(&self.state_tmp, &self.state)
            .map_err(|error| failed(&self.state, "renaming over", error))
    }

    #[cfg(feature = "mutations")]
    fn save_broken(
        &self,
        broken: BrokenWrite,
        file: Vec<u8>,
        owed: &mut Option<Vec<u8>>,
    ) -> Result<(), StorageError> {
        match broken {
            BrokenWrite::InPlace => self
                .filesystem
                .write_synced(&self.state, &file)
                .map_err(|error| StorageError::Io(error.to_string())),
            BrokenWrite::IgnoreFailures => self.replace(&file),
            BrokenWrite::NoDirSync => self.rename_into_place(&file),
            BrokenWrite::AckBeforeWrite => match owed.replace(file) {
                Some(earlier) => self.replace(&earlier),
                None => Ok(()),
            },
        }
    }
}

impl Persister for FilePersister {
    fn save(&self, bytes: &[u8]) -> Result<(), StorageError> {
        if self.failing.load(Ordering::SeqCst) {
            #[cfg(feature = "mutations")]
            if self.broken == Some(BrokenWrite::IgnoreFailures) {
                return Ok(());
            }
            let error = io::Error::from_raw_os_error(libc::EIO);
            return Err(StorageError::Io(format!(
                "writing {}: {error} (a fault injected on request)",
                self.state_tmp.display()
            )));
        }
        let file = encode_state_file(bytes);
        #[cfg(feature = "mutations")]
        if let Some(broken) = self.broken {
            return self.save_broken(broken, file, &mut self.owed.lock());
        }
        let owed = self.owed.lock();
        debug_assert!(owed.is_none(), "a correct save owes nothing");
        self.replace(&file)
    }

    fn load(&self) -> Result<Option<Vec<u8>>, StorageError> {
        let _no_save_meanwhile = self.owed.lock();
        // The body's limit, and the header and trailer around it.
        let limit = crate::MAX_STATE_BYTES + 64;
        let file = match self.filesystem.read(&self.state, limit) {
            Ok(file) => file,
            Err(error) if error.is_not_found() => return Ok(None),
            Err(error) => return Err(StorageError::Io(error.to_string())),
        };
        decode_state_file(&file)
            .map(|body| Some(body.to_vec()))
            .map_err(|what| StorageError::Corrupt(format!("{}: {what}", self.state.display())))
    }
}
