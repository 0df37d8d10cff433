//! The one way Interleave reads a file a user names, and the one way it writes one.
//!
//! - [`read_limited`] / [`read_text`]: at most a given number of bytes, and only from a regular
//!   file: a FIFO, a device (`/dev/zero`), a socket or a folder is refused with a clear error
//!   before anything is read, and opening never blocks (a FIFO with no writer would hang a plain
//!   `open`). A link to one of those is refused the same way.
//! - [`write_whole`]: the new contents in a temporary file beside the target (created
//!   exclusively, so a planted link there is never followed), flushed to disk, then renamed over
//!   the target, so a reader sees the old file or the new one, never half of one; and the target
//!   may only be absent or a regular file: a link, a device, a FIFO or a folder in its place is
//!   refused, not replaced.
//!
//! ```
//! let dir = std::env::temp_dir().join(format!("userfiles-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("note.txt");
//! userfiles::write_whole(&path, "hello\n").unwrap();
//! assert_eq!(userfiles::read_text(&path, 1024).unwrap(), "hello\n");
//! assert!(userfiles::read_text(&path, 3).is_err(), "over the limit");
//! assert!(userfiles::read_limited(std::path::Path::new("/dev/zero"), 1024).is_err());
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

#![deny(missing_docs)]

mod read;
mod write;

pub use read::{read_limited, read_limited_or_pipe, read_text, ReadError};
pub use write::{check_replaceable, write_whole, write_whole_private, WriteError};

/// An empty folder of this test's own, `name` telling tests apart.
#[cfg(all(test, not(any(loom, shuttle))))]
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("userfiles-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What stands at a path, in words, for an error message.
fn kind_of(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a folder"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}
