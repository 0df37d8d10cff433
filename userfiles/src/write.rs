//! Writing a file a user names: whole or not at all, and never over anything but a regular file.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Something other than a regular file stands at the path: it is left alone.
    #[error("will not write {}: it is {kind}, and only a regular file is replaced", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What stands there.
        kind: &'static str,
    },
    /// Writing, flushing or renaming failed (a full disk, no permission, ...); the target is
    /// as it was.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// As an `io::Error` of the same kind, whose message names the path.
impl From<WriteError> for std::io::Error {
    fn from(error: WriteError) -> std::io::Error {
        let kind = match &error {
            WriteError::Io { source, .. } => source.kind(),
            WriteError::NotRegular { .. } => std::io::ErrorKind::AlreadyExists,
        };
        std::io::Error::new(kind, error)
    }
}

/// Refuses `path` as a place to write unless it is absent or a regular file: what
/// [`write_whole`] checks first, for a command to check before a long run rather than after.
pub fn check_replaceable(path: &Path) -> Result<(), WriteError> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if !metadata.file_type().is_file() => Err(WriteError::NotRegular {
            path: path.to_path_buf(),
            kind: crate::kind_of(metadata.file_type()),
        }),
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(WriteError::Io {
            path: path.to_path_buf(),
            source: error,
        }),
        _ => Ok(()),
    }
}

/// Writes `contents` to `path` whole or not at all (see the crate's documentation).
pub fn write_whole(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), WriteError> {
    write_whole_with_mode(path, contents.as_ref(), 0o666)
}

/// [`write_whole`] for a secret: the file is readable and writable by its owner only, from the
/// moment it is created.
pub fn write_whole_private(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), WriteError> {
    write_whole_with_mode(path, contents.as_ref(), 0o600)
}

/// [`write_whole`], the file created with `mode` (less the process's umask).
fn write_whole_with_mode(path: &Path, contents: &[u8], mode: u32) -> Result<(), WriteError> {
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    check_replaceable(path)?;
    let temporary = temporary_beside(path);
    let written = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(mode);
        }
        #[cfg(not(unix))]
        let _ = mode;
        let mut file = options.open(&temporary)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(io(error));
    }
    Ok(())
}

/// A name beside `path` for its new contents, unique to this process and call.
fn temporary_beside(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |name| name.to_string_lossy().into_owned());
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{}-{call}.partial", std::process::id()))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::scratch;

    #[test]
    fn a_regular_file_is_replaced_whole_and_nothing_is_left_beside_it() {
        let dir = scratch("replace");
        let path = dir.join("out.txt");
        write_whole(&path, "first").unwrap();
        write_whole(&path, "second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["out.txt"], "no temporary left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_link_a_device_and_a_folder_are_refused_and_left_as_they_were() {
        let dir = scratch("refuse");
        let target = dir.join("precious");
        std::fs::write(&target, "keep me").unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = write_whole(&link, "overwritten").unwrap_err();
        assert!(
            error.to_string().contains("it is a symbolic link"),
            "{error}"
        );
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
        let error = write_whole(Path::new("/dev/null"), "x").unwrap_err();
        assert!(error.to_string().contains("it is a device"), "{error}");
        let error = write_whole(&dir, "x").unwrap_err();
        assert!(error.to_string().contains("it is a folder"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_secret_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("private");
        let path = dir.join("key");
        write_whole_private(&path, "secret").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "secret");
    }

    #[test]
    fn a_write_that_fails_leaves_nothing_behind() {
        let dir = scratch("missing-dir");
        let error = write_whole(&dir.join("no-such-folder").join("f"), "x").unwrap_err();
        assert!(matches!(error, WriteError::Io { .. }), "{error}");
        let left = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(left, 0, "nothing written");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
