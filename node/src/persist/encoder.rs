//! [`StateEncoder`]: writes the stored form of a [`PersistentState`], keeping it between persists
//! so that each one encodes only the entries appended since the last.
//!
//! The format (version 3), all integers little-endian:
//!
//! ```text
//! header   magic "ILRS" (4) | version (1) | body length (4)
//! body     current term (8) | vote flag (1) | voted-for id (4, 0 without a vote)
//!          | snapshot index (8) | snapshot term (8) | snapshot length (8) | entry count (8)
//!          snapshot bytes (the service's state up to the snapshot index; none without one)
//!          entries after the snapshot: term (8) | command length (4) | command bytes
//! trailer  checksum (8)
//! ```
//!
//! Version 2, written before snapshots, has no snapshot fields; it is still read.
//!
//! The fields before the snapshot have a fixed size, so they are rewritten in place. The
//! checksum covers every byte: a hash of the fixed fields and one of the snapshot (kept between
//! persists: the snapshot changes only with the log's prefix), sealed with a hash chained entry
//! by entry (each entry's hash continues from the previous one's), so appending an entry costs a
//! hash of that entry only, and a torn write or a flipped bit anywhere changes it.

use super::PersistentState;
use std::ops::Range;

pub(super) const MAGIC: &[u8; 4] = b"ILRS";
pub(super) const VERSION: u8 = 3;
/// The version before snapshots, still read.
pub(super) const VERSION_WITHOUT_SNAPSHOT: u8 = 2;
/// Magic, version and body length.
pub(super) const HEADER_LEN: usize = 4 + 1 + 4;
/// The header and the fixed-size body fields before the snapshot.
pub(super) const PREFIX_LEN: usize = HEADER_LEN + 8 + 1 + 4 + 8 + 8 + 8 + 8;
/// [`PREFIX_LEN`] of version 2: no snapshot index, term or length.
pub(super) const PREFIX_LEN_WITHOUT_SNAPSHOT: usize = HEADER_LEN + 8 + 1 + 4 + 8;
/// The bytes of an entry before its command: term and command length.
pub(super) const ENTRY_HEADER_LEN: usize = 8 + 4;
pub(super) const CHECKSUM_LEN: usize = 8;
/// Where the entries' chained hash starts.
pub(super) const CHAIN_START: u64 = 0x9e37_79b9_7f4a_7c15;

const PRIME: u64 = 0x0000_0100_0000_01b3;

fn mix(hash: u64, word: u64) -> u64 {
    let hash = (hash ^ word).wrapping_mul(PRIME);
    hash ^ (hash >> 29)
}

/// Continues `hash` over `bytes`, 8-byte words at a time (FNV-style multiply with an xor-shift so
/// every input bit reaches every output bit).
fn continue_hash(mut hash: u64, bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    for word in words.by_ref() {
        hash = mix(hash, u64::from_le_bytes(word.try_into().expect("8 bytes")));
    }
    for &byte in words.remainder() {
        hash = mix(hash, u64::from(byte));
    }
    hash
}

/// A 64-bit checksum: enough to catch torn writes and bit flips, and fast: four independent
/// lanes over 32-byte blocks, so the multiplies overlap (a simulated disk checksums a node's
/// whole state on every save). A change to any one 8-byte word always changes the result, since
/// every step is a bijection of the lane's state.
pub fn checksum(bytes: &[u8]) -> u64 {
    let seed = 0xcbf2_9ce4_8422_2325 ^ bytes.len() as u64;
    let mut lanes = [seed, seed ^ 1, seed ^ 2, seed ^ 3];
    let mut blocks = bytes.chunks_exact(32);
    for block in blocks.by_ref() {
        for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane = mix(*lane, u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
    }
    let tail = continue_hash(lanes[0], blocks.remainder());
    lanes[1..].iter().fold(tail, |hash, &lane| mix(hash, lane))
}

/// The chained hash after one more entry, whose encoded bytes are `entry`.
pub(super) fn chain(previous: u64, entry: &[u8]) -> u64 {
    continue_hash(mix(previous, entry.len() as u64), entry)
}

/// The stored checksum: the fixed fields' hash, then the snapshot's (version 3; `None` for
/// version 2), sealed with the entries' chained hash.
pub(super) fn seal(prefix: &[u8], snapshot_hash: Option<u64>, entries_chain: u64) -> u64 {
    let fixed = checksum(prefix);
    let with_snapshot = snapshot_hash.map_or(fixed, |hash| mix(fixed, hash));
    mix(with_snapshot, entries_chain)
}

/// The bytes [`StateEncoder`] spends on a state besides its snapshot: the fixed fields, the
/// checksum and each entry (what a service that snapshots when the log grows measures, whatever
/// the persister).
pub fn stored_log_bytes(log: &crate::log::RaftLog) -> usize {
    PREFIX_LEN + CHECKSUM_LEN + ENTRY_HEADER_LEN * log.entries().len() + log.command_bytes()
}

/// The encoded state of one node, kept up to date across persists.
///
/// Between two removals from the log ([`crate::log::RaftLog::removals`]) the log only grows and
/// the snapshot stays (it changes only when the log's prefix is compacted or replaced, which are
/// removals), so an update appends the new entries' bytes and rewrites the fixed fields and the
/// checksum; after a removal it encodes from scratch. Debug builds compare every update with a
/// fresh encoding.
#[derive(Debug, Default)]
pub struct StateEncoder {
    /// The whole stored form (empty before the first update).
    bytes: Vec<u8>,
    /// The chained hash after each encoded entry.
    chains: Vec<u64>,
    /// The log's removal count when `bytes` was encoded.
    removals: u64,
    /// The hash of the snapshot's bytes.
    snapshot_hash: u64,
    /// The bytes the last update left as the one before wrote them.
    unchanged: Range<usize>,
}

impl StateEncoder {
    /// An encoder that has encoded nothing yet.
    pub fn new() -> StateEncoder {
        StateEncoder::default()
    }

    /// Brings the encoding up to `state` and returns it.
    pub fn update(&mut self, state: &PersistentState) -> &[u8] {
        state.assert_snapshot_matches_log();
        let entries = state.log.entries();
        let stale = self.bytes.is_empty() || state.log.removals() != self.removals;
        if stale {
            assert!(
                state.snapshot.len() <= super::MAX_SNAPSHOT_BYTES,
                "a snapshot of {} bytes exceeds the limit of {}: it could not be loaded back",
                state.snapshot.len(),
                super::MAX_SNAPSHOT_BYTES
            );
            self.bytes.clear();
            self.bytes.resize(PREFIX_LEN, 0);
            self.bytes.extend_from_slice(&state.snapshot);
            self.snapshot_hash = checksum(&state.snapshot);
            self.chains.clear();
            self.removals = state.log.removals();
            self.unchanged = 0..0;
        } else {
            assert!(
                entries.len() >= self.chains.len(),
                "the log shrank from {} to {} entries without a removal",
                self.chains.len(),
                entries.len()
            );
            // Drop the old checksum; the snapshot and the entries before it stay.
            self.bytes.truncate(self.bytes.len() - CHECKSUM_LEN);
            self.unchanged = PREFIX_LEN..self.bytes.len();
        }
        for entry in &entries[self.chains.len()..] {
            assert!(
                entry.command.0.len() <= super::MAX_COMMAND_BYTES,
                "a command of {} bytes exceeds the limit of {}: it could not be loaded back",
                entry.command.0.len(),
                super::MAX_COMMAND_BYTES
            );
            let start = self.bytes.len();
            self.bytes.extend_from_slice(&entry.term.0.to_le_bytes());
            self.bytes
                .extend_from_slice(&(entry.command.0.len() as u32).to_le_bytes());
            self.bytes.extend_from_slice(&entry.command.0);
            let previous = self.chains.last().copied().unwrap_or(CHAIN_START);
            self.chains.push(chain(previous, &self.bytes[start..]));
        }
        self.write_prefix(state);
        let sum = seal(
            &self.bytes[..PREFIX_LEN],
            Some(self.snapshot_hash),
            self.chains.last().copied().unwrap_or(CHAIN_START),
        );
        self.bytes.extend_from_slice(&sum.to_le_bytes());
        debug_assert!(
            stale || self.bytes == StateEncoder::new().update(state),
            "the kept encoding differs from a fresh one"
        );
        debug_assert_eq!(
            self.bytes.len() - state.snapshot.len(),
            stored_log_bytes(&state.log)
        );
        &self.bytes
    }

    /// The encoding as of the last [`update`](Self::update).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The range of the last [`update`](Self::update)'s bytes that the update before it had
    /// already produced (the entries both hold); empty after encoding from scratch. A node that
    /// saves every update passes it to [`super::Persister::save_changed`].
    pub fn unchanged(&self) -> Range<usize> {
        self.unchanged.clone()
    }

    /// Rewrites the fixed-size fields in place.
    fn write_prefix(&mut self, state: &PersistentState) {
        let body_len = self.bytes.len() - HEADER_LEN;
        let body_len = u32::try_from(body_len).expect("a state under 4 GiB");
        let (vote_flag, vote) = match state.voted_for {
            Some(node) => (1u8, node.0),
            None => (0, 0),
        };
        let prefix = &mut self.bytes[..PREFIX_LEN];
        prefix[..4].copy_from_slice(MAGIC);
        prefix[4] = VERSION;
        prefix[5..9].copy_from_slice(&body_len.to_le_bytes());
        prefix[9..17].copy_from_slice(&state.current_term.0.to_le_bytes());
        prefix[17] = vote_flag;
        prefix[18..22].copy_from_slice(&vote.to_le_bytes());
        prefix[22..30].copy_from_slice(&state.log.snapshot_index().0.to_le_bytes());
        prefix[30..38].copy_from_slice(&state.log.snapshot_term().0.to_le_bytes());
        prefix[38..46].copy_from_slice(&(state.snapshot.len() as u64).to_le_bytes());
        prefix[46..54].copy_from_slice(&(self.chains.len() as u64).to_le_bytes());
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::{Command, Entry, LogIndex, NodeId, Term};

    fn entry(term: u64, text: &str) -> Entry {
        Entry {
            term: Term(term),
            command: Command::from_text(text),
        }
    }

    #[test]
    fn appends_truncations_and_vote_changes_encode_as_a_fresh_encoder_would() {
        let mut state = PersistentState::default();
        let mut kept = StateEncoder::new();
        let mut previous: Vec<u8> = Vec::new();
        let mut check = |state: &PersistentState| {
            let fresh = StateEncoder::new().update(state).to_vec();
            assert_eq!(kept.update(state), fresh.as_slice());
            assert_eq!(PersistentState::decode(&fresh).as_ref(), Ok(state));
            let unchanged = kept.unchanged();
            assert_eq!(
                fresh.get(unchanged.clone()),
                previous.get(unchanged.clone())
            );
            previous = fresh;
            unchanged.len()
        };
        check(&state);
        state.log.append(entry(1, "a"));
        state.log.append(entry(1, "bb"));
        check(&state);
        state.current_term = Term(2);
        state.voted_for = Some(NodeId(4));
        assert_eq!(check(&state), 2 * ENTRY_HEADER_LEN + 3, "both entries kept");
        state.log.truncate_from(LogIndex(2));
        state.log.append(entry(2, "ccc"));
        assert_eq!(check(&state), 0, "encoded from scratch after a removal");
        state.voted_for = None;
        state.log.merge(LogIndex(2), &[entry(2, "d"), entry(2, "")]);
        check(&state);
    }

    #[test]
    fn every_bit_flip_and_every_truncation_changes_the_checksum() {
        let bytes: Vec<u8> = (0..203u32).map(|i| (i * 37 % 251) as u8).collect();
        let sum = checksum(&bytes);
        for bit in 0..bytes.len() * 8 {
            let mut flipped = bytes.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            assert_ne!(checksum(&flipped), sum, "flip of bit {bit}");
        }
        for len in 0..bytes.len() {
            assert_ne!(checksum(&bytes[..len]), sum, "prefix of {len} bytes");
        }
    }

    #[test]
    fn the_checksum_covers_the_fixed_fields_and_every_entry() {
        let mut state = PersistentState::default();
        state.log.append(entry(1, "x"));
        let base = StateEncoder::new().update(&state).to_vec();
        let mut other_vote = state.clone();
        other_vote.voted_for = Some(NodeId(0));
        let mut other_entry = state.clone();
        other_entry.log.truncate_from(LogIndex(1));
        other_entry.log.append(entry(1, "y"));
        for other in [other_vote, other_entry] {
            let bytes = StateEncoder::new().update(&other).to_vec();
            assert_ne!(
                base[base.len() - CHECKSUM_LEN..],
                bytes[bytes.len() - CHECKSUM_LEN..]
            );
        }
    }

    #[test]
    fn a_compaction_encodes_afresh_and_appends_after_it_keep_the_snapshot() {
        let mut state = PersistentState::default();
        let mut kept = StateEncoder::new();
        for text in ["a", "b", "c"] {
            state.log.append(entry(1, text));
        }
        kept.update(&state);
        state.log.compact_to(LogIndex(2));
        state.snapshot = b"ab".to_vec();
        assert_eq!(kept.update(&state), StateEncoder::new().update(&state));
        assert!(kept.unchanged().is_empty(), "a compaction is a removal");
        state.log.append(entry(2, "d"));
        let bytes = kept.update(&state).to_vec();
        assert_eq!(bytes, StateEncoder::new().update(&state));
        assert_eq!(
            kept.unchanged(),
            PREFIX_LEN..PREFIX_LEN + 2 + ENTRY_HEADER_LEN + 1,
            "the snapshot and the entry before stay"
        );
        assert_eq!(PersistentState::decode(&bytes), Ok(state));
    }
}
