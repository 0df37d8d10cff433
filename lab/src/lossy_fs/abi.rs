//! The kernel's FUSE protocol, the part this file system speaks (Linux's
//! `include/uapi/linux/fuse.h`, protocol 7.31): request opcodes, the fixed parts of requests
//! read field by field, and replies written field by field, little-endian as the kernel's own
//! structs are on the machines this runs on.

use super::tree::Attributes;

/// The protocol's major version.
pub const MAJOR: u32 = 7;
/// The minor version this side speaks (its struct sizes are the ones written here).
pub const MINOR: u32 = 31;

/// The largest write the kernel sends in one request.
pub const MAX_WRITE: u32 = 128 * 1024;
/// A request buffer: the largest write and room for its headers (at least the kernel's
/// FUSE_MIN_READ_BUFFER of 8 KiB).
pub const REQUEST_BUFFER: usize = MAX_WRITE as usize + 64 * 1024;

/// `fuse_in_header`'s size.
pub const IN_HEADER: usize = 40;
/// `fuse_out_header`'s size.
pub const OUT_HEADER: usize = 16;

/// `fuse_open_out.open_flags`: no page cache for the file, so every read and write reaches
/// the file system and a power cut's changes are seen at once.
pub const FOPEN_DIRECT_IO: u32 = 1 << 0;
/// `fuse_init_in/out.flags`: writes larger than a page in one request.
pub const FUSE_BIG_WRITES: u32 = 1 << 5;
/// `fuse_setattr_in.valid`: the mode is set.
pub const FATTR_MODE: u32 = 1 << 0;
/// `fuse_setattr_in.valid`: the size is set.
pub const FATTR_SIZE: u32 = 1 << 3;

/// The requests handled, by opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    /// FUSE_LOOKUP.
    Lookup,
    /// FUSE_FORGET (no reply).
    Forget,
    /// FUSE_GETATTR.
    Getattr,
    /// FUSE_SETATTR.
    Setattr,
    /// FUSE_MKNOD.
    Mknod,
    /// FUSE_MKDIR.
    Mkdir,
    /// FUSE_UNLINK.
    Unlink,
    /// FUSE_RMDIR.
    Rmdir,
    /// FUSE_RENAME.
    Rename,
    /// FUSE_OPEN.
    Open,
    /// FUSE_READ.
    Read,
    /// FUSE_WRITE.
    Write,
    /// FUSE_STATFS.
    Statfs,
    /// FUSE_RELEASE.
    Release,
    /// FUSE_FSYNC.
    Fsync,
    /// FUSE_FLUSH.
    Flush,
    /// FUSE_INIT.
    Init,
    /// FUSE_OPENDIR.
    Opendir,
    /// FUSE_READDIR.
    Readdir,
    /// FUSE_RELEASEDIR.
    Releasedir,
    /// FUSE_FSYNCDIR.
    Fsyncdir,
    /// FUSE_ACCESS.
    Access,
    /// FUSE_CREATE.
    Create,
    /// FUSE_INTERRUPT (no reply).
    Interrupt,
    /// FUSE_DESTROY.
    Destroy,
    /// FUSE_BATCH_FORGET (no reply).
    BatchForget,
    /// FUSE_RENAME2.
    Rename2,
    /// Anything else: answered ENOSYS, which the kernel remembers.
    Other(u32),
}

impl Opcode {
    /// The opcode the kernel sent.
    pub fn from_u32(code: u32) -> Opcode {
        match code {
            1 => Opcode::Lookup,
            2 => Opcode::Forget,
            3 => Opcode::Getattr,
            4 => Opcode::Setattr,
            8 => Opcode::Mknod,
            9 => Opcode::Mkdir,
            10 => Opcode::Unlink,
            11 => Opcode::Rmdir,
            12 => Opcode::Rename,
            14 => Opcode::Open,
            15 => Opcode::Read,
            16 => Opcode::Write,
            17 => Opcode::Statfs,
            18 => Opcode::Release,
            20 => Opcode::Fsync,
            25 => Opcode::Flush,
            26 => Opcode::Init,
            27 => Opcode::Opendir,
            28 => Opcode::Readdir,
            29 => Opcode::Releasedir,
            30 => Opcode::Fsyncdir,
            34 => Opcode::Access,
            35 => Opcode::Create,
            36 => Opcode::Interrupt,
            38 => Opcode::Destroy,
            42 => Opcode::BatchForget,
            45 => Opcode::Rename2,
            other => Opcode::Other(other),
        }
    }

    /// Whether it changes nothing and may be answered while the power is off (the kernel's
    /// handshake, and the closing of files by processes that were killed).
    pub fn is_harmless_while_off(self) -> bool {
        matches!(
            self,
            Opcode::Init | Opcode::Destroy | Opcode::Release | Opcode::Releasedir | Opcode::Flush
        )
    }

    /// Whether the kernel expects no reply.
    pub fn is_unanswered(self) -> bool {
        matches!(
            self,
            Opcode::Forget | Opcode::BatchForget | Opcode::Interrupt
        )
    }
}

/// A request that is shorter than its opcode needs.
#[derive(Debug, PartialEq, Eq)]
pub struct Truncated;

/// Reads a request's fields in order.
pub struct Fields<'a> {
    bytes: &'a [u8],
}

impl<'a> Fields<'a> {
    /// The fields of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Fields<'a> {
        Fields { bytes }
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], Truncated> {
        if self.bytes.len() < len {
            return Err(Truncated);
        }
        let (taken, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(taken)
    }

    /// The next `u32`.
    pub fn u32(&mut self) -> Result<u32, Truncated> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    /// The next `u64`.
    pub fn u64(&mut self) -> Result<u64, Truncated> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// Skips `len` bytes.
    pub fn skip(&mut self, len: usize) -> Result<(), Truncated> {
        self.take(len).map(|_| ())
    }

    /// The next NUL-terminated name, without its NUL.
    pub fn name(&mut self) -> Result<&'a [u8], Truncated> {
        let end = self.bytes.iter().position(|&b| b == 0).ok_or(Truncated)?;
        let name = self.take(end)?;
        self.take(1)?;
        Ok(name)
    }

    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }
}

/// `fuse_in_header`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InHeader {
    /// The request's length, header included.
    pub len: u32,
    /// What is asked.
    pub opcode: Opcode,
    /// The id the reply carries.
    pub unique: u64,
    /// The inode the request is about.
    pub nodeid: u64,
}

impl InHeader {
    /// Reads the header at the start of `request`.
    pub fn parse(request: &[u8]) -> Result<InHeader, Truncated> {
        let mut fields = Fields::new(request);
        let len = fields.u32()?;
        let opcode = Opcode::from_u32(fields.u32()?);
        let unique = fields.u64()?;
        let nodeid = fields.u64()?;
        fields.skip(IN_HEADER - 24)?;
        Ok(InHeader {
            len,
            opcode,
            unique,
            nodeid,
        })
    }
}

/// A reply being written: the header's length and id filled in by [`Reply::finish`].
pub struct Reply {
    bytes: Vec<u8>,
}

impl Reply {
    /// A successful reply to request `unique`.
    pub fn ok(unique: u64) -> Reply {
        let mut bytes = Vec::with_capacity(OUT_HEADER + 128);
        bytes.extend_from_slice(&0u32.to_le_bytes());
        bytes.extend_from_slice(&0i32.to_le_bytes());
        bytes.extend_from_slice(&unique.to_le_bytes());
        Reply { bytes }
    }

    /// A reply to request `unique` that fails with `errno`.
    pub fn error(unique: u64, errno: i32) -> Vec<u8> {
        let mut reply = Reply::ok(unique);
        reply.bytes[4..8].copy_from_slice(&(-errno).to_le_bytes());
        reply.finish()
    }

    /// Appends a `u16`.
    pub fn u16(&mut self, value: u16) -> &mut Reply {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends a `u32`.
    pub fn u32(&mut self, value: u32) -> &mut Reply {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends a `u64`.
    pub fn u64(&mut self, value: u64) -> &mut Reply {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends raw bytes.
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Reply {
        self.bytes.extend_from_slice(bytes);
        self
    }

    /// Appends `fuse_attr` for `attributes` (times zero: nothing here reads them, and a time
    /// from the OS clock would make two runs differ).
    pub fn attr(&mut self, attributes: &Attributes) -> &mut Reply {
        let kind = if attributes.is_dir {
            libc::S_IFDIR
        } else {
            libc::S_IFREG
        };
        self.u64(attributes.ino.0)
            .u64(attributes.size)
            .u64(attributes.size.div_ceil(512))
            .u64(0) // atime
            .u64(0) // mtime
            .u64(0) // ctime
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(kind | attributes.permissions)
            .u32(if attributes.is_dir { 2 } else { 1 })
            .u32(0) // uid: root, as the mount's user_id
            .u32(0) // gid
            .u32(0) // rdev
            .u32(4096) // blksize
            .u32(0) // flags
    }

    /// Appends `fuse_entry_out` for `attributes`, cached for no time: every path is looked up
    /// afresh, so a power cut's undone names are seen at once.
    pub fn entry(&mut self, attributes: &Attributes) -> &mut Reply {
        self.u64(attributes.ino.0)
            .u64(0) // generation: inode numbers are never reused
            .u64(0)
            .u64(0)
            .u32(0)
            .u32(0)
            .attr(attributes)
    }

    /// Appends `fuse_attr_out` for `attributes`, cached for no time.
    pub fn attr_out(&mut self, attributes: &Attributes) -> &mut Reply {
        self.u64(0).u32(0).u32(0).attr(attributes)
    }

    /// Appends `fuse_open_out`.
    pub fn open_out(&mut self, handle: u64, open_flags: u32) -> &mut Reply {
        self.u64(handle).u32(open_flags).u32(0)
    }

    /// Appends one `fuse_dirent` (padded to 8 bytes); `next` is the offset of the entry after
    /// it.
    pub fn dirent(&mut self, ino: u64, next: u64, name: &[u8], is_dir: bool) -> &mut Reply {
        let kind = if is_dir { libc::DT_DIR } else { libc::DT_REG };
        self.u64(ino)
            .u64(next)
            .u32(name.len() as u32)
            .u32(kind.into())
            .bytes(name);
        let padding = dirent_len(name) - (24 + name.len());
        self.bytes(&[0; 8][..padding])
    }

    /// The finished reply, its length filled in.
    pub fn finish(mut self) -> Vec<u8> {
        let len = u32::try_from(self.bytes.len()).expect("a reply is small");
        self.bytes[0..4].copy_from_slice(&len.to_le_bytes());
        self.bytes
    }
}

/// The bytes a `fuse_dirent` for `name` takes.
pub fn dirent_len(name: &[u8]) -> usize {
    (24 + name.len()).div_ceil(8) * 8
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::lossy_fs::tree::Ino;

    #[test]
    fn replies_have_the_kernel_structs_sizes() {
        let attributes = Attributes {
            ino: Ino(2),
            size: 1,
            is_dir: false,
            permissions: 0o644,
        };
        let mut entry = Reply::ok(1);
        entry.entry(&attributes);
        assert_eq!(entry.finish().len(), OUT_HEADER + 128, "fuse_entry_out");
        let mut attr = Reply::ok(1);
        attr.attr_out(&attributes);
        assert_eq!(attr.finish().len(), OUT_HEADER + 104, "fuse_attr_out");
        let mut dirent = Reply::ok(1);
        dirent.dirent(2, 1, b"wal-1.log", false);
        assert_eq!(dirent.finish().len(), OUT_HEADER + 40);
        let error = Reply::error(9, libc::ENOENT);
        assert_eq!(error.len(), OUT_HEADER);
        assert_eq!(&error[4..8], &(-libc::ENOENT).to_le_bytes());
        assert_eq!(&error[8..16], &9u64.to_le_bytes());
    }

    #[test]
    fn a_short_request_is_truncated_not_a_panic() {
        assert_eq!(InHeader::parse(&[0; 39]), Err(Truncated));
        let mut fields = Fields::new(b"name-without-nul");
        assert_eq!(fields.name(), Err(Truncated));
        let mut fields = Fields::new(b"a\0b\0");
        assert_eq!(fields.name(), Ok(&b"a"[..]));
        assert_eq!(fields.name(), Ok(&b"b"[..]));
        assert_eq!(fields.u32(), Err(Truncated));
    }
}
