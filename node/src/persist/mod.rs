//! What a node must not forget: current term, vote and log, their encoding, and the
//! [`Persister`] seam that stores them.
//!
//! The encoding carries a magic number, a version, the body length and a checksum, so a torn or
//! corrupted write is detected on load and the node refuses to start instead of trusting it. A
//! node keeps its encoding between writes ([`StateEncoder`]), so a write encodes only the entries
//! appended since the last one; a [`Persister`] either replaces the whole state atomically with
//! those bytes, or (an append-only log) stores the state in its own form and shares fsyncs among
//! concurrent writes ([`GroupCommit`]).

use crate::log::RaftLog;
use crate::{Command, Entry, LogIndex, NodeId, Term};
use std::ops::Range;
use threadsim::sync::Mutex;

/// The state Raft requires on stable storage before answering or sending (Figure 2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PersistentState {
    /// The latest term this node has seen.
    pub current_term: Term,
    /// The candidate that received this node's vote in `current_term`.
    pub voted_for: Option<NodeId>,
    /// The log, whose prefix up to its snapshot index may be compacted into `snapshot`.
    pub log: RaftLog,
    /// The service's state after applying every entry up to the log's snapshot index, as the
    /// service encoded it (empty when nothing is compacted).
    pub snapshot: Vec<u8>,
}

/// Stable storage for one node's [`PersistentState`], as bytes.
///
/// The correct implementation replaces the stored bytes atomically: after a crash, `load` returns
/// either the previous or the new bytes, or an error saying the storage is corrupt.
pub trait Persister: Send + Sync {
    /// Stores `bytes`, replacing what was stored. Returns once it is durable, or fails when the
    /// machine crashed during the write (the node must then stop as if it had crashed).
    fn save(&self, bytes: &[u8]) -> Result<(), StorageError>;
    /// [`save`](Self::save), with a promise from the caller: `bytes[unchanged]` equals the same
    /// range of the bytes this persister last saved, so it may write only the rest. The default
    /// writes everything.
    fn save_changed(&self, bytes: &[u8], unchanged: Range<usize>) -> Result<(), StorageError> {
        let _ = unchanged;
        self.save(bytes)
    }
    /// The last stored bytes, `None` if nothing was ever stored.
    fn load(&self) -> Result<Option<Vec<u8>>, StorageError>;
    /// Writes `state`, not necessarily durably: the write is durable once [`sync`](Self::sync)
    /// of the returned ticket returns. The default encodes through `encoder` (which holds the
    /// node's encoding as of its last write) and [`save_changed`](Self::save_changed)s it, so
    /// its tickets are durable at once; a persister that stores the state in its own form (an
    /// append-only log) ignores the encoder.
    fn write_state(
        &self,
        state: &PersistentState,
        encoder: &mut StateEncoder,
    ) -> Result<WriteTicket, StorageError> {
        encoder.update(state);
        self.save_changed(encoder.bytes(), encoder.unchanged())?;
        Ok(WriteTicket::DURABLE)
    }
    /// Writes `state` durably: [`write_state`](Self::write_state), then
    /// [`sync`](Self::sync). A persister that can do both at once overrides it.
    fn save_state(
        &self,
        state: &PersistentState,
        encoder: &mut StateEncoder,
    ) -> Result<(), StorageError> {
        let ticket = self.write_state(state, encoder)?;
        self.sync(ticket)
    }
    /// Whether writes are cheap appends whose fsyncs are shared among concurrent writers
    /// ([`GroupCommit`]): a leader then writes each proposal as it is made, and its replicators
    /// sync, outside the node's lock, before they send, so concurrent clients' writes share
    /// fsyncs. The default, false: every persist is durable before the lock is released, and a
    /// leader writes its new entries once per round, as the replicator sends them.
    fn shares_fsyncs(&self) -> bool {
        false
    }
    /// Returns once the write `ticket` stands for, and every write before it, is durable.
    /// Fails when the storage failed meanwhile (the node must then stop).
    fn sync(&self, ticket: WriteTicket) -> Result<(), StorageError> {
        let _ = ticket;
        Ok(())
    }
}

/// Why stored state could not be read back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// The storage holds bytes that fail their integrity check.
    #[error("stored state is corrupt: {0}")]
    Corrupt(String),
    /// The machine crashed during a write; nothing after it is durable.
    #[error("crashed during a write")]
    Crashed,
    /// The storage refused a write or a read (a real disk's I/O error, a full disk): the node
    /// must stop rather than go on as if the write had happened.
    #[error("storage failed: {0}")]
    Io(String),
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod decode_fuzz;
mod encoder;
mod group_commit;
mod recording;

pub use group_commit::{GroupCommit, GroupCommitStats, WriteTicket};
pub use recording::RecordingPersister;

use encoder::{
    chain, seal, CHAIN_START, CHECKSUM_LEN, ENTRY_HEADER_LEN, HEADER_LEN, MAGIC, PREFIX_LEN,
    PREFIX_LEN_WITHOUT_SNAPSHOT, VERSION, VERSION_WITHOUT_SNAPSHOT,
};
pub use encoder::{checksum, stored_log_bytes, StateEncoder};

/// A limit on the size of one command, so a corrupt length cannot ask for gigabytes.
pub const MAX_COMMAND_BYTES: usize = 1 << 20;

/// A limit on the size of a snapshot, for the same reason.
pub const MAX_SNAPSHOT_BYTES: usize = 1 << 28;

impl PersistentState {
    /// The encoded form written through a [`Persister`] (a node keeps a [`StateEncoder`] instead,
    /// which encodes only what changed).
    pub fn encode(&self) -> Vec<u8> {
        StateEncoder::new().update(self).to_vec()
    }

    /// A snapshot exactly when the log has a compacted prefix.
    pub(crate) fn assert_snapshot_matches_log(&self) {
        assert!(
            self.log.snapshot_index().0 > 0 || self.snapshot.is_empty(),
            "a snapshot of {} bytes with nothing compacted",
            self.snapshot.len()
        );
    }

    /// Decodes bytes produced by [`encode`](Self::encode) (or by a build that wrote version
    /// 2), checking every length and the checksum.
    pub fn decode(bytes: &[u8]) -> Result<PersistentState, StorageError> {
        let corrupt = |what: &str| StorageError::Corrupt(what.to_string());
        if bytes.len() < PREFIX_LEN_WITHOUT_SNAPSHOT + CHECKSUM_LEN {
            return Err(corrupt(&format!(
                "{} bytes is shorter than any valid state",
                bytes.len()
            )));
        }
        if &bytes[..4] != MAGIC {
            return Err(corrupt("bad magic number"));
        }
        let with_snapshot = match bytes[4] {
            VERSION => true,
            VERSION_WITHOUT_SNAPSHOT => false,
            version => return Err(corrupt(&format!("unknown version {version}"))),
        };
        let prefix_len = if with_snapshot {
            PREFIX_LEN
        } else {
            PREFIX_LEN_WITHOUT_SNAPSHOT
        };
        let body_len = u32::from_le_bytes(bytes[5..9].try_into().expect("4 bytes")) as usize;
        if bytes.len() != HEADER_LEN + body_len + CHECKSUM_LEN || bytes.len() < prefix_len {
            return Err(corrupt(&format!(
                "length {} does not match the recorded body length {body_len}",
                bytes.len()
            )));
        }
        let (framed, sum) = bytes.split_at(HEADER_LEN + body_len);
        let mut reader = Reader {
            bytes: &framed[HEADER_LEN..],
        };
        let current_term = Term(reader.u64()?);
        let voted_for = match (reader.u8()?, reader.u32()?) {
            (0, _) => None,
            (1, node) => Some(NodeId(node)),
            (flag, _) => return Err(corrupt(&format!("bad vote flag {flag}"))),
        };
        let (snapshot_index, snapshot_term, snapshot_len) = if with_snapshot {
            (LogIndex(reader.u64()?), Term(reader.u64()?), reader.u64()?)
        } else {
            (LogIndex(0), Term(0), 0)
        };
        if snapshot_len > MAX_SNAPSHOT_BYTES as u64 {
            return Err(corrupt(&format!(
                "snapshot of {snapshot_len} bytes exceeds the limit"
            )));
        }
        if snapshot_index.0 == 0 && (snapshot_term.0 != 0 || snapshot_len != 0) {
            return Err(corrupt("a snapshot term or bytes with nothing compacted"));
        }
        let count = reader.u64()?;
        let snapshot = reader.take(snapshot_len as usize)?.to_vec();
        let mut entries = Vec::new();
        let mut entries_chain = CHAIN_START;
        for _ in 0..count {
            let encoded = reader.bytes;
            let term = Term(reader.u64()?);
            let len = reader.u32()? as usize;
            if len > MAX_COMMAND_BYTES {
                return Err(corrupt(&format!(
                    "command of {len} bytes exceeds the limit"
                )));
            }
            let command = Command(reader.take(len)?.to_vec());
            entries_chain = chain(entries_chain, &encoded[..ENTRY_HEADER_LEN + len]);
            entries.push(Entry { term, command });
        }
        if !reader.bytes.is_empty() {
            return Err(corrupt("trailing bytes after the log"));
        }
        let snapshot_hash = with_snapshot.then(|| checksum(&snapshot));
        if seal(&framed[..prefix_len], snapshot_hash, entries_chain)
            != u64::from_le_bytes(sum.try_into().expect("8 bytes"))
        {
            return Err(corrupt("checksum mismatch (torn or corrupted write)"));
        }
        Ok(PersistentState {
            current_term,
            voted_for,
            log: RaftLog::after_snapshot(snapshot_index, snapshot_term, entries),
            snapshot,
        })
    }
}

/// A reader of the encoded body just after the header, ignoring the header's length and the
/// checksum: only for the broken variant that trusts a torn write
/// ([`crate::broken::accept_torn_writes`]).
pub(crate) fn body_reader(bytes: &[u8]) -> Reader<'_> {
    Reader {
        bytes: bytes.get(HEADER_LEN..).unwrap_or_default(),
    }
}

pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, len: usize) -> Result<&'a [u8], StorageError> {
        if self.bytes.len() < len {
            return Err(StorageError::Corrupt("body ends early".to_string()));
        }
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(head)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, StorageError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> Result<u32, StorageError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, StorageError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
}

/// A persister in memory, for real-time runs in one process. Saves are atomic.
#[derive(Debug, Default)]
pub struct MemoryPersister {
    stored: Mutex<Option<Vec<u8>>>,
}

impl MemoryPersister {
    /// An empty persister.
    pub fn new() -> MemoryPersister {
        MemoryPersister::default()
    }
}

impl Persister for MemoryPersister {
    fn save(&self, bytes: &[u8]) -> Result<(), StorageError> {
        self.save_changed(bytes, 0..0)
    }
    /// Copies only the bytes outside `unchanged`, into the same buffer each time.
    fn save_changed(&self, bytes: &[u8], unchanged: Range<usize>) -> Result<(), StorageError> {
        let mut stored = self.stored.lock();
        let buffer = stored.get_or_insert_with(Vec::new);
        let keep = if unchanged.end <= buffer.len().min(bytes.len()) {
            debug_assert_eq!(
                buffer[unchanged.clone()],
                bytes[unchanged.clone()],
                "bytes promised unchanged differ from the last save"
            );
            unchanged
        } else {
            0..0
        };
        buffer.truncate(keep.end);
        buffer[..keep.start].copy_from_slice(&bytes[..keep.start]);
        buffer.extend_from_slice(&bytes[keep.end..]);
        debug_assert_eq!(buffer.as_slice(), bytes);
        Ok(())
    }
    fn load(&self) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.stored.lock().clone())
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn sample() -> PersistentState {
        let mut log = RaftLog::default();
        log.append(Entry {
            term: Term(1),
            command: Command::from_text("x"),
        });
        log.append(Entry {
            term: Term(3),
            command: Command(vec![]),
        });
        PersistentState {
            current_term: Term(3),
            voted_for: Some(NodeId(2)),
            log,
            snapshot: Vec::new(),
        }
    }

    #[test]
    fn round_trip() {
        let state = sample();
        assert_eq!(PersistentState::decode(&state.encode()), Ok(state));
        let empty = PersistentState::default();
        assert_eq!(PersistentState::decode(&empty.encode()), Ok(empty));
    }

    #[test]
    fn a_memory_persister_writing_only_changed_bytes_stores_the_whole_state() {
        let persister = MemoryPersister::new();
        let mut encoder = StateEncoder::new();
        let mut state = sample();
        for round in 0..5u64 {
            state.current_term = Term(3 + round);
            state.log.append(Entry {
                term: state.current_term,
                command: Command::from_text(&round.to_string()),
            });
            if round == 3 {
                state.log.truncate_from(crate::LogIndex(2));
            }
            let bytes = encoder.update(&state).to_vec();
            persister.save_changed(&bytes, encoder.unchanged()).unwrap();
            assert_eq!(persister.load(), Ok(Some(bytes)), "round {round}");
        }
        let loaded = persister.load().unwrap().unwrap();
        assert_eq!(PersistentState::decode(&loaded), Ok(state));
    }

    #[test]
    fn every_torn_prefix_and_every_bit_flip_is_rejected() {
        let bytes = sample().encode();
        realtools::fuzz_seed("state_file", "sample-state", &bytes);
        for len in 0..bytes.len() {
            assert!(
                PersistentState::decode(&bytes[..len]).is_err(),
                "prefix of {len} accepted"
            );
        }
        for position in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[position] ^= 0x10;
            assert!(
                PersistentState::decode(&flipped).is_err(),
                "flip at {position} accepted"
            );
        }
    }

    #[test]
    fn a_file_too_short_to_be_a_state_says_so() {
        // A file cut inside its fixed prefix, as a crash in the first write leaves it.
        for len in [
            0,
            HEADER_LEN,
            PREFIX_LEN_WITHOUT_SNAPSHOT,
            PREFIX_LEN_WITHOUT_SNAPSHOT + CHECKSUM_LEN - 1,
        ] {
            let error = PersistentState::decode(&vec![0; len]).unwrap_err();
            assert_eq!(
                error,
                StorageError::Corrupt(format!("{len} bytes is shorter than any valid state"))
            );
        }
    }

    #[test]
    fn a_command_is_read_up_to_the_size_limit_and_refused_beyond() {
        let with_command = |len: usize| {
            let mut state = sample();
            state.log.append(Entry {
                term: Term(3),
                command: Command(vec![7; len]),
            });
            state
        };
        let largest = with_command(MAX_COMMAND_BYTES);
        let mut bytes = largest.encode();
        assert_eq!(PersistentState::decode(&bytes), Ok(largest));
        // The encoder refuses to write a larger command; a damaged file may still claim one: one
        // byte more, in the last command's length, the body's length and the body.
        let length_at = bytes.len() - CHECKSUM_LEN - MAX_COMMAND_BYTES - 4;
        let claimed = u32::try_from(MAX_COMMAND_BYTES + 1).expect("a small limit");
        bytes[length_at..length_at + 4].copy_from_slice(&claimed.to_le_bytes());
        let body_len = u32::from_le_bytes(bytes[5..9].try_into().expect("4 bytes")) + 1;
        bytes[5..9].copy_from_slice(&body_len.to_le_bytes());
        bytes.insert(bytes.len() - CHECKSUM_LEN, 7);
        let error = PersistentState::decode(&bytes);
        assert!(
            matches!(&error, Err(StorageError::Corrupt(what)) if what.contains("exceeds the limit")),
            "{error:?}"
        );
    }

    #[test]
    fn a_memory_persister_promised_bytes_it_never_had_stores_them_all() {
        // An encoder that wrote to another persister before (a node restarted onto a new disk)
        // promises a prefix unchanged that this one never saw: it must store every byte.
        let persister = MemoryPersister::new();
        let bytes = sample().encode();
        persister
            .save_changed(&bytes, 0..PREFIX_LEN)
            .expect("in memory");
        assert_eq!(persister.load(), Ok(Some(bytes)));
    }

    /// The stored form is versioned (`VERSION` in its header): a build must load what an earlier
    /// build of the same version wrote, so the encoding of a known state and the checksum of
    /// known bytes are fixed. A change to either is a new version.
    #[test]
    fn the_stored_form_of_a_known_state_is_fixed() {
        let bytes: Vec<u8> = (0..77u8).collect();
        assert_eq!(checksum(&bytes), 0x9df7_5e2d_c0c6_c1db);
        let hex: String = sample()
            .encode()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        assert_eq!(
            hex,
            "494c5253034600000003000000000000000102000000000000000000000000000000000000000000\
             000000000000020000000000000001000000000000000100000078030000000000000000000000da\
             51c89f8034d2d0"
        );
    }

    /// What a build before snapshots wrote (version 2) still loads.
    #[test]
    fn a_state_stored_before_snapshots_still_loads() {
        let version_2 = "494c5253022e000000030000000000000001020000000200000000000000010000000000\
                         00000100000078030000000000000000000000b2e725c203c9e900";
        let bytes: Vec<u8> = (0..version_2.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&version_2[at..at + 2], 16).expect("hex"))
            .collect();
        assert_eq!(PersistentState::decode(&bytes), Ok(sample()));
        let mut flipped = bytes;
        flipped[20] ^= 1;
        assert!(PersistentState::decode(&flipped).is_err());
    }

    fn compacted() -> PersistentState {
        let mut state = sample();
        state.log.append(Entry {
            term: Term(3),
            command: Command::from_text("after"),
        });
        state.log.compact_to(LogIndex(2));
        state.snapshot = b"the service up to 2".to_vec();
        state
    }

    #[test]
    fn a_compacted_log_and_its_snapshot_come_back_as_stored() {
        let state = compacted();
        let bytes = state.encode();
        let loaded = PersistentState::decode(&bytes).expect("decodes");
        assert_eq!(loaded, state);
        assert_eq!(loaded.log.snapshot_index(), LogIndex(2));
        assert_eq!(loaded.log.snapshot_term(), Term(3));
        assert_eq!(loaded.log.last_index(), LogIndex(3));
        for len in 0..bytes.len() {
            assert!(PersistentState::decode(&bytes[..len]).is_err(), "{len}");
        }
        for position in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[position] ^= 0x04;
            assert!(
                PersistentState::decode(&flipped).is_err(),
                "flip at {position} accepted"
            );
        }
    }

    #[test]
    #[should_panic(expected = "with nothing compacted")]
    fn a_snapshot_without_a_compacted_prefix_is_not_written() {
        let mut state = sample();
        state.snapshot = b"orphan".to_vec();
        state.encode();
    }

    #[test]
    fn a_snapshot_longer_than_the_limit_is_refused_before_it_is_read() {
        let mut bytes = compacted().encode();
        let claimed = (MAX_SNAPSHOT_BYTES as u64 + 1).to_le_bytes();
        bytes[38..46].copy_from_slice(&claimed);
        let error = PersistentState::decode(&bytes);
        assert!(
            matches!(&error, Err(StorageError::Corrupt(what)) if what.contains("exceeds the limit")),
            "{error:?}"
        );
    }
}
