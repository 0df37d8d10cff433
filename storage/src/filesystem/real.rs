//! [`RealFilesystem`]: the operating system's files, as the server uses them.

use super::{AppendFile, DirectoryHold, Filesystem};
use crate::data_dir::DataDir;
use crate::data_dir::OpenError;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// The operating system's files: every call is the system call it names, and a sync is
/// `fdatasync` or `fsync`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealFilesystem;

impl AppendFile for File {
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        let mut file = self;
        file.write_all(bytes)
    }

    fn sync_data(&self) -> io::Result<()> {
        File::sync_data(self)
    }
}

impl Filesystem for RealFilesystem {
    fn hold_directory(&self, dir: &Path) -> Result<DirectoryHold, OpenError> {
        let DataDir { lock } = DataDir::open(dir)?;
        Ok(Box::new(lock))
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            if let Ok(name) = entry?.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn len(&self, path: &Path) -> io::Result<u64> {
        Ok(fs::metadata(path)?.len())
    }

    fn read(&self, path: &Path, limit: u64) -> Result<Vec<u8>, userfiles::ReadError> {
        userfiles::read_limited(path, limit)
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)?;
        Ok(Box::new(file))
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        let file = OpenOptions::new().append(true).open(path)?;
        Ok(Box::new(file))
    }

    fn write_synced(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut file = File::create(path)?;
        file.write_all(bytes)?;
        file.sync_data()
    }

    fn truncate_synced(&self, path: &Path, len: u64) -> io::Result<()> {
        let file = OpenOptions::new().write(true).open(path)?;
        file.set_len(len)?;
        file.sync_all()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn sync_directory(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
}
