//! Reading a file a user names: bounded, and only a regular file.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Opening or reading failed (not found, no permission, ...).
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// What stands there is not a regular file.
    #[error("cannot read {}: it is {kind}, not a regular file", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The file is longer than the caller allows.
    #[error("cannot read {}: it is larger than the limit of {limit} bytes", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// The file is not UTF-8 text ([`read_text`]).
    #[error("cannot read {}: it is not UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
}

impl ReadError {
    /// Whether the file is simply not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Opens `path` for reading without blocking (a FIFO opened for reading waits for a writer;
/// with `O_NONBLOCK` it does not), and checks what was opened is a regular file, or with
/// `pipes` a FIFO (reopened to read it as pipes are read: waiting for its writer).
fn open_regular(path: &Path, pipes: bool) -> Result<File, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(io)?;
    let file_type = file.metadata().map_err(io)?.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if pipes && file_type.is_fifo() {
            return File::open(path).map_err(io);
        }
    }
    if !file_type.is_file() {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind: crate::kind_of(file_type),
        });
    }
    Ok(file)
}

/// The bytes of the regular file at `path`, refused if there are more than `limit`.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    read_from(open_regular(path, false)?, path, limit)
}

/// [`read_limited`] that also reads a pipe (`/dev/stdin`, a shell's `<(...)`, a FIFO), as a
/// command reading its input does; devices and folders are still refused.
pub fn read_limited_or_pipe(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    read_from(open_regular(path, true)?, path, limit)
}

fn read_from(file: File, path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    // A regular file says its length: one past the limit is refused before a byte is read
    // (a sparse file of gigabytes costs nothing). The read below still stops at the limit, for
    // a file that grows meanwhile and for pipes.
    let told = file.metadata().map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if told.is_file() && told.len() > limit {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(bytes)
}

/// [`read_limited`], as UTF-8 text.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    String::from_utf8(read_limited(path, limit)?).map_err(|_| ReadError::NotText {
        path: path.to_path_buf(),
    })
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::scratch;

    #[test]
    fn a_file_within_the_limit_is_read_and_one_byte_more_is_refused() {
        let dir = scratch("limit");
        let path = dir.join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_limited(&path, 5).unwrap(), b"12345");
        let error = read_limited(&path, 4).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("larger than the limit of 4 bytes"),
            "{error}"
        );
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_text(&path, 10),
            Err(ReadError::NotText { .. })
        ));
        assert!(read_limited(&dir.join("absent"), 10)
            .unwrap_err()
            .is_not_found());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_device_a_folder_and_a_fifo_without_a_writer_are_refused_at_once() {
        let error = read_limited(Path::new("/dev/zero"), 10).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot read /dev/zero: it is a device, not a regular file"
        );
        let dir = scratch("kinds");
        let error = read_limited(&dir, 10).unwrap_err();
        assert!(error.to_string().contains("it is a folder"), "{error}");
        let link = dir.join("zero");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(matches!(
            read_limited(&link, 10),
            Err(ReadError::NotRegular {
                kind: "a device",
                ..
            })
        ));
        let fifo = dir.join("fifo");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: creates a FIFO at a path this test owns.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        // Without a writer a plain open would wait forever; this one answers at once.
        let error = read_limited(&fifo, 10).unwrap_err();
        assert!(error.to_string().contains("it is a FIFO"), "{error}");
        // Where pipes are allowed, a FIFO is read, within the limit.
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, b"through a pipe").unwrap())
        };
        assert_eq!(read_limited_or_pipe(&fifo, 100).unwrap(), b"through a pipe");
        writer.join().unwrap();
        assert!(
            read_limited_or_pipe(Path::new("/dev/zero"), 10).is_err(),
            "still a device"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
