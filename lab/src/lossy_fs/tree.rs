//! The lossy file system's contents: files and directories in memory, each holding what a
//! process sees now and what would survive a power cut. A write changes only what is seen; an
//! `fsync` of a file makes its contents durable, an `fsync` of a directory its entries (POSIX
//! promises no more: a new, renamed or removed name is durable only once its directory is
//! synced). A power cut ([`Tree::power_loss`]) puts every directory back to its durable entries
//! and every file to its durable contents, plus whatever part of its unsynced writes the
//! [`LossMode`] keeps.

use super::change::Change;
use super::loss::{cut_unsynced, LossMode, LossReport};
use std::collections::{BTreeMap, BTreeSet};
use threadsim::DetRng;

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
    }

    /// Makes the first `count` unsynced changes durable.
    fn sync_first(&mut self, count: usize) {
        let count = count.min(self.unsynced.len());
        for change in self.unsynced.drain(..count) {
            change.apply(&mut self.durable);
        }
        if self.unsynced.is_empty() {
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

/// Damage done to a file by `Tree::corrupt`, and what undoing it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corruption {
    /// The file, from the mount's root.
    pub path: std::path::PathBuf,
    ino: Ino,
    /// Where the damage starts.
    pub offset: u64,
    /// The bytes that were there.
    original: Vec<u8>,
    /// Whether a sector was zeroed (else one bit flipped).
    pub zero_sector: bool,
}

impl std::fmt::Display for Corruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.zero_sector {
            "a sector zeroed"
        } else {
            "a bit flipped"
        };
        write!(
            f,
            "{what} in {} at offset {}",
            self.path.display(),
            self.offset
        )
    }
}

/// Writes `bytes` over `contents` at `offset`, within its length.
fn overwrite(contents: &mut [u8], offset: usize, bytes: &[u8]) {
    let end = (offset + bytes.len()).min(contents.len());
    if offset < end {
        contents[offset..end].copy_from_slice(&bytes[..end - offset]);
    }
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
        self.dir_mut(parent)?.current.insert(name.to_vec(), ino);
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

    /// Damages one file on the medium, drawn from `rng` among the non-empty ones: one bit
    /// flipped, or (with `zero_sector`) a 512-byte sector zeroed, in what is seen and what is
    /// durable alike. Says what was done and what it takes to undo it; `None` if every file is
    /// empty.
    pub fn corrupt(&mut self, rng: &mut DetRng, zero_sector: bool) -> Option<Corruption> {
        let candidates: Vec<(std::path::PathBuf, Ino)> = self
            .walk()
            .into_iter()
            .filter(
                |(_, ino)| matches!(&self.inodes[ino].node, Node::File(f) if !f.current.is_empty()),
            )
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let (path, ino) = candidates[rng.index(candidates.len())].clone();
        let Node::File(file) = &mut self.inodes.get_mut(&ino).expect("named").node else {
            unreachable!("a file was chosen")
        };
        let len = file.current.len();
        let (offset, new): (usize, Vec<u8>) = if zero_sector {
            let sector = rng.index(len.div_ceil(super::loss::SECTOR));
            let start = sector * super::loss::SECTOR;
            let end = (start + super::loss::SECTOR).min(len);
            (start, vec![0; end - start])
        } else {
            let at = rng.index(len);
            (at, vec![file.current[at] ^ (1 << rng.index(8))])
        };
        let original = file.current[offset..offset + new.len()].to_vec();
        overwrite(&mut file.current, offset, &new);
        overwrite(&mut file.durable, offset, &new);
        Some(Corruption {
            path,
            ino,
            offset: offset as u64,
            original,
            zero_sector,
        })
    }

    /// Puts back the bytes `corruption` replaced.
    pub fn repair(&mut self, corruption: &Corruption) {
        if let Some(Inode {
            node: Node::File(file),
            ..
        }) = self.inodes.get_mut(&corruption.ino)
        {
            let offset = corruption.offset as usize;
            overwrite(&mut file.current, offset, &corruption.original);
            overwrite(&mut file.durable, offset, &corruption.original);
        }
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
            *count -= 1;
            if *count == 0 {
                self.open.remove(&ino);
                self.collect_garbage();
            }
        }
    }

    /// A power cut (from [`Tree::power_off`], if it was called, or now): every directory back
    /// to its durable entries, every file to its durable contents plus what `mode` keeps of its
    /// unsynced changes (drawn from `rng`); then the power is on again. The processes using the
    /// file system must have been killed first; handles they left open are dropped.
    pub fn power_loss(&mut self, mode: LossMode, rng: &mut DetRng) -> LossReport {
        self.power_off();
        let mut report = LossReport::default();
        for inode in self.inodes.values_mut() {
            match &mut inode.node {
                Node::Dir(dir) => {
                    let lost: usize = dir
                        .current
                        .iter()
                        .filter(|(name, ino)| dir.durable.get(*name) != Some(ino))
                        .count();
                    report.names_lost += lost as u64;
                    dir.current = dir.durable.clone();
                }
                Node::File(file) if !file.unsynced.is_empty() => {
                    report.files_cut += 1;
                    let kept = cut_unsynced(&file.durable, &file.unsynced, mode, rng);
                    report.bytes_lost += file
                        .unsynced
                        .iter()
                        .map(|change| match change {
                            Change::Write { bytes, .. } => bytes.len() as u64,
                            Change::Resize(_) => 0,
                        })
                        .sum::<u64>()
                        .saturating_sub(kept.bytes_kept);
                    file.durable = kept.contents;
                    file.current = file.durable.clone();
                    file.unsynced.clear();
                }
                Node::File(_) => {}
            }
        }
        self.open.clear();
        self.collect_garbage();
        self.powered_off = false;
        self.stats.power_losses += 1;
        report
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
