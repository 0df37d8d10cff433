//! The `--out` folder of a chaos run: one run writes to it at a time, and the seed folders an
//! earlier run left there are removed when a new run starts, so what the folder holds is the
//! failing seeds of the last run, and nothing else.

use std::path::Path;

/// A file every seed folder holds (see [`crate::failure_folder`]): how a folder is known to be
/// one this tool wrote.
const SEED_FOLDER_MARK: &str = "violation.txt";

/// Held while a run may write into the folder; released when dropped or when the process ends
/// (however it ends: the lock is the operating system's).
#[derive(Debug)]
pub struct OutLock {
    _file: std::fs::File,
}

/// Creates `dir`, takes its lock, and removes the seed folders an earlier run left in it;
/// returns the lock and how many folders were removed. Refuses when another run holds the lock.
pub fn claim(dir: &Path) -> Result<(OutLock, usize), String> {
    let shown = dir.display();
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "{shown} is a file, not a folder for the run's output"
        ));
    }
    std::fs::create_dir_all(dir).map_err(|error| format!("cannot create {shown}: {error}"))?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".interleave.lock"))
        .map_err(|error| format!("cannot lock {shown}: {error}"))?;
    lock_exclusively(&file).map_err(|error| match error.kind() {
        std::io::ErrorKind::WouldBlock => {
            format!("another interleave run is writing to {shown}: give this one its own --out")
        }
        _ => format!("cannot lock {shown}: {error}"),
    })?;
    let mut removed = 0;
    let entries =
        std::fs::read_dir(dir).map_err(|error| format!("cannot read {shown}: {error}"))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_seed_folder = name
            .to_str()
            .and_then(|name| name.strip_prefix("seed-"))
            .is_some_and(|seed| !seed.is_empty() && seed.bytes().all(|b| b.is_ascii_digit()))
            && entry.path().join(SEED_FOLDER_MARK).is_file();
        if is_seed_folder {
            std::fs::remove_dir_all(entry.path())
                .map_err(|error| format!("cannot remove {}: {error}", entry.path().display()))?;
            removed += 1;
        }
    }
    Ok((OutLock { _file: file }, removed))
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

    #[test]
    fn a_second_claim_is_refused_and_old_seed_folders_go() {
        let dir = std::env::temp_dir().join(format!("interleave-out-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("seed-12")).unwrap();
        std::fs::write(dir.join("seed-12").join(SEED_FOLDER_MARK), "old").unwrap();
        std::fs::create_dir_all(dir.join("seed-notes")).unwrap();
        std::fs::create_dir_all(dir.join("seed-13")).unwrap(); // not ours: no mark
        let (lock, removed) = claim(&dir).unwrap();
        assert_eq!(removed, 1);
        assert!(!dir.join("seed-12").exists());
        assert!(dir.join("seed-notes").exists() && dir.join("seed-13").exists());
        let second = claim(&dir).unwrap_err();
        assert!(second.contains("another interleave run"), "{second}");
        drop(lock);
        assert!(claim(&dir).is_ok(), "the lock goes with its holder");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
