//! The lossy file system's contents: files and directories in memory, each holding what a
//! process sees now and what would survive a power cut. A write changes only what is seen; an
//! `fsync` of a file makes its contents durable, an `fsync` of a directory its entries (POSIX
//! promises no more: a new, renamed or removed name is durable only once its directory is
//! synced). A power cut ([`Tree::power_loss`]) puts every directory back to its durable entries
//! and every file to its durable contents, plus whatever part of its unsynced writes the
//! [`LossMode`] keeps.

mod damage;

use super::change::Change;
pub use damage::Corruption;
use std::collections::{BTreeMap, BTreeSet};

/// An inode number, as the kernel names a file or directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ino(pub u64);

/// The root directory's inode (the kernel's FUSE_ROOT_ID).
pub const ROOT: Ino = Ino(1);

/// The longest name a directory holds (Linux's NAME_MAX).
pub const NAME_MAX: usize = 255;

/// The largest file (bytes): a write past it fails with EFBIG, so a stray offset cannot make
/// the file system allocate without bound.
pub const FILE_MAX: u64 = 1 << 32;

/// Why an operation failed, as an errno the kernel passes to the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsError {
    /// ENOENT.
    NotFound,
    /// EEXIST.
    Exists,
    /// ENOTDIR.
    NotADirectory,
    /// EISDIR.
    IsADirectory,
    /// ENOTEMPTY.
    NotEmpty,
    /// ENOSPC: the disk was made full.
    NoSpace,
    /// ENAMETOOLONG.
    NameTooLong,
    /// EFBIG.
    TooLarge,
    /// EINVAL.
    Invalid,
    /// EIO: the power was cut while the operation was under way.
    Interrupted,
}

impl FsError {
    /// The errno.
    pub fn errno(self) -> i32 {
        match self {
            FsError::NotFound => libc::ENOENT,
            FsError::Exists => libc::EEXIST,
            FsError::NotADirectory => libc::ENOTDIR,
            FsError::IsADirectory => libc::EISDIR,
            FsError::NotEmpty => libc::ENOTEMPTY,
            FsError::NoSpace => libc::ENOSPC,
            FsError::NameTooLong => libc::ENAMETOOLONG,
            FsError::TooLarge => libc::EFBIG,
            FsError::Invalid => libc::EINVAL,
            FsError::Interrupted => libc::EIO,
        }
    }
}

/// A regular file: what is seen, what is durable, and the changes between them.
#[derive(Debug, Default)]
pub struct FileData {
    /// What a process reads now.
    pub current: Vec<u8>,
    /// What survives a power cut.
    pub durable: Vec<u8>,
    /// The changes since the last sync: applied in order to `durable`, they give `current`.
    pub unsynced: Vec<Change>,
}

impl FileData {
    fn change(&mut self, change: Change) {
        change.apply(&mut self.current);
        self.unsynced.push(change);
        assert!(
            self.current.len() as u64 <= FILE_MAX,
            "a file past the largest"
        );
    }

    /// Makes the first `count` unsynced changes durable.
    fn sync_first(&mut self, count: usize) {
        let count = count.min(self.unsynced.len());
        for change in self.unsynced.drain(..count) {
            change.apply(&mut self.durable);
        }
        if self.unsynced.is_empty() {
            assert_eq!(
                self.durable.len(),
                self.current.len(),
                "a synced file is what is seen"
            );
            debug_assert_eq!(self.durable, self.current, "a synced file is what is seen");
        }
    }
}

/// A directory: the names seen, and the names that survive a power cut.
#[derive(Debug, Default)]
pub struct DirData {
    /// The entries a process sees now.
    pub current: BTreeMap<Vec<u8>, Ino>,
    /// The entries as of the directory's last sync.
    pub durable: BTreeMap<Vec<u8>, Ino>,
}

/// What an inode is.
#[derive(Debug)]
pub enum Node {
    /// A regular file.
    File(FileData),
    /// A directory.
    Dir(DirData),
}

/// A file or directory and its permission bits.
#[derive(Debug)]
pub struct Inode {
    /// What it holds.
    pub node: Node,
    /// Permission bits (`0o644`).
    pub permissions: u32,
}

/// What `stat` says of an inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attributes {
    /// The inode.
    pub ino: Ino,
    /// Bytes (a directory: its entry count).
    pub size: u64,
    /// Whether it is a directory.
    pub is_dir: bool,
    /// Permission bits.
    pub permissions: u32,
}

/// A file sync under way (see [`Tree::begin_sync`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncBegun {
    ino: Ino,
    generation: u64,
    changes: usize,
}

/// Counts of what the file system was asked to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeStats {
    /// Writes.
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Syncs of files and directories.
    pub syncs: u64,
    /// Power cuts.
    pub power_losses: u64,
}

/// Every inode of the file system (see the module's documentation).
#[derive(Debug)]
pub struct Tree {
    inodes: BTreeMap<Ino, Inode>,
    next_ino: u64,
    /// How many handles are open on each inode: an unlinked file lives while one is.
    open: BTreeMap<Ino, u32>,
    full: bool,
    /// Whether the power is off: between the cut and [`Tree::power_loss`] nothing is done.
    powered_off: bool,
    /// How many power cuts there have been: a sync begun before the last one cannot finish.
    generation: u64,
    stats: TreeStats,
}

impl Default for Tree {
    fn default() -> Self {
        Tree::new()
    }
}

impl Tree {
    /// An empty file system: the root directory, durable.
    pub fn new() -> Tree {
        let root = Inode {
            node: Node::Dir(DirData::default()),
            permissions: 0o755,
        };
        Tree {
            inodes: BTreeMap::from([(ROOT, root)]),
            next_ino: ROOT.0 + 1,
            open: BTreeMap::new(),
            full: false,
            powered_off: false,
            generation: 0,
            stats: TreeStats::default(),
        }
    }

    /// Counts of what was done.
    pub fn stats(&self) -> TreeStats {
        self.stats
    }

    /// Makes every write, creation and extension fail with ENOSPC (`true`) or work again.
    pub fn set_full(&mut self, full: bool) {
        self.full = full;
    }

    /// Cuts the power at this instant: no sync under way finishes, and (the file system's
    /// session sees to it) no request is done until [`Tree::power_loss`] decides what was lost
    /// and powers it on again. Meanwhile the processes that used it are to be killed.
    pub fn power_off(&mut self) {
        if !self.powered_off {
            self.powered_off = true;
            self.generation += 1;
        }
    }

    /// Whether the power is off.
    pub fn is_powered_off(&self) -> bool {
        self.powered_off
    }

    /// The inode `name` in `parent` names now.
    pub fn lookup(&self, parent: Ino, name: &[u8]) -> Result<Ino, FsError> {
        self.dir(parent)?
            .current
            .get(name)
            .copied()
            .ok_or(FsError::NotFound)
    }

    /// What `stat` says of `ino`.
    pub fn attributes(&self, ino: Ino) -> Result<Attributes, FsError> {
        let inode = self.inodes.get(&ino).ok_or(FsError::NotFound)?;
        let (size, is_dir) = match &inode.node {
            Node::File(file) => (file.current.len() as u64, false),
            Node::Dir(dir) => (dir.current.len() as u64, true),
        };
        Ok(Attributes {
            ino,
            size,
            is_dir,
            permissions: inode.permissions,
        })
    }

    /// Creates an empty file or directory `name` in `parent`.
    pub fn create(
        &mut self,
        parent: Ino,
        name: &[u8],
        is_dir: bool,
        permissions: u32,
    ) -> Result<Ino, FsError> {
        check_name(name)?;
        if self.full {
            return Err(FsError::NoSpace);
        }
        if self.dir(parent)?.current.contains_key(name) {
            return Err(FsError::Exists);
        }
        let ino = Ino(self.next_ino);
        self.next_ino += 1;
        assert!(!self.inodes.contains_key(&ino), "{ino:?} is taken");
        let node = if is_dir {
            Node::Dir(DirData::default())
        } else {
            Node::File(FileData::default())
        };
        self.inodes.insert(
            ino,
            Inode {
                node,
                permissions: permissions & 0o7777,
            },
        );
        let replaced = self.dir_mut(parent)?.current.insert(name.to_vec(), ino);
        assert_eq!(replaced, None, "a new name replaced an entry");
        Ok(ino)
    }

    /// Removes the file (`is_dir` false) or empty directory `name` from `parent`.
    pub fn remove(&mut self, parent: Ino, name: &[u8], is_dir: bool) -> Result<(), FsError> {
        let ino = self.lookup(parent, name)?;
        match (&self.inodes[&ino].node, is_dir) {
            (Node::File(_), true) => return Err(FsError::NotADirectory),
            (Node::Dir(_), false) => return Err(FsError::IsADirectory),
            (Node::Dir(dir), true) if !dir.current.is_empty() => return Err(FsError::NotEmpty),
            _ => {}
        }
        self.dir_mut(parent)?.current.remove(name);
        self.collect_garbage();
        Ok(())
    }

    /// Moves `name` in `parent` to `new_name` in `new_parent`, replacing a file there (or an
    /// empty directory, if a directory moves).
    pub fn rename(
        &mut self,
        parent: Ino,
        name: &[u8],
        new_parent: Ino,
        new_name: &[u8],
    ) -> Result<(), FsError> {
        check_name(new_name)?;
        let moving = self.lookup(parent, name)?;
        self.dir(new_parent)?;
        let moving_is_dir = matches!(self.inodes[&moving].node, Node::Dir(_));
        if moving_is_dir && self.is_within(new_parent, moving) {
            return Err(FsError::Invalid);
        }
        if let Ok(replaced) = self.lookup(new_parent, new_name) {
            match (&self.inodes[&replaced].node, moving_is_dir) {
                (Node::Dir(_), false) => return Err(FsError::IsADirectory),
                (Node::File(_), true) => return Err(FsError::NotADirectory),
                (Node::Dir(dir), true) if !dir.current.is_empty() => return Err(FsError::NotEmpty),
                _ => {}
            }
        }
        self.dir_mut(parent)?.current.remove(name);
        self.dir_mut(new_parent)?
            .current
            .insert(new_name.to_vec(), moving);
        self.collect_garbage();
        assert_eq!(
            self.lookup(new_parent, new_name),
            Ok(moving),
            "a renamed inode is found by its new name"
        );
        Ok(())
    }

    /// Whether `dir` is `ancestor` or lies below it.
    fn is_within(&self, dir: Ino, ancestor: Ino) -> bool {
        if dir == ancestor {
            return true;
        }
        let Ok(ancestor_dir) = self.dir(ancestor) else {
            return false;
        };
        ancestor_dir.current.values().any(|&child| {
            matches!(self.inodes[&child].node, Node::Dir(_)) && self.is_within(dir, child)
        })
    }

    /// Up to `size` bytes of `ino` from `offset`.
    pub fn read(&self, ino: Ino, offset: u64, size: u32) -> Result<&[u8], FsError> {
        let file = self.file(ino)?;
        let len = file.current.len() as u64;
        let start = offset.min(len) as usize;
        let end = offset.saturating_add(size.into()).min(len) as usize;
        assert!(
            start <= end && end - start <= size as usize,
            "a read within its size"
        );
        Ok(&file.current[start..end])
    }

    /// Writes `bytes` into `ino` at `offset` (seen at once, durable once synced).
    pub fn write(&mut self, ino: Ino, offset: u64, bytes: &[u8]) -> Result<u32, FsError> {
        offset
            .checked_add(bytes.len() as u64)
            .filter(|&end| end <= FILE_MAX)
            .ok_or(FsError::TooLarge)?;
        let full = self.full;
        let file = self.file_mut(ino)?;
        if full && !bytes.is_empty() {
            return Err(FsError::NoSpace);
        }
        file.change(Change::Write {
            offset,
            bytes: bytes.to_vec(),
        });
        assert!(
            file.current.len() as u64 >= offset + bytes.len() as u64,
            "a write is within the file after it"
        );
        self.stats.writes += 1;
        self.stats.bytes_written += bytes.len() as u64;
        Ok(bytes.len() as u32)
    }

    /// Sets `ino`'s length.
    pub fn set_len(&mut self, ino: Ino, len: u64) -> Result<(), FsError> {
        if len > FILE_MAX {
            return Err(FsError::TooLarge);
        }
        let full = self.full;
        let file = self.file_mut(ino)?;
        if full && len > file.current.len() as u64 {
            return Err(FsError::NoSpace);
        }
        file.change(Change::Resize(len));
        assert_eq!(file.current.len() as u64, len, "a file is the length set");
        Ok(())
    }

    /// Sets `ino`'s permission bits.
    pub fn set_permissions(&mut self, ino: Ino, permissions: u32) -> Result<(), FsError> {
        let inode = self.inodes.get_mut(&ino).ok_or(FsError::NotFound)?;
        inode.permissions = permissions & 0o7777;
        Ok(())
    }

    /// Makes what `ino` holds now durable: a file's contents, a directory's entries.
    pub fn sync(&mut self, ino: Ino) -> Result<(), FsError> {
        let inode = self.inodes.get_mut(&ino).ok_or(FsError::NotFound)?;
        match &mut inode.node {
            Node::File(file) => {
                file.sync_first(usize::MAX);
            }
            Node::Dir(dir) => {
                dir.durable = dir.current.clone();
                self.collect_garbage();
            }
        }
        self.stats.syncs += 1;
        Ok(())
    }

    /// Where a sync of file `ino` begun now stands: the power cuts so far and the file's
    /// unsynced changes, which [`Tree::finish_sync`] makes durable.
    pub fn begin_sync(&self, ino: Ino) -> Result<SyncBegun, FsError> {
        Ok(SyncBegun {
            ino,
            generation: self.generation,
            changes: self.file(ino)?.unsynced.len(),
        })
    }

    /// Finishes a sync begun earlier: the changes made before it began are durable, those
    /// made since are not. Fails if the power was cut in between (the sync never finished) or
    /// the file is gone.
    pub fn finish_sync(&mut self, begun: SyncBegun) -> Result<(), FsError> {
        assert!(
            begun.generation <= self.generation,
            "a sync begun after now"
        );
        if begun.generation != self.generation {
            return Err(FsError::Interrupted);
        }
        self.file_mut(begun.ino)?.sync_first(begun.changes);
        self.stats.syncs += 1;
        Ok(())
    }

    /// The entries of directory `ino` now: name, inode, whether a directory.
    pub fn entries(&self, ino: Ino) -> Result<Vec<(Vec<u8>, Ino, bool)>, FsError> {
        Ok(self
            .dir(ino)?
            .current
            .iter()
            .map(|(name, &child)| {
                let is_dir = matches!(self.inodes[&child].node, Node::Dir(_));
                (name.clone(), child, is_dir)
            })
            .collect())
    }

    /// Every file and directory a process sees now, below the root, parents before children:
    /// its path and, for a file, its contents.
    pub fn export(&self) -> Vec<(std::path::PathBuf, Option<&[u8]>)> {
        self.walk()
            .into_iter()
            .map(|(path, ino)| match &self.inodes[&ino].node {
                Node::File(file) => (path, Some(&file.current[..])),
                Node::Dir(_) => (path, None),
            })
            .collect()
    }

    /// Every inode a name reaches now, below the root, with its path; parents before children.
    fn walk(&self) -> Vec<(std::path::PathBuf, Ino)> {
        use std::os::unix::ffi::OsStrExt;
        let mut found = Vec::new();
        let mut frontier = vec![(std::path::PathBuf::new(), ROOT)];
        while let Some((path, ino)) = frontier.pop() {
            let Ok(dir) = self.dir(ino) else { continue };
            for (name, &child) in &dir.current {
                let child_path = path.join(std::ffi::OsStr::from_bytes(name));
                if matches!(self.inodes[&child].node, Node::Dir(_)) {
                    frontier.push((child_path.clone(), child));
                }
                found.push((child_path, child));
            }
        }
        found
    }

    /// A handle on `ino` was opened: it lives, unlinked or not, until the handle is released.
    pub fn opened(&mut self, ino: Ino) -> Result<(), FsError> {
        if !self.inodes.contains_key(&ino) {
            return Err(FsError::NotFound);
        }
        *self.open.entry(ino).or_default() += 1;
        Ok(())
    }

    /// A handle on `ino` was released.
    pub fn released(&mut self, ino: Ino) {
        if let Some(count) = self.open.get_mut(&ino) {
            assert!(*count > 0, "an open count of zero is not kept");
            *count -= 1;
            if *count == 0 {
                self.open.remove(&ino);
                self.collect_garbage();
            }
        }
    }

    /// Drops every inode no name (seen or durable) reaches and no handle holds.
    fn collect_garbage(&mut self) {
        let mut reached = BTreeSet::from([ROOT]);
        let mut frontier = vec![ROOT];
        while let Some(ino) = frontier.pop() {
            if let Some(Inode {
                node: Node::Dir(dir),
                ..
            }) = self.inodes.get(&ino)
            {
                for &child in dir.current.values().chain(dir.durable.values()) {
                    if reached.insert(child) {
                        frontier.push(child);
                    }
                }
            }
        }
        let open = &self.open;
        self.inodes
            .retain(|ino, _| reached.contains(ino) || open.contains_key(ino));
        assert!(
            self.inodes.contains_key(&ROOT),
            "the root is never collected"
        );
        // A directory's durable entries may name an inode that no longer exists only if it was
        // dropped above; nothing reaches such an entry, and none can exist: every inode a
        // durable entry names was reached.
    }

    fn dir(&self, ino: Ino) -> Result<&DirData, FsError> {
        match &self.inodes.get(&ino).ok_or(FsError::NotFound)?.node {
            Node::Dir(dir) => Ok(dir),
            Node::File(_) => Err(FsError::NotADirectory),
        }
    }

    fn dir_mut(&mut self, ino: Ino) -> Result<&mut DirData, FsError> {
        match &mut self.inodes.get_mut(&ino).ok_or(FsError::NotFound)?.node {
            Node::Dir(dir) => Ok(dir),
            Node::File(_) => Err(FsError::NotADirectory),
        }
    }

    fn file(&self, ino: Ino) -> Result<&FileData, FsError> {
        match &self.inodes.get(&ino).ok_or(FsError::NotFound)?.node {
            Node::File(file) => Ok(file),
            Node::Dir(_) => Err(FsError::IsADirectory),
        }
    }

    fn file_mut(&mut self, ino: Ino) -> Result<&mut FileData, FsError> {
        match &mut self.inodes.get_mut(&ino).ok_or(FsError::NotFound)?.node {
            Node::File(file) => Ok(file),
            Node::Dir(_) => Err(FsError::IsADirectory),
        }
    }
}

fn check_name(name: &[u8]) -> Result<(), FsError> {
    if name.is_empty() || name == b"." || name == b".." || name.contains(&b'/') {
        return Err(FsError::Invalid);
    }
    if name.len() > NAME_MAX {
        return Err(FsError::NameTooLong);
    }
    Ok(())
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::lossy_fs::LossMode;
    use threadsim::DetRng;

    fn tree_with_file(name: &[u8]) -> (Tree, Ino) {
        let mut tree = Tree::new();
        let file = tree.create(ROOT, name, false, 0o644).unwrap();
        (tree, file)
    }

    fn contents(tree: &Tree, ino: Ino) -> Vec<u8> {
        tree.read(ino, 0, u32::MAX).unwrap().to_vec()
    }

    #[test]
    fn a_power_cut_loses_what_was_not_synced_and_keeps_what_was() {
        let (mut tree, file) = tree_with_file(b"log");
        tree.sync(ROOT).unwrap();
        tree.write(file, 0, b"synced").unwrap();
        tree.sync(file).unwrap();
        tree.write(file, 6, b" and not").unwrap();
        assert_eq!(contents(&tree, file), b"synced and not");
        let report = tree.power_loss(LossMode::All, &mut DetRng::new(1));
        assert_eq!(contents(&tree, file), b"synced");
        assert_eq!((report.files_cut, report.bytes_lost), (1, 8));
    }

    #[test]
    fn a_sync_makes_durable_what_was_written_before_it_began_and_only_if_it_finished() {
        let (mut tree, file) = tree_with_file(b"log");
        tree.sync(ROOT).unwrap();
        tree.write(file, 0, b"before").unwrap();
        let begun = tree.begin_sync(file).unwrap();
        tree.write(file, 6, b" during").unwrap();
        tree.finish_sync(begun).unwrap();
        tree.power_loss(LossMode::All, &mut DetRng::new(1));
        assert_eq!(contents(&tree, file), b"before");

        tree.write(file, 6, b" lost").unwrap();
        let begun = tree.begin_sync(file).unwrap();
        tree.power_loss(LossMode::All, &mut DetRng::new(1));
        assert_eq!(tree.finish_sync(begun), Err(FsError::Interrupted));
        assert_eq!(contents(&tree, file), b"before");
    }

    #[test]
    fn a_new_name_survives_only_once_its_directory_is_synced() {
        let (mut tree, file) = tree_with_file(b"new");
        tree.write(file, 0, b"x").unwrap();
        tree.sync(file).unwrap();
        let report = tree.power_loss(LossMode::All, &mut DetRng::new(1));
        assert_eq!(tree.lookup(ROOT, b"new"), Err(FsError::NotFound));
        assert_eq!(report.names_lost, 1);
        assert_eq!(tree.attributes(file), Err(FsError::NotFound), "collected");

        let (mut tree, file) = tree_with_file(b"new");
        tree.sync(ROOT).unwrap();
        tree.power_loss(LossMode::All, &mut DetRng::new(1));
        assert_eq!(tree.lookup(ROOT, b"new"), Ok(file));
        assert_eq!(contents(&tree, file), b"", "its contents were never synced");
    }

    #[test]
    fn a_rename_is_undone_by_a_power_cut_unless_the_directory_was_synced() {
        let (mut tree, old) = tree_with_file(b"state");
        tree.write(old, 0, b"old").unwrap();
        tree.sync(old).unwrap();
        tree.sync(ROOT).unwrap();
        let new = tree.create(ROOT, b"state.tmp", false, 0o644).unwrap();
        tree.write(new, 0, b"new").unwrap();
        tree.sync(new).unwrap();
        tree.rename(ROOT, b"state.tmp", ROOT, b"state").unwrap();
        assert_eq!(tree.lookup(ROOT, b"state"), Ok(new));
        assert!(
            tree.attributes(old).is_ok(),
            "its durable name still holds it"
        );
        tree.power_loss(LossMode::All, &mut DetRng::new(1));
        assert_eq!(
            tree.lookup(ROOT, b"state"),
            Ok(old),
            "the rename was not durable"
        );
        assert_eq!(contents(&tree, old), b"old");
        assert_eq!(tree.lookup(ROOT, b"state.tmp"), Err(FsError::NotFound));

        let new = tree.create(ROOT, b"state.tmp", false, 0o644).unwrap();
        tree.write(new, 0, b"new").unwrap();
        tree.sync(new).unwrap();
        tree.rename(ROOT, b"state.tmp", ROOT, b"state").unwrap();
        tree.sync(ROOT).unwrap();
        assert_eq!(
            tree.attributes(old),
            Err(FsError::NotFound),
            "replaced, collected"
        );
        tree.power_loss(LossMode::All, &mut DetRng::new(1));
        assert_eq!(contents(&tree, new), b"new");
    }

    #[test]
    fn a_removed_file_comes_back_after_a_power_cut_until_its_directory_is_synced() {
        let (mut tree, file) = tree_with_file(b"wal-1");
        tree.write(file, 0, b"records").unwrap();
        tree.sync(file).unwrap();
        tree.sync(ROOT).unwrap();
        tree.remove(ROOT, b"wal-1", false).unwrap();
        assert_eq!(tree.lookup(ROOT, b"wal-1"), Err(FsError::NotFound));
        tree.power_loss(LossMode::All, &mut DetRng::new(1));
        assert_eq!(
            contents(&tree, tree.lookup(ROOT, b"wal-1").unwrap()),
            b"records"
        );
        tree.remove(ROOT, b"wal-1", false).unwrap();
        tree.sync(ROOT).unwrap();
        assert_eq!(tree.attributes(file), Err(FsError::NotFound));
    }

    #[test]
    fn an_open_unlinked_file_lives_until_released() {
        let (mut tree, file) = tree_with_file(b"f");
        tree.opened(file).unwrap();
        tree.remove(ROOT, b"f", false).unwrap();
        tree.write(file, 0, b"still here").unwrap();
        tree.released(file);
        assert_eq!(tree.attributes(file), Err(FsError::NotFound));
    }

    #[test]
    fn a_full_disk_refuses_writes_creations_and_growth_but_not_reads_or_syncs() {
        let (mut tree, file) = tree_with_file(b"f");
        tree.write(file, 0, b"abc").unwrap();
        tree.set_full(true);
        assert_eq!(tree.write(file, 3, b"d"), Err(FsError::NoSpace));
        assert_eq!(tree.set_len(file, 10), Err(FsError::NoSpace));
        assert_eq!(tree.create(ROOT, b"g", false, 0o644), Err(FsError::NoSpace));
        tree.set_len(file, 1).unwrap();
        tree.sync(file).unwrap();
        assert_eq!(contents(&tree, file), b"a");
        tree.set_full(false);
        tree.write(file, 1, b"b").unwrap();
    }

    #[test]
    fn an_export_lists_what_is_seen_parents_first() {
        let (mut tree, file) = tree_with_file(b"f");
        tree.write(file, 0, b"seen").unwrap();
        let dir = tree.create(ROOT, b"d", true, 0o755).unwrap();
        let inner = tree.create(dir, b"g", false, 0o644).unwrap();
        tree.write(inner, 0, b"inner").unwrap();
        let exported = tree.export();
        let paths: Vec<String> = exported
            .iter()
            .map(|(path, _)| path.display().to_string())
            .collect();
        assert_eq!(paths, ["d", "f", "d/g"]);
        assert_eq!(exported[1].1, Some(&b"seen"[..]));
        assert_eq!(exported[0].1, None);
    }

    #[test]
    fn corruption_damages_a_non_empty_file_on_the_medium_and_can_be_undone() {
        let mut tree = Tree::new();
        assert_eq!(
            tree.corrupt(&mut DetRng::new(1), false),
            None,
            "nothing to damage"
        );
        tree.create(ROOT, b"empty", false, 0o644).unwrap();
        let file = tree.create(ROOT, b"log", false, 0o644).unwrap();
        tree.write(file, 0, &[0xAA; 1000]).unwrap();
        tree.sync(file).unwrap();
        tree.sync(ROOT).unwrap();
        for (seed, zero_sector) in (0..50).zip([false, true].into_iter().cycle()) {
            let corruption = tree.corrupt(&mut DetRng::new(seed), zero_sector).unwrap();
            assert_eq!(corruption.path, std::path::Path::new("log"));
            let damaged = contents(&tree, file);
            let changed = damaged.iter().filter(|&&byte| byte != 0xAA).count();
            if zero_sector {
                assert!(changed == 512 || changed == 1000 - 512, "{changed}");
            } else {
                assert_eq!(changed, 1);
            }
            tree.power_loss(LossMode::All, &mut DetRng::new(1));
            assert_eq!(
                contents(&tree, file),
                damaged,
                "the durable copy is damaged too"
            );
            tree.repair(&corruption);
            assert_eq!(contents(&tree, file), vec![0xAA; 1000]);
        }
    }

    #[test]
    fn bad_names_offsets_and_kinds_are_refused() {
        let (mut tree, file) = tree_with_file(b"f");
        assert_eq!(tree.create(ROOT, b"f", false, 0), Err(FsError::Exists));
        assert_eq!(tree.create(ROOT, b"a/b", false, 0), Err(FsError::Invalid));
        assert_eq!(tree.create(ROOT, b"..", true, 0), Err(FsError::Invalid));
        assert_eq!(
            tree.create(ROOT, &[b'x'; NAME_MAX + 1], false, 0),
            Err(FsError::NameTooLong)
        );
        assert_eq!(tree.write(file, u64::MAX, b"x"), Err(FsError::TooLarge));
        assert_eq!(tree.write(file, FILE_MAX, b"x"), Err(FsError::TooLarge));
        assert_eq!(
            tree.create(file, b"g", false, 0),
            Err(FsError::NotADirectory)
        );
        assert_eq!(tree.read(ROOT, 0, 1), Err(FsError::IsADirectory));
        let dir = tree.create(ROOT, b"d", true, 0o755).unwrap();
        tree.create(dir, b"inner", false, 0o644).unwrap();
        assert_eq!(tree.remove(ROOT, b"d", true), Err(FsError::NotEmpty));
        assert_eq!(tree.remove(ROOT, b"d", false), Err(FsError::IsADirectory));
        assert_eq!(tree.rename(ROOT, b"d", dir, b"loop"), Err(FsError::Invalid));
        assert_eq!(
            tree.rename(ROOT, b"f", ROOT, b"d"),
            Err(FsError::IsADirectory)
        );
    }
}
