//! How a copy of the state sits on the simulated disk: a frame of sequence number, length,
//! payload and checksum; and what a crash leaves of a frame it interrupts.

use node::persist::checksum;
use threadsim::DetRng;

/// Sequence number and length, before the payload.
pub(super) const FRAME_HEADER: usize = 8 + 4;
/// The checksum, after it.
const FRAME_TRAILER: usize = 8;

/// A disk sector: a torn write reaches the disk in whole sectors.
pub const SECTOR: usize = 512;

/// Writes `bytes` framed with `sequence`, length and checksum into `slot`, reusing its buffer (a
/// node saves its whole state on every change: a fresh buffer each time would cost an
/// allocation, and for large states a mapping, per save).
pub(super) fn frame_into(slot: &mut Vec<u8>, sequence: u64, bytes: &[u8]) {
    slot.clear();
    slot.reserve(FRAME_HEADER + bytes.len() + FRAME_TRAILER);
    slot.extend_from_slice(&sequence.to_le_bytes());
    slot.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    slot.extend_from_slice(bytes);
    let sum = checksum(slot);
    slot.extend_from_slice(&sum.to_le_bytes());
}

/// The sequence number and payload of a slot, if it checks out.
pub(super) fn unframe(slot: &[u8]) -> Option<(u64, &[u8])> {
    let (sequence, payload) = unframe_unchecked(slot)?;
    let body = &slot[..FRAME_HEADER + payload.len()];
    let sum = &slot[body.len()..];
    (checksum(body) == u64::from_le_bytes(sum.try_into().ok()?)).then_some((sequence, payload))
}

/// The sequence number and payload a slot's header claims, if its length fits the slot,
/// without the checksum (what the `trust-record-without-checksum` variant reads).
pub(super) fn unframe_unchecked(slot: &[u8]) -> Option<(u64, &[u8])> {
    if slot.len() < FRAME_HEADER + FRAME_TRAILER {
        return None;
    }
    let sequence = u64::from_le_bytes(slot[..8].try_into().ok()?);
    let len = u32::from_le_bytes(slot[8..12].try_into().ok()?) as usize;
    if slot.len() != FRAME_HEADER + len + FRAME_TRAILER {
        return None;
    }
    Some((sequence, &slot[FRAME_HEADER..FRAME_HEADER + len]))
}

/// What a slot holds when a crash tears the write of `written` over `before`: each 512-byte
/// sector of the new bytes reached the disk or not (at least one did not, when there are two
/// or more; one sector alone is cut short), and a sector that did not holds what was there.
pub(super) fn tear_sectors(before: &[u8], written: &[u8], rng: &mut DetRng) -> Vec<u8> {
    let sectors = written.len().div_ceil(SECTOR);
    if sectors <= 1 {
        return written[..rng.index(written.len().max(1))].to_vec();
    }
    let lost = rng.index(sectors);
    let mut torn = written.to_vec();
    for sector in 0..sectors {
        if sector == lost || rng.chance(0.5) {
            let start = sector * SECTOR;
            let end = (start + SECTOR).min(written.len());
            for (at, byte) in torn[start..end].iter_mut().enumerate() {
                *byte = before.get(start + at).copied().unwrap_or(0);
            }
        }
    }
    torn
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_write_torn_at_sector_granularity_keeps_whole_sectors_of_old_and_new() {
        let before = vec![1u8; 4 * SECTOR];
        let written = vec![2u8; 4 * SECTOR + 10];
        let mut seen_mixed = false;
        for seed in 0..100 {
            let torn = tear_sectors(&before, &written, &mut DetRng::new(seed));
            assert_eq!(torn.len(), written.len());
            assert_ne!(torn, written, "at least one sector did not reach the disk");
            for sector in torn.chunks(SECTOR) {
                let first = sector[0];
                assert!(sector.iter().all(|&byte| byte == first), "a whole sector");
            }
            seen_mixed |= torn.contains(&2) && torn.contains(&1);
        }
        assert!(seen_mixed);
    }

    #[test]
    fn a_frame_checks_out_until_any_bit_of_it_flips() {
        let mut slot = Vec::new();
        frame_into(&mut slot, 7, b"payload");
        assert_eq!(unframe(&slot), Some((7, &b"payload"[..])));
        for bit in 0..slot.len() * 8 {
            let mut flipped = slot.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(unframe(&flipped), None, "bit {bit}");
        }
        // Past the header, the unchecked reading takes the flip for the state.
        let mut flipped = slot.clone();
        flipped[FRAME_HEADER] ^= 1;
        assert_eq!(unframe_unchecked(&flipped), Some((7, &b"qayload"[..])));
    }
}
