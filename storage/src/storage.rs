//! Which storage a server keeps its state in: the append-only log (the default) or the whole
//! state rewritten into one file on every save (what servers did before the log, kept for
//! comparison and for the tests of its broken writes).

use crate::file_persister::FilePersister;
use crate::wal::{WalError, WalPersister};
use node::Persister;
use std::path::Path;
use std::sync::Arc;

/// How a server stores its state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StorageKind {
    /// [`WalPersister`]: records of what changed, appended, fsyncs shared.
    #[default]
    Wal,
    /// [`FilePersister`]: the whole state in a new file on every save.
    StateFile,
}

impl StorageKind {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            StorageKind::Wal => "wal",
            StorageKind::StateFile => "file",
        }
    }

    /// Parses a name given on the command line.
    pub fn parse(text: &str) -> Result<StorageKind, UnknownStorageKind> {
        match text {
            "wal" => Ok(StorageKind::Wal),
            "file" => Ok(StorageKind::StateFile),
            _ => Err(UnknownStorageKind(text.to_string())),
        }
    }
}

/// A storage name that is neither `wal` nor `file`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: storage is wal (an append-only log) or file (the whole state per save)")]
pub struct UnknownStorageKind(pub String);

/// An open storage of either kind.
#[derive(Clone)]
pub enum Storage {
    /// The append-only log.
    Wal(Arc<WalPersister>),
    /// The whole-state file.
    StateFile(Arc<FilePersister>),
}

impl Storage {
    /// Opens `kind` in the data directory `dir`.
    pub fn open(kind: StorageKind, dir: &Path) -> Result<Storage, WalError> {
        Ok(match kind {
            StorageKind::Wal => Storage::Wal(Arc::new(WalPersister::open(dir)?)),
            StorageKind::StateFile if crate::wal::holds_a_log(dir) => {
                return Err(WalError::LogPresent {
                    dir: dir.to_path_buf(),
                })
            }
            StorageKind::StateFile => Storage::StateFile(Arc::new(FilePersister::open(dir)?)),
        })
    }

    /// The persister a node writes through.
    pub fn persister(&self) -> Arc<dyn Persister> {
        match self {
            Storage::Wal(wal) => wal.clone(),
            Storage::StateFile(file) => file.clone(),
        }
    }

    /// Makes every later write fail with EIO (a nemesis's disk fault).
    pub fn fail_writes(&self) {
        match self {
            Storage::Wal(wal) => wal.fail_writes(),
            Storage::StateFile(file) => file.fail_writes(),
        }
    }
}
