//! A data directory opened for one process: created durably if new, and held by a lock on its
//! `LOCK` file so a second server cannot share it.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Held locked while a persister uses the directory.
const LOCK: &str = "LOCK";
/// How long opening waits for a lock held by someone else before it says the directory is in
/// use.
const LOCK_PATIENCE: Duration = Duration::from_millis(500);
/// How long opening waits between two tries of the lock.
const LOCK_RETRY: Duration = Duration::from_millis(10);

/// Why a data directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The directory does not exist and cannot be created.
    #[error("cannot create the data directory {}: {source}", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The path exists and is not a directory.
    #[error("the data directory {} is not a directory", dir.display())]
    NotADirectory {
        /// The path.
        dir: PathBuf,
    },
    /// The directory exists but cannot be written (permissions, a read-only file system).
    #[error("cannot use the data directory {}: {source}", dir.display())]
    Unusable {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Another process holds the directory's lock: two nodes must never share one state.
    #[error("the data directory {} is in use by another process (it holds {LOCK})", dir.display())]
    InUse {
        /// The directory.
        dir: PathBuf,
    },
}

/// An open, locked data directory.
pub(crate) struct DataDir {
    /// The locked `LOCK` file; closing it releases the directory.
    pub lock: File,
}

impl DataDir {
    /// Opens (creating it if needed) the data directory `dir` and locks it for this process.
    pub fn open(dir: &Path) -> Result<DataDir, OpenError> {
        let unusable = |source| OpenError::Unusable {
            dir: dir.to_path_buf(),
            source,
        };
        if dir.exists() && !dir.is_dir() {
            return Err(OpenError::NotADirectory {
                dir: dir.to_path_buf(),
            });
        }
        let existed = dir.is_dir();
        fs::create_dir_all(dir).map_err(|source| OpenError::CreateDir {
            dir: dir.to_path_buf(),
            source,
        })?;
        if !existed {
            // The new directory's own entry must be durable too, or a power cut could take the
            // directory, and every state saved in it, away.
            let parent = dir.parent().filter(|parent| !parent.as_os_str().is_empty());
            File::open(parent.unwrap_or(Path::new(".")))
                .and_then(|parent| parent.sync_all())
                .map_err(unusable)?;
        }
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK))
            .map_err(unusable)?;
        // The lock belongs to the open file, which a child forked by any thread of this
        // process shares until it execs: a lock just released can look held for a moment.
        let mut waited = Duration::ZERO;
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if waited < LOCK_PATIENCE => {
                    #[allow(clippy::disallowed_methods)] // a real directory's lock, in real time
                    std::thread::sleep(LOCK_RETRY);
                    waited += LOCK_RETRY;
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(OpenError::InUse {
                        dir: dir.to_path_buf(),
                    })
                }
                Err(TryLockError::Error(source)) => return Err(unusable(source)),
            }
        }
        File::open(dir)
            .and_then(|directory| directory.sync_all())
            .map_err(unusable)?;
        Ok(DataDir { lock })
    }
}
