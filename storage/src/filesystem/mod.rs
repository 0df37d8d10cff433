//! The filesystem the storage engine writes through: the few calls it makes and nothing else,
//! so the engine that ships runs on real files ([`RealFilesystem`]) and, unchanged, on a disk
//! whose crashes a test or a simulation controls ([`MemoryFilesystem`]).
//!
//! What each call promises is what a POSIX filesystem promises, no more: bytes appended or a
//! file written are durable once that file is synced; a new name, a rename or a removal is
//! durable once its directory is synced. An implementation may lose anything not yet durable
//! at a crash, and the engine must not notice the difference before one.

mod memory;
mod real;

pub use memory::{CrashLoss, MemoryFilesystem};
pub use real::RealFilesystem;

use crate::data_dir::OpenError;
use std::io;
use std::path::Path;

/// A file the engine appends to (a log segment), open until dropped.
pub trait AppendFile: Send + Sync {
    /// Appends all of `bytes` at the end of the file.
    fn append(&self, bytes: &[u8]) -> io::Result<()>;
    /// Makes every byte appended so far durable (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
}

/// Held while a persister uses a data directory; dropping it releases the directory.
pub type DirectoryHold = Box<dyn Send + Sync>;

/// What the storage engine asks of a filesystem (see the module's documentation).
pub trait Filesystem: Send + Sync {
    /// Creates `dir` if it is missing (durably: its parent synced) and holds it for this
    /// process until the hold is dropped; a directory another holder has is refused
    /// ([`OpenError::InUse`]).
    fn hold_directory(&self, dir: &Path) -> Result<DirectoryHold, OpenError>;
    /// The names in `dir` that are UTF-8 (the engine names its files so; others are not its).
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Whether something is at `path`.
    fn exists(&self, path: &Path) -> bool;
    /// The length of the file at `path`.
    fn len(&self, path: &Path) -> io::Result<u64>;
    /// The bytes of the regular file at `path`, refused unread if it holds more than `limit`
    /// (or is not a regular file).
    fn read(&self, path: &Path, limit: u64) -> Result<Vec<u8>, userfiles::ReadError>;
    /// A new, empty file at `path` to append to; fails if something is there.
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>>;
    /// The existing file at `path`, to append to at its end.
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn AppendFile>>;
    /// Makes the file at `path` hold exactly `bytes`, and makes them durable (the name is
    /// durable once the directory is synced).
    fn write_synced(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// Cuts the file at `path` to `len` bytes, durably.
    fn truncate_synced(&self, path: &Path, len: u64) -> io::Result<()>;
    /// Renames `from` over `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes the file at `path`.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Makes every name created, renamed or removed in `dir` durable.
    fn sync_directory(&self, dir: &Path) -> io::Result<()>;
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
