//! The `--out` folder of a run: one run writes to it at a time, and what an earlier run wrote
//! there is removed when a new run starts, so the folder holds the last run's output. Only a
//! folder an interleave run claimed before (it holds the run's lock file, `.interleave.lock`)
//! has anything removed, and only the names the command writes: in a folder of the user's, a
//! file of one of those names is a refusal, never a deletion.

use std::path::{Path, PathBuf};

/// The lock file: held while a run writes into the folder, and the mark that a run has.
const LOCK_FILE: &str = ".interleave.lock";

/// A folder claimed for a run: held while the run may write into it, released when dropped or
/// when the process ends (however it ends: the lock is the operating system's); it knows what
/// an earlier run left there, for [`Claim::clear`] to remove when the run is ready to replace it.
#[derive(Debug)]
pub struct Claim {
    _lock: std::fs::File,
    /// What an earlier run left, not yet removed.
    left: Vec<std::fs::DirEntry>,
}

/// Why a run cannot have its output folder.
#[derive(Debug, thiserror::Error)]
pub enum OutDirError {
    /// A file stands where the folder should.
    #[error("{} is a file, not a folder for the run's output", .0.display())]
    IsAFile(PathBuf),
    /// The folder cannot be created, read, locked or cleared.
    #[error("cannot {doing} {}: {source}", .path.display())]
    Io {
        /// What could not be done.
        doing: &'static str,
        /// The folder or the file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The folder holds outputs no run wrote.
    #[error(
        "{} holds {} that no interleave run wrote (it has no {LOCK_FILE}): give the run a folder \
         of its own with --out, or move them away",
        .dir.display(),
        .names.join(", ")
    )]
    NotClaimedBefore {
        /// The folder.
        dir: PathBuf,
        /// What it holds.
        names: Vec<String>,
    },
    /// Another run holds the folder.
    #[error("another interleave run is writing to {}: give this one its own --out", .0.display())]
    Taken(PathBuf),
}

/// Creates `dir` and takes its lock; what an earlier run left in it (the entries whose names
/// `is_output` accepts) stays until [`Claim::clear`]. Refuses when another run holds the lock,
/// and when the folder holds such entries but no run claimed it before (they are not this
/// tool's to delete).
pub fn claim(dir: &Path, is_output: impl Fn(&str) -> bool) -> Result<Claim, OutDirError> {
    let io = |doing| {
        move |source| OutDirError::Io {
            doing,
            path: dir.to_path_buf(),
            source,
        }
    };
    if dir.exists() && !dir.is_dir() {
        return Err(OutDirError::IsAFile(dir.to_path_buf()));
    }
    std::fs::create_dir_all(dir).map_err(io("create"))?;
    let claimed_before = std::fs::symlink_metadata(dir.join(LOCK_FILE))
        .is_ok_and(|metadata| metadata.file_type().is_file());
    let mut left: Vec<std::fs::DirEntry> = std::fs::read_dir(dir)
        .map_err(io("read"))?
        .flatten()
        .filter(|entry| entry.file_name().to_str().is_some_and(&is_output))
        .collect();
    left.sort_by_key(std::fs::DirEntry::file_name);
    if !claimed_before && !left.is_empty() {
        let names: Vec<String> = left
            .iter()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        return Err(OutDirError::NotClaimedBefore {
            dir: dir.to_path_buf(),
            names,
        });
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK_FILE))
        .map_err(io("lock"))?;
    lock_exclusively(&file).map_err(|error| match error.kind() {
        std::io::ErrorKind::WouldBlock => OutDirError::Taken(dir.to_path_buf()),
        _ => io("lock")(error),
    })?;
    Ok(Claim { _lock: file, left })
}

impl Claim {
    /// Removes what the earlier run left whose names `which` accepts; returns how many.
    pub fn clear(&mut self, which: impl Fn(&str) -> bool) -> Result<usize, OutDirError> {
        let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.left)
            .into_iter()
            .partition(|entry| entry.file_name().to_str().is_some_and(&which));
        self.left = kept;
        for entry in &gone {
            let path = entry.path();
            let removed = if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            match removed {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                    return Err(OutDirError::Io {
                        doing: "remove",
                        path,
                        source: error,
                    })
                }
                _ => {}
            }
        }
        Ok(gone.len())
    }
}

/// Whether `name` is a seed's folder, as `chaos` writes them (`seed-12`).
pub fn is_seed_folder(name: &str) -> bool {
    name.strip_prefix("seed-")
        .is_some_and(|seed| !seed.is_empty() && seed.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(unix)]
fn lock_exclusively(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock on a descriptor this function borrows for the call; no memory is shared.
    let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Without `flock`, no lock: two runs into one folder are the user's to avoid.
#[cfg(not(unix))]
fn lock_exclusively(_file: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("interleave-out-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_second_claim_is_refused_and_an_earlier_runs_seed_folders_go() {
        let dir = scratch("claimed");
        std::fs::write(dir.join(LOCK_FILE), "").unwrap(); // an earlier run's
        std::fs::create_dir_all(dir.join("seed-12")).unwrap();
        std::fs::create_dir_all(dir.join("seed-notes")).unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let mut lock = claim(&dir, is_seed_folder).unwrap();
        assert!(dir.join("seed-12").exists(), "kept until the run clears it");
        assert_eq!(lock.clear(|_| true).unwrap(), 1);
        assert!(!dir.join("seed-12").exists());
        assert!(dir.join("seed-notes").exists() && dir.join("notes.txt").exists());
        let second = claim(&dir, is_seed_folder).unwrap_err();
        assert!(matches!(second, OutDirError::Taken(_)), "{second}");
        drop(lock);
        assert!(
            claim(&dir, is_seed_folder).is_ok(),
            "the lock goes with its holder"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_no_run_claimed_keeps_its_files_and_the_run_is_refused() {
        let dir = scratch("users");
        std::fs::write(dir.join("summary.txt"), "the user's own").unwrap();
        let refused = claim(&dir, |name| name == "summary.txt").unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("holds summary.txt that no interleave run wrote"),
            "{refused}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("summary.txt")).unwrap(),
            "the user's own"
        );
        assert!(!dir.join(LOCK_FILE).exists(), "not claimed");
        // A folder of the user's with nothing of the command's names is taken as it is.
        std::fs::remove_file(dir.join("summary.txt")).unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let mut lock = claim(&dir, |name| name == "summary.txt").unwrap();
        assert_eq!(lock.clear(|_| true).unwrap(), 0);
        assert!(dir.join("notes.txt").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
