//! What is wrong with the bytes of a log's file: damage to a record's frame or items, a segment
//! whose header or seal is wrong, a record that cannot follow the ones before it, a snapshot
//! file that differs from what the log says of it. Each says, in words, what recovery found.

use super::names::segment_name;
use node::{LogIndex, Term};

/// What is wrong with one record's bytes: a frame cut short or failing its checksum, or items
/// that do not decode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordDamage {
    /// Fewer bytes left than a frame takes.
    #[error("{len} bytes, shorter than a record's frame")]
    ShortFrame {
        /// The bytes left.
        len: usize,
    },
    /// A length over the limit (a damaged length cannot ask for gigabytes).
    #[error("a record of {len} bytes exceeds the limit")]
    TooLong {
        /// The length the frame gives.
        len: usize,
    },
    /// A body longer than what is left of the file.
    #[error("a record of {len} bytes with {left} left in the file")]
    CutShort {
        /// The length the frame gives.
        len: usize,
        /// The bytes after the frame.
        left: usize,
    },
    /// The frame's checksum does not match its bytes.
    #[error("checksum mismatch")]
    ChecksumMismatch,
    /// An item that ends past the record's body.
    #[error("an item cut short")]
    ItemCutShort,
    /// A vote flag that is neither 0 nor 1.
    #[error("bad vote flag {0}")]
    BadVoteFlag(u8),
    /// A command longer than any the node writes.
    #[error("a command of {len} bytes exceeds the limit")]
    CommandTooLong {
        /// The length the item gives.
        len: usize,
    },
    /// A checkpoint flag that is neither 0 nor 1.
    #[error("bad checkpoint flag {0}")]
    BadCheckpointFlag(u8),
    /// An item kind this build does not know.
    #[error("unknown item kind {0}")]
    UnknownItemKind(u8),
}

/// Why a record cannot follow the ones replayed before it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// A checkpoint that leaves out the snapshot an earlier record put in force.
    #[error("a checkpoint without the snapshot in force")]
    CheckpointWithoutSnapshot,
    /// A term lower than one already saved.
    #[error("the term goes back from {from} to {to}")]
    TermGoesBack {
        /// The term saved before.
        from: Term,
        /// The lower one.
        to: Term,
    },
    /// A truncation of entries the log does not hold.
    #[error("a truncation from {from} outside the log ({first}..={last})")]
    TruncationOutside {
        /// Where it would cut.
        from: LogIndex,
        /// The first entry the log holds.
        first: LogIndex,
        /// The last.
        last: LogIndex,
    },
    /// An entry that does not come right after the log's last.
    #[error("entry {index} after a log ending at {last}")]
    EntryOutOfPlace {
        /// Its index.
        index: LogIndex,
        /// The log's last index.
        last: LogIndex,
    },
    /// A snapshot older than the one in force.
    #[error("a snapshot at {index} older than the one at {base}")]
    SnapshotGoesBack {
        /// Its index.
        index: LogIndex,
        /// The index of the one in force.
        base: LogIndex,
    },
    /// A checkpoint item after the first of its record.
    #[error("a checkpoint that does not start its record")]
    CheckpointNotFirst,
}

/// What is wrong with a file of the log, at an offset [`super::WalError::Damaged`] gives.
#[derive(Debug, thiserror::Error)]
pub enum Damage {
    /// A damaged record.
    #[error(transparent)]
    Record(#[from] RecordDamage),
    /// A good record that cannot follow the ones before it.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// A damaged record that a good one follows: not a torn tail, and maybe acknowledged.
    #[error("{damage}, and a good record follows at offset {next}")]
    GoodRecordFollows {
        /// The damage.
        damage: RecordDamage,
        /// Where the good record starts.
        next: u64,
    },
    /// A segment shorter than its header.
    #[error("{len} bytes, shorter than a segment's header")]
    ShortHeader {
        /// Its length.
        len: usize,
    },
    /// A segment's header that is not the one its name calls for.
    #[error("a bad segment header (magic, version, number or checksum)")]
    BadHeader,
    /// A record after the seal that closed the segment.
    #[error(
        "a record after the seal that ends this segment (the log went on in {})",
        segment_name(*.next)
    )]
    RecordAfterSeal {
        /// The segment the seal names.
        next: u64,
    },
    /// A seal that names a segment other than the next one.
    #[error("a seal naming segment {named} after segment {segment}")]
    SealNamesAnother {
        /// The segment it names.
        named: u64,
        /// The segment it closes.
        segment: u64,
    },
    /// A seal in a record with other items.
    #[error("a seal among other items")]
    SealAmongItems,
    /// A gap in the segments' numbers.
    #[error("a segment between two others is missing")]
    SegmentMissing,
    /// A snapshot file of a length other than the log records.
    #[error("{on_disk} bytes where the log records {expected}")]
    SnapshotLength {
        /// Its length on disk.
        on_disk: u64,
        /// The length the log records.
        expected: u64,
    },
    /// A snapshot file whose checksum is not its own or not the one the log records.
    #[error("checksum mismatch")]
    SnapshotChecksum,
    /// A snapshot file whose header is not the one the log records.
    #[error("a header that differs from the log's record")]
    SnapshotHeader,
    /// A file the log reads that is not a regular file of bounded length.
    #[error(transparent)]
    Refused(userfiles::ReadError),
}
