//! [`MemoryFilesystem`]: files in memory that lose, at a crash, what was not yet durable, so a
//! test or a simulation runs the storage engine that ships and decides when the power goes.

use super::{AppendFile, DirectoryHold, Filesystem};
use crate::data_dir::OpenError;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use threadsim::sync::{Arc, Mutex, MutexGuard};

/// A file's contents. What is durable is always a prefix of what is written: an append adds
/// past it, a sync moves it to the end, a rewrite starts it again at nothing (the engine syncs
/// each rewrite at once, and cuts a file only durably).
#[derive(Debug, Default)]
struct Inode {
    data: Vec<u8>,
    durable_len: usize,
    /// Ranges a failed sync dropped: the page cache still holds them and calls them clean, so
    /// no later sync writes them, and a crash finds zeros there (Linux after an fsync error).
    lost: Vec<(usize, usize)>,
}

/// Which inode a name stands for.
type InodeId = u64;

#[derive(Debug, Default)]
struct Disk {
    inodes: BTreeMap<InodeId, Inode>,
    next_inode: InodeId,
    /// The names a reader sees now.
    names: BTreeMap<PathBuf, InodeId>,
    /// The names a crash keeps: those of the last sync of each one's directory.
    durable_names: BTreeMap<PathBuf, InodeId>,
    directories: BTreeSet<PathBuf>,
    /// The directories held, with the token of their hold.
    held: BTreeMap<PathBuf, u64>,
    next_hold: u64,
    /// How many crashes (or killed processes) so far: a file opened before one can no longer
    /// be written.
    crashes: u64,
    /// The next sync of a file cuts the power instead
    /// ([`MemoryFilesystem::cut_power_at_next_sync`]).
    cut_at_next_sync: bool,
    /// The next sync of a file fails ([`MemoryFilesystem::fail_next_sync`]).
    fail_next_sync: bool,
    /// How many more changes the disk makes before its power is cut (`None`: no cut set).
    changes_before_cut: Option<u64>,
    /// How many more bytes fit ([`MemoryFilesystem::fill_up_after`]; `None`: as many as
    /// written).
    room: Option<u64>,
}

impl Disk {
    /// Counts one change (a write, a sync, a name made or undone), or refuses it once the
    /// power is cut.
    fn change(&mut self) -> io::Result<()> {
        match &mut self.changes_before_cut {
            Some(0) => Err(io::Error::other("the power is cut")),
            Some(left) => {
                *left -= 1;
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn inode_at(&mut self, path: &Path) -> io::Result<&mut Inode> {
        let id = *self.names.get(path).ok_or_else(|| not_found(path))?;
        Ok(self
            .inodes
            .get_mut(&id)
            .expect("every name stands for an inode"))
    }

    fn new_inode(&mut self, data: Vec<u8>, durable: bool) -> InodeId {
        let id = self.next_inode;
        self.next_inode += 1;
        let durable_len = if durable { data.len() } else { 0 };
        self.inodes.insert(
            id,
            Inode {
                data,
                durable_len,
                lost: Vec::new(),
            },
        );
        id
    }

    /// Forgets the inodes no name stands for, now or after a crash.
    fn collect(&mut self) {
        let named: BTreeSet<InodeId> = self
            .names
            .values()
            .chain(self.durable_names.values())
            .copied()
            .collect();
        self.inodes.retain(|id, _| named.contains(id));
    }

    /// Takes room for `wanted` bytes: how many of them fit (all, without a limit), and
    /// ENOSPC if not all of them did.
    fn take_room(&mut self, wanted: usize) -> (usize, io::Result<()>) {
        let Some(room) = &mut self.room else {
            return (wanted, Ok(()));
        };
        let fits = wanted.min(usize::try_from(*room).unwrap_or(usize::MAX));
        *room -= fits as u64;
        if fits < wanted {
            return (fits, Err(io::Error::from_raw_os_error(libc::ENOSPC)));
        }
        (fits, Ok(()))
    }

    fn check_parent(&self, path: &Path) -> io::Result<()> {
        match path.parent() {
            Some(parent) if self.directories.contains(parent) => Ok(()),
            _ => Err(not_found(path)),
        }
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
}

/// Files in memory with a crash a caller decides (see the module's documentation). Clones
/// share one disk.
#[derive(Clone, Debug)]
pub struct MemoryFilesystem {
    disk: Arc<Mutex<Disk>>,
}

/// How much of what was appended and not synced a crash keeps of one file: `unsynced` bytes
/// were written past the durable ones; keeping some is a write torn at that length.
pub type CrashLoss<'a> = &'a mut dyn FnMut(&Path, usize) -> usize;

impl MemoryFilesystem {
    /// An empty disk.
    pub fn new() -> MemoryFilesystem {
        MemoryFilesystem {
            disk: Arc::new(Mutex::new(Disk::default())),
        }
    }

    fn disk(&self) -> MutexGuard<'_, Disk> {
        self.disk.lock()
    }

    /// The power goes: every name not made durable by a directory sync is undone, every file
    /// loses what was appended after its last sync except the prefix `keep` says (given the
    /// file's path and its unsynced length), every hold is released, and every file open
    /// before now refuses to be written.
    pub fn crash(&self, keep: CrashLoss<'_>) {
        let mut disk = self.disk();
        disk.names = disk.durable_names.clone();
        let named: Vec<(PathBuf, InodeId)> = disk
            .names
            .iter()
            .map(|(path, &id)| (path.clone(), id))
            .collect();
        for (path, id) in named {
            let inode = disk.inodes.get_mut(&id).expect("a name's inode");
            let unsynced = inode.data.len() - inode.durable_len;
            let kept = keep(&path, unsynced).min(unsynced);
            inode.data.truncate(inode.durable_len + kept);
            inode.durable_len = inode.data.len();
            for (start, end) in std::mem::take(&mut inode.lost) {
                let end = end.min(inode.data.len());
                if start < end {
                    inode.data[start..end].fill(0);
                }
            }
        }
        disk.collect();
        disk.held.clear();
        disk.crashes += 1;
        disk.changes_before_cut = None;
        disk.cut_at_next_sync = false;
        disk.fail_next_sync = false;
    }

    /// The next sync of a file fails with EIO, and what it should have written stays in the
    /// page cache marked clean: reads see it, no later sync writes it, a crash loses it.
    pub fn fail_next_sync(&self) {
        self.disk().fail_next_sync = true;
    }

    /// Takes back a failure armed by [`fail_next_sync`](Self::fail_next_sync) that no sync has
    /// met yet; returns whether there was one.
    pub fn cancel_sync_failure(&self) -> bool {
        std::mem::take(&mut self.disk().fail_next_sync)
    }

    /// The process using the disk is killed, the machine stays up: every hold is released and
    /// every file open before now refuses to be written, but the page cache keeps everything
    /// written, synced or not.
    pub fn process_killed(&self) {
        let mut disk = self.disk();
        disk.held.clear();
        disk.crashes += 1;
    }

    /// The power goes during the next sync of a file: that sync fails having made nothing
    /// durable, and so does every later change, until [`crash`](Self::crash).
    pub fn cut_power_at_next_sync(&self) {
        self.disk().cut_at_next_sync = true;
    }

    /// Takes back a cut armed by [`cut_power_at_next_sync`](Self::cut_power_at_next_sync) that
    /// no sync has met yet; returns whether there was one.
    pub fn cancel_power_cut_at_next_sync(&self) -> bool {
        std::mem::take(&mut self.disk().cut_at_next_sync)
    }

    /// Cuts the power after `changes` more changes (writes, syncs, names made or undone): the
    /// one after and every later one fails, as if the machine had stopped there, until
    /// [`crash`](Self::crash) says what the disk kept.
    pub fn cut_power_after(&self, changes: u64) {
        self.disk().changes_before_cut = Some(changes);
    }

    /// Takes back a cut set by [`cut_power_after`](Self::cut_power_after) that has not come
    /// yet; returns whether there was one.
    pub fn cancel_power_cut(&self) -> bool {
        let mut disk = self.disk();
        let pending = matches!(disk.changes_before_cut, Some(left) if left > 0);
        if pending {
            disk.changes_before_cut = None;
        }
        pending
    }

    /// The disk fills up: `bytes` more fit, and a write past them writes what fits and fails
    /// with ENOSPC (as `write(2)` returns a short count and then the error), until
    /// [`make_room`](Self::make_room). A crash keeps the disk full.
    pub fn fill_up_after(&self, bytes: u64) {
        self.disk().room = Some(bytes);
    }

    /// Room again (files deleted elsewhere, a bigger volume): every write fits. Returns whether
    /// the disk was full or filling.
    pub fn make_room(&self) -> bool {
        self.disk().room.take().is_some()
    }

    /// Whether the power was cut (a change was refused for it).
    pub fn power_cut(&self) -> bool {
        self.disk().changes_before_cut == Some(0)
    }

    /// The bytes of the file at `path` as a reader sees them now, if there is one.
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let mut disk = self.disk();
        disk.inode_at(path).ok().map(|inode| inode.data.clone())
    }
}

impl Default for MemoryFilesystem {
    fn default() -> Self {
        MemoryFilesystem::new()
    }
}

/// A file open for appending on a [`MemoryFilesystem`].
struct MemoryFile {
    disk: Arc<Mutex<Disk>>,
    inode: InodeId,
    path: PathBuf,
    /// The disk's crash count when it was opened.
    opened_after: u64,
}

impl MemoryFile {
    fn with_inode<T>(&self, change: impl FnOnce(&mut Inode) -> T) -> io::Result<T> {
        let mut disk = self.disk.lock();
        if disk.crashes != self.opened_after {
            return Err(io::Error::other(format!(
                "{}: the machine crashed since it was opened",
                self.path.display()
            )));
        }
        disk.change()?;
        let inode = disk
            .inodes
            .get_mut(&self.inode)
            .ok_or_else(|| not_found(&self.path))?;
        Ok(change(inode))
    }
}

impl AppendFile for MemoryFile {
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        let (fits, written) = self.disk.lock().take_room(bytes.len());
        self.with_inode(|inode| inode.data.extend_from_slice(&bytes[..fits]))?;
        written
    }

    fn sync_data(&self) -> io::Result<()> {
        let fails = {
            let mut disk = self.disk.lock();
            if std::mem::take(&mut disk.cut_at_next_sync) {
                disk.changes_before_cut = Some(0);
            }
            std::mem::take(&mut disk.fail_next_sync)
        };
        let dropped = self.with_inode(|inode| {
            if fails && inode.durable_len < inode.data.len() {
                inode.lost.push((inode.durable_len, inode.data.len()));
            }
            inode.durable_len = inode.data.len();
        });
        match (dropped, fails) {
            (Ok(()), true) => Err(io::Error::from_raw_os_error(libc::EIO)),
            (result, _) => result,
        }
    }
}

/// Releases a held directory when dropped (unless a crash released it first).
struct Hold {
    disk: Arc<Mutex<Disk>>,
    dir: PathBuf,
    token: u64,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut disk = self.disk.lock();
        if disk.held.get(&self.dir) == Some(&self.token) {
            disk.held.remove(&self.dir);
        }
    }
}

impl Filesystem for MemoryFilesystem {
    fn hold_directory(&self, dir: &Path) -> Result<DirectoryHold, OpenError> {
        let mut disk = self.disk();
        if disk.names.contains_key(dir) {
            return Err(OpenError::NotADirectory {
                dir: dir.to_path_buf(),
            });
        }
        if disk.held.contains_key(dir) {
            return Err(OpenError::InUse {
                dir: dir.to_path_buf(),
            });
        }
        for ancestor in dir.ancestors() {
            disk.directories.insert(ancestor.to_path_buf());
        }
        let token = disk.next_hold;
        disk.next_hold += 1;
        disk.held.insert(dir.to_path_buf(), token);
        Ok(Box::new(Hold {
            disk: self.disk.clone(),
            dir: dir.to_path_buf(),
            token,
        }))
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let disk = self.disk();
        if !disk.directories.contains(dir) {
            return Err(not_found(dir));
        }
        Ok(disk
            .names
            .keys()
            .filter(|path| path.parent() == Some(dir))
            .filter_map(|path| path.file_name()?.to_str().map(str::to_string))
            .collect())
    }

    fn exists(&self, path: &Path) -> bool {
        let disk = self.disk();
        disk.names.contains_key(path) || disk.directories.contains(path)
    }

    fn len(&self, path: &Path) -> io::Result<u64> {
        Ok(self.disk().inode_at(path)?.data.len() as u64)
    }

    fn read(&self, path: &Path, limit: u64) -> Result<Vec<u8>, userfiles::ReadError> {
        let mut disk = self.disk();
        let inode = disk
            .inode_at(path)
            .map_err(|source| userfiles::ReadError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if inode.data.len() as u64 > limit {
            return Err(userfiles::ReadError::TooLarge {
                path: path.to_path_buf(),
                limit,
            });
        }
        Ok(inode.data.clone())
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        let mut disk = self.disk();
        disk.check_parent(path)?;
        disk.change()?;
        if disk.names.contains_key(path) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{}: exists", path.display()),
            ));
        }
        let inode = disk.new_inode(Vec::new(), true);
        disk.names.insert(path.to_path_buf(), inode);
        Ok(Box::new(MemoryFile {
            disk: self.disk.clone(),
            inode,
            path: path.to_path_buf(),
            opened_after: disk.crashes,
        }))
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        let disk = self.disk();
        let inode = *disk.names.get(path).ok_or_else(|| not_found(path))?;
        Ok(Box::new(MemoryFile {
            disk: self.disk.clone(),
            inode,
            path: path.to_path_buf(),
            opened_after: disk.crashes,
        }))
    }

    /// Two changes, as `open(O_TRUNC)`, `write` and `fdatasync` are: the file is replaced by
    /// `bytes`, none of them durable yet (a cut between loses the old contents and may keep a
    /// torn prefix of the new), then they are made durable.
    fn write_synced(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut disk = self.disk();
        disk.check_parent(path)?;
        disk.change()?;
        let written = match disk.names.get(path) {
            Some(&id) => id,
            None => {
                let id = disk.new_inode(Vec::new(), true);
                disk.names.insert(path.to_path_buf(), id);
                id
            }
        };
        let (fits, room) = disk.take_room(bytes.len());
        let inode = disk.inodes.get_mut(&written).expect("a name's inode");
        inode.data = bytes[..fits].to_vec();
        inode.durable_len = 0;
        room?;
        disk.change()?;
        let inode = disk.inodes.get_mut(&written).expect("a name's inode");
        inode.durable_len = inode.data.len();
        Ok(())
    }

    fn truncate_synced(&self, path: &Path, len: u64) -> io::Result<()> {
        let mut disk = self.disk();
        disk.change()?;
        let inode = disk.inode_at(path)?;
        inode.data.resize(len as usize, 0);
        inode.durable_len = inode.data.len();
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut disk = self.disk();
        disk.change()?;
        disk.check_parent(to)?;
        let inode = disk.names.remove(from).ok_or_else(|| not_found(from))?;
        disk.names.insert(to.to_path_buf(), inode);
        disk.collect();
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut disk = self.disk();
        disk.change()?;
        disk.names.remove(path).ok_or_else(|| not_found(path))?;
        disk.collect();
        Ok(())
    }

    fn sync_directory(&self, dir: &Path) -> io::Result<()> {
        let mut disk = self.disk();
        disk.change()?;
        if !disk.directories.contains(dir) {
            return Err(not_found(dir));
        }
        let in_dir = |path: &PathBuf| path.parent() == Some(dir);
        disk.durable_names.retain(|path, _| !in_dir(path));
        let current: Vec<(PathBuf, InodeId)> = disk
            .names
            .iter()
            .filter(|(path, _)| in_dir(path))
            .map(|(path, &id)| (path.clone(), id))
            .collect();
        disk.durable_names.extend(current);
        disk.collect();
        Ok(())
    }
}
