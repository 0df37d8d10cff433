//! What each request the kernel sends does to the [`Tree`] and what its reply carries, one
//! function per request. The fields are read in the order of the kernel's structures
//! (`fuse_kernel.h`); a request too short for them is answered `EINVAL`, never a panic.

use super::abi::{
    dirent_len, Fields, Reply, Truncated, FATTR_MODE, FATTR_SIZE, FUSE_BIG_WRITES, MAJOR,
    MAX_WRITE, MINOR,
};
use super::tree::{FsError, Ino, Tree, NAME_MAX};

/// An errno to answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Errno(pub(super) i32);

impl From<FsError> for Errno {
    fn from(error: FsError) -> Errno {
        Errno(error.errno())
    }
}

impl From<Truncated> for Errno {
    fn from(_: Truncated) -> Errno {
        Errno(libc::EINVAL)
    }
}

/// `FUSE_INIT`: the protocol version and limits this file system speaks.
pub(super) fn init(fields: &mut Fields<'_>, reply: &mut Reply) -> Result<(), Errno> {
    let major = fields.u32()?;
    let _minor = fields.u32()?;
    let max_readahead = fields.u32()?;
    let flags = fields.u32()?;
    if major < MAJOR {
        return Err(Errno(libc::EPROTO));
    }
    reply
        .u32(MAJOR)
        .u32(MINOR)
        .u32(max_readahead)
        .u32(flags & FUSE_BIG_WRITES)
        .u16(16) // max_background
        .u16(12) // congestion_threshold
        .u32(MAX_WRITE)
        .u32(1) // time_gran
        .u16(0) // max_pages: the default
        .u16(0) // map_alignment
        .u32(0) // flags2
        .bytes(&[0; 28]);
    Ok(())
}

/// `FUSE_LOOKUP`: the entry of a name in directory `parent`.
pub(super) fn lookup(
    tree: &Tree,
    parent: Ino,
    fields: &mut Fields<'_>,
    reply: &mut Reply,
) -> Result<(), Errno> {
    let found = tree.lookup(parent, fields.name()?)?;
    reply.entry(&tree.attributes(found)?);
    Ok(())
}

/// `FUSE_SETATTR`: a new length or permissions (times and owners are not kept).
pub(super) fn setattr(
    tree: &mut Tree,
    ino: Ino,
    fields: &mut Fields<'_>,
    reply: &mut Reply,
) -> Result<(), Errno> {
    let valid = fields.u32()?;
    fields.skip(4 + 8)?; // padding, fh
    let size = fields.u64()?;
    fields.skip(8 + 3 * 8 + 3 * 4)?; // lock_owner, times
    let mode = fields.u32()?;
    if valid & FATTR_SIZE != 0 {
        tree.set_len(ino, size)?;
    }
    if valid & FATTR_MODE != 0 {
        tree.set_permissions(ino, mode)?;
    }
    reply.attr_out(&tree.attributes(ino)?);
    Ok(())
}

/// `FUSE_MKNOD`: a regular file (nothing else: devices and pipes are refused).
pub(super) fn mknod(
    tree: &mut Tree,
    parent: Ino,
    fields: &mut Fields<'_>,
    reply: &mut Reply,
) -> Result<(), Errno> {
    let mode = fields.u32()?;
    fields.skip(4)?; // rdev
    let umask = fields.u32()?;
    fields.skip(4)?;
    if mode & libc::S_IFMT != libc::S_IFREG {
        return Err(Errno(libc::EPERM));
    }
    let created = tree.create(parent, fields.name()?, false, mode & !umask)?;
    reply.entry(&tree.attributes(created)?);
    Ok(())
}

/// `FUSE_MKDIR`: a directory.
pub(super) fn mkdir(
    tree: &mut Tree,
    parent: Ino,
    fields: &mut Fields<'_>,
    reply: &mut Reply,
) -> Result<(), Errno> {
    let mode = fields.u32()?;
    let umask = fields.u32()?;
    let created = tree.create(parent, fields.name()?, true, mode & !umask)?;
    reply.entry(&tree.attributes(created)?);
    Ok(())
}

/// `FUSE_CREATE`: a regular file, opened; the caller adds the handle to the reply.
pub(super) fn create(
    tree: &mut Tree,
    parent: Ino,
    fields: &mut Fields<'_>,
    reply: &mut Reply,
) -> Result<Ino, Errno> {
    let _flags = fields.u32()?;
    let mode = fields.u32()?;
    let umask = fields.u32()?;
    fields.skip(4)?; // open_flags
    let created = tree.create(parent, fields.name()?, false, mode & !umask)?;
    tree.opened(created)?;
    reply.entry(&tree.attributes(created)?);
    Ok(created)
}

/// `FUSE_RENAME` and `FUSE_RENAME2` (whose flags, exchange or no-replace, are refused).
pub(super) fn rename(
    tree: &mut Tree,
    parent: Ino,
    is_rename2: bool,
    fields: &mut Fields<'_>,
) -> Result<(), Errno> {
    let new_parent = Ino(fields.u64()?);
    if is_rename2 {
        let flags = fields.u32()?;
        fields.skip(4)?;
        if flags != 0 {
            return Err(Errno(libc::EINVAL));
        }
    }
    let name = fields.name()?;
    let new_name = fields.name()?;
    tree.rename(parent, name, new_parent, new_name)?;
    Ok(())
}

/// `FUSE_READ`: at most [`MAX_WRITE`] bytes from an offset.
pub(super) fn read(
    tree: &Tree,
    ino: Ino,
    fields: &mut Fields<'_>,
    reply: &mut Reply,
) -> Result<(), Errno> {
    fields.skip(8)?; // fh
    let offset = fields.u64()?;
    let size = fields.u32()?.min(MAX_WRITE);
    reply.bytes(tree.read(ino, offset, size)?);
    Ok(())
}

/// `FUSE_WRITE`: the bytes that follow the header, at an offset.
pub(super) fn write(
    tree: &mut Tree,
    ino: Ino,
    fields: &mut Fields<'_>,
    reply: &mut Reply,
) -> Result<(), Errno> {
    fields.skip(8)?; // fh
    let offset = fields.u64()?;
    let size = fields.u32()? as usize;
    fields.skip(4 + 8 + 4 + 4)?; // write_flags, lock_owner, flags, padding
    let data = fields.rest();
    if data.len() < size {
        return Err(Errno(libc::EINVAL));
    }
    let written = tree.write(ino, offset, &data[..size])?;
    assert!(written as usize <= size, "wrote more than was sent");
    reply.u32(written).u32(0);
    Ok(())
}

/// `FUSE_READDIR`: the entries from an offset that fit the kernel's buffer.
pub(super) fn readdir(
    tree: &Tree,
    ino: Ino,
    fields: &mut Fields<'_>,
    reply: &mut Reply,
) -> Result<(), Errno> {
    fields.skip(8)?; // fh
    let offset = fields.u64()?;
    let size = fields.u32()? as usize;
    let entries = tree.entries(ino)?;
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    let mut room = size;
    for (index, (name, child, is_dir)) in entries.iter().enumerate().skip(start) {
        let needed = dirent_len(name);
        if needed > room {
            break;
        }
        room -= needed;
        reply.dirent(child.0, index as u64 + 1, name, *is_dir);
    }
    Ok(())
}

/// `FUSE_STATFS`: a roomy disk (a full one is a fault the tree is told of).
pub(super) fn statfs(reply: &mut Reply) {
    let blocks = 1u64 << 24; // 64 GiB of 4 KiB blocks
    reply
        .u64(blocks)
        .u64(blocks)
        .u64(blocks)
        .u64(1 << 20)
        .u64(1 << 20)
        .u32(4096) // bsize
        .u32(NAME_MAX as u32)
        .u32(4096) // frsize
        .u32(0)
        .bytes(&[0; 24]);
}
