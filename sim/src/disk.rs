//! [`Disk`]: simulated stable storage implementing [`Persister`], with crashes that can tear a
//! write.
//!
//! The correct layout keeps two slots and writes them alternately, each framed with a sequence
//! number, a length and a checksum; loading takes the newest slot that checks out. A write torn by
//! a crash (only a prefix of the new bytes reached the disk) damages one slot, so the node comes
//! back with the previous state. If no slot checks out, loading fails loudly.

use node::persist::checksum;
use node::{Persister, StorageError};
use threadsim::sync::Mutex;
use threadsim::DetRng;

const FRAME_HEADER: usize = 8 + 4;
const FRAME_TRAILER: usize = 8;

/// How a disk lays out its writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Two checksummed slots written alternately: a torn write leaves the previous state.
    TwoSlots,
    /// One file truncated and rewritten in place, with no framing: a torn write leaves only a
    /// prefix of the new bytes (the storage of the `accept-torn-writes` mutation).
    InPlace,
}

/// One node's simulated disk. It survives the node's crashes.
pub struct Disk {
    layout: Layout,
    state: Mutex<DiskState>,
}

struct DiskState {
    slots: [Vec<u8>; 2],
    sequence: u64,
    tear_next: Option<DetRng>,
    frozen: bool,
    saves: u64,
    torn: u64,
}

/// Counters of what the disk did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Completed saves.
    pub saves: u64,
    /// Saves torn by a crash.
    pub torn: u64,
}

impl Default for Disk {
    fn default() -> Self {
        Disk::new()
    }
}

impl Disk {
    /// An empty disk with the correct layout.
    pub fn new() -> Disk {
        Disk::with_layout(Layout::TwoSlots)
    }

    /// An empty disk with `layout`.
    pub fn with_layout(layout: Layout) -> Disk {
        Disk {
            layout,
            state: Mutex::new(DiskState {
                slots: [Vec::new(), Vec::new()],
                sequence: 0,
                tear_next: None,
                frozen: false,
                saves: 0,
                torn: 0,
            }),
        }
    }

    /// Arms a crash in the middle of the next save: only a random prefix of it reaches the disk,
    /// and every later save is lost until [`Disk::reboot`] (the machine is down).
    pub fn tear_next_save(&self, rng: DetRng) {
        self.state.lock().tear_next = Some(rng);
    }

    /// Whether an armed tear has happened (the node should now be crashed).
    pub fn is_frozen(&self) -> bool {
        self.state.lock().frozen
    }

    /// The machine restarts: saves are accepted again.
    pub fn reboot(&self) {
        let mut state = self.state.lock();
        state.frozen = false;
        state.tear_next = None;
    }

    /// What the disk has done.
    pub fn stats(&self) -> DiskStats {
        let state = self.state.lock();
        DiskStats {
            saves: state.saves,
            torn: state.torn,
        }
    }
}

/// Writes `bytes` framed with `sequence`, length and checksum into `slot`, reusing its buffer (a
/// node saves its whole state on every change: a fresh buffer each time would cost an
/// allocation, and for large states a mapping, per save).
fn frame_into(slot: &mut Vec<u8>, sequence: u64, bytes: &[u8]) {
    slot.clear();
    slot.reserve(FRAME_HEADER + bytes.len() + FRAME_TRAILER);
    slot.extend_from_slice(&sequence.to_le_bytes());
    slot.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    slot.extend_from_slice(bytes);
    let sum = checksum(slot);
    slot.extend_from_slice(&sum.to_le_bytes());
}

/// The sequence number and payload of a slot, if it checks out.
fn unframe(slot: &[u8]) -> Option<(u64, &[u8])> {
    if slot.len() < FRAME_HEADER + FRAME_TRAILER {
        return None;
    }
    let sequence = u64::from_le_bytes(slot[..8].try_into().ok()?);
    let len = u32::from_le_bytes(slot[8..12].try_into().ok()?) as usize;
    if slot.len() != FRAME_HEADER + len + FRAME_TRAILER {
        return None;
    }
    let (body, sum) = slot.split_at(FRAME_HEADER + len);
    (checksum(body) == u64::from_le_bytes(sum.try_into().ok()?))
        .then(|| (sequence, &body[FRAME_HEADER..]))
}

impl Persister for Disk {
    fn save(&self, bytes: &[u8]) -> Result<(), StorageError> {
        let mut state = self.state.lock();
        if state.frozen {
            return Err(StorageError::Crashed);
        }
        let sequence = state.sequence + 1;
        let target = match self.layout {
            Layout::TwoSlots => (sequence % 2) as usize,
            Layout::InPlace => 0,
        };
        let slot = &mut state.slots[target];
        match self.layout {
            Layout::TwoSlots => frame_into(slot, sequence, bytes),
            Layout::InPlace => {
                slot.clear();
                slot.extend_from_slice(bytes);
            }
        }
        if let Some(mut rng) = state.tear_next.take() {
            // Only a prefix reaches the disk. With two slots the other still holds the previous
            // state; in place, the file was truncated before the write began.
            let written = rng.index(state.slots[target].len());
            state.slots[target].truncate(written);
            state.frozen = true;
            state.torn += 1;
            return Err(StorageError::Crashed);
        }
        state.sequence = sequence;
        state.saves += 1;
        Ok(())
    }

    fn load(&self) -> Result<Option<Vec<u8>>, StorageError> {
        let state = self.state.lock();
        if self.layout == Layout::InPlace {
            let slot = &state.slots[0];
            return Ok((!slot.is_empty()).then(|| slot.clone()));
        }
        let newest = state
            .slots
            .iter()
            .filter_map(|slot| unframe(slot))
            .max_by_key(|(sequence, _)| *sequence);
        match newest {
            Some((_, payload)) => Ok(Some(payload.to_vec())),
            None if state.slots.iter().all(Vec::is_empty) => Ok(None),
            None => Err(StorageError::Corrupt(
                "no slot of the disk passes its checksum".to_string(),
            )),
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_torn_save_leaves_the_previous_state_loadable() {
        for seed in 0..200 {
            let disk = Disk::new();
            assert_eq!(disk.load(), Ok(None));
            disk.save(b"first").unwrap();
            disk.save(b"second").unwrap();
            disk.tear_next_save(DetRng::new(seed));
            assert_eq!(disk.save(b"third, torn"), Err(StorageError::Crashed));
            assert!(disk.is_frozen());
            assert_eq!(disk.save(b"fourth, lost"), Err(StorageError::Crashed));
            let loaded = disk
                .load()
                .expect("one slot survives")
                .expect("state present");
            assert!(
                loaded == b"second" || loaded == b"third, torn",
                "seed {seed}: {loaded:?}"
            );
            disk.reboot();
            disk.save(b"fifth").unwrap();
            assert_eq!(disk.load(), Ok(Some(b"fifth".to_vec())));
        }
    }

    #[test]
    fn a_torn_first_save_is_either_nothing_or_corrupt_never_garbage() {
        for seed in 0..100 {
            let disk = Disk::new();
            disk.tear_next_save(DetRng::new(seed));
            assert!(disk.save(b"only").is_err());
            match disk.load() {
                Ok(None) | Err(StorageError::Corrupt(_)) => {}
                other => panic!("seed {seed}: torn first save loaded as {other:?}"),
            }
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod in_place_tests {
    use super::*;

    #[test]
    fn an_in_place_disk_keeps_only_a_prefix_of_a_torn_write() {
        let disk = Disk::with_layout(Layout::InPlace);
        disk.save(b"aaaaaaaa").unwrap();
        disk.tear_next_save(DetRng::new(3));
        assert!(disk.save(b"bbbbbbbb").is_err());
        let loaded = disk.load().unwrap().unwrap_or_default();
        assert!(
            loaded.len() < 8 && loaded.iter().all(|&b| b == b'b'),
            "{loaded:?}"
        );
    }
}
