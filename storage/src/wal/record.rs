//! One record of the write-ahead log: what one save changed, as items, framed with its length
//! and a CRC32C so a torn or damaged record is found on recovery.
//!
//! ```text
//! record   body length (4) | crc32c of the length and the body (4) | body
//! body     items, each a kind (1) and its fields, integers little-endian:
//!          1 hard state   term (8) | vote flag (1) | voted-for id (4)
//!          2 truncate     first removed index (8)
//!          3 entry        index (8) | term (8) | command length (4) | command
//!          4 snapshot     file number (8) | index (8) | term (8) | length (8) | crc32c (4)
//!          5 checkpoint   complete (1): the record restates the state (hard state, snapshot,
//!                         and if complete every entry after the snapshot)
//! ```
//!
//! A save is one record, so recovery sees each save whole or not at all. Every segment starts
//! with a checkpoint record.

use super::damage::RecordDamage;
use node::persist::MAX_COMMAND_BYTES;
use node::{LogIndex, NodeId, Term};

/// Length and checksum before each record's body.
pub const FRAME_LEN: usize = 8;
/// A limit on one record's body, so a damaged length cannot ask for gigabytes (a save carries at
/// most one batch of entries; a checkpoint of a whole log is written as several records).
pub const MAX_BODY_BYTES: usize = 64 << 20;

/// A snapshot file a record points at: the log up to `index` (of term `term` there) is
/// compacted into file number `file`, whose service bytes are `len` long and whose contents
/// have checksum `crc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotRef {
    /// The number in its file name.
    pub file: u64,
    pub index: LogIndex,
    pub term: Term,
    pub len: u64,
    pub crc: u32,
}

/// One change a save made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// The current term and vote.
    HardState {
        term: Term,
        voted_for: Option<NodeId>,
    },
    /// The entries from `from` on are removed (a conflicting suffix).
    Truncate { from: LogIndex },
    /// The entry at `index`.
    Entry {
        index: LogIndex,
        term: Term,
        command: Vec<u8>,
    },
    /// The log up to the snapshot's index is compacted into its file.
    Snapshot(SnapshotRef),
    /// The record restates the state as of its write: a hard state, the snapshot if there is
    /// one, and, if `complete`, every entry after the snapshot.
    Checkpoint { complete: bool },
    /// The segment ends here and the log goes on in segment `segment`, which exists (it was
    /// created durably before this was written): the last record of every segment the log
    /// rolled over from, alone in its record, so a missing last segment is seen.
    ContinuedIn { segment: u64 },
}

impl Item {
    /// The bytes of this item in a body.
    pub fn encode_into(&self, body: &mut Vec<u8>) {
        match self {
            Item::HardState { term, voted_for } => {
                body.push(1);
                body.extend_from_slice(&term.0.to_le_bytes());
                body.push(u8::from(voted_for.is_some()));
                body.extend_from_slice(&voted_for.map_or(0, |node| node.0).to_le_bytes());
            }
            Item::Truncate { from } => {
                body.push(2);
                body.extend_from_slice(&from.0.to_le_bytes());
            }
            Item::Entry {
                index,
                term,
                command,
            } => {
                assert!(
                    command.len() <= MAX_COMMAND_BYTES,
                    "a command over the limit"
                );
                body.push(3);
                body.extend_from_slice(&index.0.to_le_bytes());
                body.extend_from_slice(&term.0.to_le_bytes());
                body.extend_from_slice(&(command.len() as u32).to_le_bytes());
                body.extend_from_slice(command);
            }
            Item::Snapshot(SnapshotRef {
                file,
                index,
                term,
                len,
                crc,
            }) => {
                body.push(4);
                body.extend_from_slice(&file.to_le_bytes());
                body.extend_from_slice(&index.0.to_le_bytes());
                body.extend_from_slice(&term.0.to_le_bytes());
                body.extend_from_slice(&len.to_le_bytes());
                body.extend_from_slice(&crc.to_le_bytes());
            }
            Item::Checkpoint { complete } => {
                body.push(5);
                body.push(u8::from(*complete));
            }
            Item::ContinuedIn { segment } => {
                body.push(6);
                body.extend_from_slice(&segment.to_le_bytes());
            }
        }
    }

    /// The bytes one item takes in a body.
    pub fn encoded_len(&self) -> usize {
        match self {
            Item::HardState { .. } => 1 + 8 + 1 + 4,
            Item::Truncate { .. } => 1 + 8,
            Item::Entry { command, .. } => 1 + 8 + 8 + 4 + command.len(),
            Item::Snapshot(_) => 1 + 8 + 8 + 8 + 8 + 4,
            Item::Checkpoint { .. } => 1 + 1,
            Item::ContinuedIn { .. } => 1 + 8,
        }
    }
}

/// A framed record holding `items`.
pub fn frame(items: &[Item]) -> Vec<u8> {
    let body_len: usize = items.iter().map(Item::encoded_len).sum();
    assert!(
        body_len <= MAX_BODY_BYTES,
        "a record of {body_len} bytes (split it)"
    );
    let mut record = Vec::with_capacity(FRAME_LEN + body_len);
    record.extend_from_slice(&(body_len as u32).to_le_bytes());
    record.extend_from_slice(&[0; 4]);
    for item in items {
        item.encode_into(&mut record);
    }
    assert_eq!(record.len(), FRAME_LEN + body_len);
    let crc = frame_crc(&record[..4], &record[FRAME_LEN..]);
    record[4..8].copy_from_slice(&crc.to_le_bytes());
    record
}

fn frame_crc(len: &[u8], body: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(len), body)
}

/// What is at an offset of a segment.
#[derive(Debug, PartialEq, Eq)]
pub enum Framed<'a> {
    /// A whole record with a good checksum: its body, and the bytes it takes.
    Record { body: &'a [u8], len: usize },
    /// Nothing: the bytes end here.
    End,
    /// A record that is cut short or fails its checksum: why.
    Damaged(RecordDamage),
}

/// Reads the record at the start of `bytes`.
pub fn unframe(bytes: &[u8]) -> Framed<'_> {
    if bytes.is_empty() {
        return Framed::End;
    }
    if bytes.len() < FRAME_LEN {
        return Framed::Damaged(RecordDamage::ShortFrame { len: bytes.len() });
    }
    let body_len = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) as usize;
    if body_len > MAX_BODY_BYTES {
        return Framed::Damaged(RecordDamage::TooLong { len: body_len });
    }
    let Some(body) = bytes.get(FRAME_LEN..FRAME_LEN + body_len) else {
        return Framed::Damaged(RecordDamage::CutShort {
            len: body_len,
            left: bytes.len() - FRAME_LEN,
        });
    };
    let stored = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    if frame_crc(&bytes[..4], body) != stored {
        return Framed::Damaged(RecordDamage::ChecksumMismatch);
    }
    Framed::Record {
        body,
        len: FRAME_LEN + body_len,
    }
}

/// The items of a record's body (its checksum already checked); an error says what is wrong.
pub fn decode_items(mut body: &[u8]) -> Result<Vec<Item>, RecordDamage> {
    let mut items = Vec::new();
    while !body.is_empty() {
        let mut take = |len: usize| -> Result<&[u8], RecordDamage> {
            if body.len() < len {
                return Err(RecordDamage::ItemCutShort);
            }
            let (head, rest) = body.split_at(len);
            body = rest;
            Ok(head)
        };
        let u64_at = |bytes: &[u8], at: usize| {
            u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
        };
        let item = match take(1)?[0] {
            1 => {
                let fields = take(13)?;
                let vote = u32::from_le_bytes(fields[9..13].try_into().expect("4 bytes"));
                Item::HardState {
                    term: Term(u64_at(fields, 0)),
                    voted_for: match fields[8] {
                        0 => None,
                        1 => Some(NodeId(vote)),
                        flag => return Err(RecordDamage::BadVoteFlag(flag)),
                    },
                }
            }
            2 => Item::Truncate {
                from: LogIndex(u64_at(take(8)?, 0)),
            },
            3 => {
                let fields = take(20)?;
                let len = u32::from_le_bytes(fields[16..20].try_into().expect("4 bytes")) as usize;
                if len > MAX_COMMAND_BYTES {
                    return Err(RecordDamage::CommandTooLong { len });
                }
                Item::Entry {
                    index: LogIndex(u64_at(fields, 0)),
                    term: Term(u64_at(fields, 8)),
                    command: take(len)?.to_vec(),
                }
            }
            4 => {
                let fields = take(36)?;
                Item::Snapshot(SnapshotRef {
                    file: u64_at(fields, 0),
                    index: LogIndex(u64_at(fields, 8)),
                    term: Term(u64_at(fields, 16)),
                    len: u64_at(fields, 24),
                    crc: u32::from_le_bytes(fields[32..36].try_into().expect("4 bytes")),
                })
            }
            5 => Item::Checkpoint {
                complete: match take(1)?[0] {
                    0 => false,
                    1 => true,
                    flag => return Err(RecordDamage::BadCheckpointFlag(flag)),
                },
            },
            6 => Item::ContinuedIn {
                segment: u64_at(take(8)?, 0),
            },
            kind => return Err(RecordDamage::UnknownItemKind(kind)),
        };
        items.push(item);
    }
    Ok(items)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn items() -> Vec<Item> {
        vec![
            Item::Checkpoint { complete: true },
            Item::Snapshot(SnapshotRef {
                file: 7,
                index: LogIndex(10),
                term: Term(2),
                len: 99,
                crc: 0xdead_beef,
            }),
            Item::Truncate { from: LogIndex(11) },
            Item::Entry {
                index: LogIndex(11),
                term: Term(3),
                command: b"put x 1".to_vec(),
            },
            Item::HardState {
                term: Term(3),
                voted_for: Some(NodeId(2)),
            },
            Item::ContinuedIn { segment: 9 },
        ]
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let record = frame(&items());
        let Framed::Record { body, len } = unframe(&record) else {
            panic!("damaged");
        };
        assert_eq!(len, record.len());
        assert_eq!(decode_items(body), Ok(items()));
        assert_eq!(unframe(&[]), Framed::End);
    }

    #[test]
    fn every_cut_and_every_bit_flip_is_damage() {
        let record = frame(&items());
        for len in 1..record.len() {
            assert!(
                matches!(unframe(&record[..len]), Framed::Damaged(_)),
                "cut at {len}"
            );
        }
        for at in 0..record.len() {
            let mut flipped = record.clone();
            flipped[at] ^= 0x20;
            assert!(
                !matches!(unframe(&flipped), Framed::Record { len, .. } if len == record.len()),
                "flip at {at} read as the record"
            );
        }
    }

    #[test]
    fn a_damaged_length_cannot_ask_for_gigabytes() {
        let mut record = frame(&items());
        record[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            unframe(&record),
            Framed::Damaged(RecordDamage::TooLong { .. })
        ));
    }
}
