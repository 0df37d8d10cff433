//! The files of a write-ahead log's directory (named as `names.rs` says): segments and
//! snapshots (each snapshot written as `<name>.tmp`, synced and renamed), their headers, and
//! the durable ways to create and read them.

use super::names::segment_name;
use crate::filesystem::{AppendFile, Filesystem};
use crate::wal::{Damage, WalError};
use node::{LogIndex, Term};
use std::path::Path;

/// A segment's header: magic, version, its number, and a CRC32C of those.
pub const SEGMENT_HEADER_LEN: usize = 4 + 1 + 8 + 4;
/// The most a segment may hold before the log rolls to the next one.
pub const MAX_ROLL_BYTES: u64 = 1 << 30;
/// The longest segment file: its header, the roll size, and the one record that passed it.
/// Recovery reads no more (a larger file, a link to a device or a FIFO is refused unread).
pub const MAX_SEGMENT_FILE_BYTES: u64 = SEGMENT_HEADER_LEN as u64
    + MAX_ROLL_BYTES
    + (super::record::FRAME_LEN + super::record::MAX_BODY_BYTES) as u64;
const SEGMENT_MAGIC: &[u8; 4] = b"ILWL";
const SNAPSHOT_MAGIC: &[u8; 4] = b"ILSN";
const VERSION: u8 = 1;
/// A snapshot file's header before its bytes: magic, version, index, term, length.
const SNAPSHOT_HEADER_LEN: usize = 4 + 1 + 8 + 8 + 8;

/// The header of segment `number`.
pub fn segment_header(number: u64) -> Vec<u8> {
    let mut header = Vec::with_capacity(SEGMENT_HEADER_LEN);
    header.extend_from_slice(SEGMENT_MAGIC);
    header.push(VERSION);
    header.extend_from_slice(&number.to_le_bytes());
    let crc = crc32c::crc32c(&header);
    header.extend_from_slice(&crc.to_le_bytes());
    header
}

/// Checks a segment's header against the number in its name.
pub fn check_segment_header(bytes: &[u8], number: u64) -> Result<(), Damage> {
    let Some(header) = bytes.get(..SEGMENT_HEADER_LEN) else {
        return Err(Damage::ShortHeader { len: bytes.len() });
    };
    if header != segment_header(number) {
        return Err(Damage::BadHeader);
    }
    Ok(())
}

/// Writes `bytes` as `path`, durably: a temporary file synced, renamed over `path`, and the
/// directory synced, so after a crash `path` holds all of them or does not exist.
///
/// With `sync_bytes` false (the broken `snapshot-unsynced`), the temporary file's bytes are not
/// synced before the rename: a power loss can leave the name durable and the bytes torn.
pub fn write_durably(
    filesystem: &dyn Filesystem,
    dir: &Path,
    path: &Path,
    bytes: &[u8],
    sync_bytes: bool,
) -> std::io::Result<()> {
    debug_assert_eq!(
        path.parent(),
        Some(dir),
        "{} is not in {}",
        path.display(),
        dir.display()
    );
    let tmp = path.with_extension("tmp");
    if sync_bytes {
        filesystem.write_synced(&tmp, bytes)?;
    } else {
        match filesystem.remove(&tmp) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
        filesystem.create_new(&tmp)?.append(bytes)?;
    }
    filesystem.rename(&tmp, path)?;
    filesystem.sync_directory(dir)
}

/// A new segment `number` holding its header, created durably (the directory synced, unless
/// `sync_name` is false: the broken `segment-name-unsynced`).
pub fn create_segment(
    filesystem: &dyn Filesystem,
    dir: &Path,
    number: u64,
    sync_name: bool,
) -> std::io::Result<Box<dyn AppendFile>> {
    let file = filesystem.create_new(&dir.join(segment_name(number)))?;
    file.append(&segment_header(number))?;
    file.sync_data()?;
    if sync_name {
        filesystem.sync_directory(dir)?;
    }
    Ok(file)
}

fn snapshot_header(index: LogIndex, term: Term, len: u64) -> Vec<u8> {
    let mut header = Vec::with_capacity(SNAPSHOT_HEADER_LEN);
    header.extend_from_slice(SNAPSHOT_MAGIC);
    header.push(VERSION);
    header.extend_from_slice(&index.0.to_le_bytes());
    header.extend_from_slice(&term.0.to_le_bytes());
    header.extend_from_slice(&len.to_le_bytes());
    header
}

/// A snapshot file's contents: header, the service's bytes, a CRC32C of both.
pub fn encode_snapshot(index: LogIndex, term: Term, bytes: &[u8]) -> Vec<u8> {
    let mut file = snapshot_header(index, term, bytes.len() as u64);
    file.reserve(bytes.len() + 4);
    file.extend_from_slice(bytes);
    let crc = crc32c::crc32c(&file);
    file.extend_from_slice(&crc.to_le_bytes());
    file
}

/// The service's bytes in snapshot file `path`, checked against what the log's record says of
/// it (index, term, length, checksum of the whole file).
pub fn read_snapshot(
    filesystem: &dyn Filesystem,
    path: &Path,
    index: LogIndex,
    term: Term,
    len: u64,
    crc: u32,
) -> Result<Vec<u8>, WalError> {
    let damaged = |why: Damage| WalError::Damaged {
        file: path.to_path_buf(),
        offset: 0,
        why,
    };
    let expected = SNAPSHOT_HEADER_LEN as u64 + len + 4;
    let on_disk = filesystem.len(path).map_err(|source| WalError::Io {
        file: path.to_path_buf(),
        source,
    })?;
    if on_disk != expected {
        return Err(damaged(Damage::SnapshotLength { on_disk, expected }));
    }
    let file = read_bounded(filesystem, path, expected)?;
    let (contents, stored) = file.split_at(file.len() - 4);
    let actual = crc32c::crc32c(contents);
    if actual != u32::from_le_bytes(stored.try_into().expect("4 bytes")) || actual != crc {
        return Err(damaged(Damage::SnapshotChecksum));
    }
    if contents[..SNAPSHOT_HEADER_LEN] != snapshot_header(index, term, len)[..] {
        return Err(damaged(Damage::SnapshotHeader));
    }
    Ok(contents[SNAPSHOT_HEADER_LEN..].to_vec())
}

/// The bytes of the log's file at `path`: a regular file of at most `limit` bytes (a link to a
/// device, a FIFO or a larger file is refused before it is read, as damage).
pub fn read_bounded(
    filesystem: &dyn Filesystem,
    path: &Path,
    limit: u64,
) -> Result<Vec<u8>, WalError> {
    filesystem.read(path, limit).map_err(|error| match error {
        userfiles::ReadError::Io { source, .. } => WalError::Io {
            file: path.to_path_buf(),
            source,
        },
        refused => WalError::Damaged {
            file: path.to_path_buf(),
            offset: 0,
            why: Damage::Refused(refused),
        },
    })
}
