//! Every byte string either decodes or is refused, never a panic, and what decodes is exactly
//! what was stored: seeded random states are encoded, then damaged (bits flipped, cut short,
//! extended, overwritten, or replaced by noise; with and without the header's length repaired so
//! the damage reaches the body's parser), and decoded.

use super::{PersistentState, CHECKSUM_LEN, HEADER_LEN};
use crate::log::RaftLog;
use crate::{Command, Entry, LogIndex, NodeId, Term};
use threadsim::rng::DetRng;

/// Cases per run: about a third of a second in the test profile.
const CASES: u64 = 200_000;

fn random_state(rng: &mut DetRng) -> PersistentState {
    let entries = (0..rng.range_inclusive(0, 8))
        .map(|_| Entry {
            term: Term(rng.range_inclusive(0, 5)),
            command: Command(
                (0..rng.range_inclusive(0, 40))
                    .map(|_| rng.next_u64() as u8)
                    .collect(),
            ),
        })
        .collect();
    let mut state = PersistentState {
        current_term: Term(rng.range_inclusive(0, u64::MAX)),
        voted_for: rng.chance(0.5).then(|| NodeId(rng.next_u64() as u32)),
        log: RaftLog::from_entries(entries),
        snapshot: Vec::new(),
    };
    // Half of the states with entries have a prefix compacted into a snapshot.
    let last = state.log.last_index().0;
    if last > 0 && rng.chance(0.5) {
        state.log.compact_to(LogIndex(rng.range_inclusive(1, last)));
        state.snapshot = (0..rng.range_inclusive(0, 40))
            .map(|_| rng.next_u64() as u8)
            .collect();
    }
    state
}

fn damage(rng: &mut DetRng, bytes: &mut Vec<u8>) {
    match rng.range_inclusive(0, 4) {
        0 => {
            for _ in 0..rng.range_inclusive(1, 3) {
                if !bytes.is_empty() {
                    let at = rng.index(bytes.len());
                    bytes[at] ^= 1 << rng.range_inclusive(0, 7);
                }
            }
        }
        1 => bytes.truncate(rng.index(bytes.len() + 1)),
        2 => bytes.extend((0..rng.range_inclusive(1, 32)).map(|_| rng.next_u64() as u8)),
        3 => {
            if !bytes.is_empty() {
                let start = rng.index(bytes.len());
                let end = (start + rng.range_inclusive(1, 16) as usize).min(bytes.len());
                for byte in &mut bytes[start..end] {
                    *byte = rng.next_u64() as u8;
                }
            }
        }
        _ => {
            let len = rng.range_inclusive(0, 64) as usize;
            *bytes = (0..len).map(|_| rng.next_u64() as u8).collect();
        }
    }
    // Half the time, make the header's body length agree with the damaged length, so the
    // damage is found by the body's parser or the checksum rather than the length check.
    if rng.chance(0.5) && bytes.len() >= HEADER_LEN + CHECKSUM_LEN {
        let body = (bytes.len() - HEADER_LEN - CHECKSUM_LEN) as u32;
        bytes[5..9].copy_from_slice(&body.to_le_bytes());
    }
}

#[test]
fn damaged_bytes_are_refused_and_what_decodes_is_what_was_stored() {
    let mut rng = DetRng::new(0x5eed);
    let mut refused = 0;
    for case in 0..CASES {
        let state = random_state(&mut rng);
        let mut bytes = state.encode();
        assert_eq!(
            PersistentState::decode(&bytes).as_ref(),
            Ok(&state),
            "case {case}"
        );
        let original = bytes.clone();
        damage(&mut rng, &mut bytes);
        match PersistentState::decode(&bytes) {
            Ok(decoded) => assert_eq!(
                decoded.encode(),
                bytes,
                "case {case}: damaged bytes decoded to a state that is not what they hold"
            ),
            Err(_) => refused += 1,
        }
        if bytes != original {
            // A damaged write that still decodes would have to forge the checksum.
            assert!(
                PersistentState::decode(&bytes).is_err(),
                "case {case}: damage accepted"
            );
        }
    }
    assert!(
        refused > CASES / 2,
        "the damage must mostly be real: {refused}"
    );
}
