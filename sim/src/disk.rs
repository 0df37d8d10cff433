//! [`Disk`]: simulated stable storage implementing [`Persister`], with crashes that can tear a
//! write, and power losses that take what was written but not synced.
//!
//! The correct layout keeps two slots and writes them alternately, each framed with a sequence
//! number, a length and a checksum; loading takes the newest slot that checks out. A write torn by
//! a crash (only a prefix of the new bytes reached the disk) damages one slot, so the node comes
//! back with the previous state. If no slot checks out, loading fails loudly.
//!
//! A write through [`Persister::write_state`] is in the page cache until [`Persister::sync`]:
//! loads see it, a process crash keeps it, and [`Disk::lose_unsynced`] (the machine lost power)
//! takes it back to the last synced state. [`Persister::save`] is durable when it returns.
//!
//! A disk [sharing fsyncs](Disk::sharing_fsyncs) is the server's log as the node sees it: a
//! write is an append that returns at once, and a sync takes time on the clock with no lock held,
//! so a leader's replicators send while its own copy is being synced (Raft thesis §10.2.1). A
//! [power cut](Disk::cut_power) fails every sync under way: none of them made anything durable.
//!
//! [`Disk::fail_next_read`] arms a latent read error: the next load fails with EIO (a sector
//! that cannot be read) and the one after it reads the state, as a retried read does.

use node::persist::checksum;
use node::{Persister, StorageError};
use std::time::Duration;
use threadsim::clock::ClockRef;
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
    /// With fsyncs shared: the clock a sync takes its time on, and that time.
    sync_time: Option<(ClockRef, Duration)>,
}

struct DiskState {
    slots: [Vec<u8>; 2],
    sequence: u64,
    tear_next: Option<DetRng>,
    frozen: bool,
    saves: u64,
    torn: u64,
    /// The sequence of the last write made durable.
    synced: u64,
    /// The synced state's slot, kept when a later unsynced write overwrote it (two writes with
    /// no sync between), so a power loss can bring it back.
    stash: Option<(u64, Vec<u8>)>,
    /// Both slots as the last sync of a disk sharing fsyncs found them when it began, which it
    /// made durable: writes made during the sync may have overwritten them since.
    synced_image: Option<[Vec<u8>; 2]>,
    lost: u64,
    /// The next load fails with EIO.
    read_error_armed: bool,
    /// Power cuts so far: a sync that began before one fails.
    power_cuts: u64,
    /// The next sync is cut by a power loss before it ends.
    cut_next_sync: bool,
    read_errors: u64,
}

/// Counters of what the disk did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Completed saves.
    pub saves: u64,
    /// Saves torn by a crash.
    pub torn: u64,
    /// Writes taken back by a power loss (written, never synced).
    pub lost: u64,
    /// Loads that failed with a latent read error.
    pub read_errors: u64,
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

    /// An empty disk with `layout`. Two slots are formatted first: slot 0 holds a frame of
    /// sequence 0 that says "no state", durably, so that a crash tearing the very first save
    /// leaves a slot that checks out (and the node starts empty, as it never saved) instead of
    /// no slot at all, which looks like damage to the only state.
    pub fn with_layout(layout: Layout) -> Disk {
        let mut formatted = Vec::new();
        if layout == Layout::TwoSlots {
            frame_into(&mut formatted, 0, &[]);
        }
        Disk {
            layout,
            state: Mutex::new(DiskState {
                slots: [formatted, Vec::new()],
                sequence: 0,
                tear_next: None,
                frozen: false,
                saves: 0,
                torn: 0,
                synced: 0,
                stash: None,
                synced_image: None,
                lost: 0,
                read_error_armed: false,
                read_errors: 0,
                power_cuts: 0,
                cut_next_sync: false,
            }),
            sync_time: None,
        }
    }

    /// This disk, sharing fsyncs among writers as the server's log does: writes return at once
    /// and each sync takes `sync_time` on `clock` with no lock held.
    pub fn sharing_fsyncs(mut self, clock: ClockRef, sync_time: Duration) -> Disk {
        self.sync_time = Some((clock, sync_time));
        self
    }

    /// The machine's power goes: every sync under way fails, and every write fails until
    /// [`Disk::reboot`] (the writes not yet synced are taken back by
    /// [`Disk::lose_unsynced`]).
    pub fn cut_power(&self) {
        let mut state = self.state.lock();
        state.frozen = true;
        state.power_cuts += 1;
    }

    /// Arms a power cut during the next sync: it takes its time, then the power goes before
    /// it ends, as [`Disk::cut_power`].
    pub fn cut_power_in_next_sync(&self) {
        self.state.lock().cut_next_sync = true;
    }

    /// Takes back an armed power cut that has not happened (a sync under way then ends as any
    /// other); returns whether one was armed.
    pub fn cancel_power_cut_in_sync(&self) -> bool {
        std::mem::take(&mut self.state.lock().cut_next_sync)
    }

    /// Arms a crash in the middle of the next save: only a random prefix of it reaches the disk,
    /// and every later save is lost until [`Disk::reboot`] (the machine is down).
    pub fn tear_next_save(&self, rng: DetRng) {
        self.state.lock().tear_next = Some(rng);
    }

    /// Takes back an armed tear that has not happened (the crash it stood for never came);
    /// returns whether one was armed.
    pub fn cancel_tear(&self) -> bool {
        self.state.lock().tear_next.take().is_some()
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
            lost: state.lost,
            read_errors: state.read_errors,
        }
    }

    /// Arms a latent read error: the next load fails with EIO; the load after it reads the
    /// state.
    pub fn fail_next_read(&self) {
        self.state.lock().read_error_armed = true;
    }

    /// The machine lost power: every write since the last sync is gone, the disk holds the
    /// last synced state (nothing, if none was ever synced). Returns how many writes were lost.
    pub fn lose_unsynced(&self) -> u64 {
        let mut state = self.state.lock();
        let lost = state.sequence - state.synced;
        if lost == 0 {
            return 0;
        }
        let synced = state.synced;
        match self.layout {
            Layout::TwoSlots => {
                for slot in &mut state.slots {
                    if unframe(slot).is_none_or(|(sequence, _)| sequence > synced) {
                        slot.clear();
                    }
                }
            }
            Layout::InPlace => state.slots[0].clear(),
        }
        if let Some(image) = state.synced_image.take() {
            state.slots = image;
        } else if let Some((sequence, bytes)) = state.stash.take() {
            let target = match self.layout {
                Layout::TwoSlots => (sequence % 2) as usize,
                Layout::InPlace => 0,
            };
            state.slots[target] = bytes;
        }
        state.sequence = synced;
        state.lost += lost;
        lost
    }

    /// Writes `bytes` into the page cache, and syncs it if `durability` says so; returns the
    /// write's sequence.
    fn write(&self, bytes: &[u8], durability: Durability) -> Result<u64, StorageError> {
        let mut state = self.state.lock();
        if state.frozen {
            return Err(StorageError::Crashed);
        }
        let sequence = state.sequence + 1;
        let target = match self.layout {
            Layout::TwoSlots => (sequence % 2) as usize,
            Layout::InPlace => 0,
        };
        let overwrites_synced = state.synced > 0
            && state.stash.is_none()
            && state.synced_image.is_none()
            && match self.layout {
                Layout::TwoSlots => {
                    (state.synced % 2) as usize == target && state.sequence > state.synced
                }
                Layout::InPlace => state.sequence == state.synced,
            };
        if overwrites_synced {
            // The slot about to be overwritten holds the only copy of the synced state.
            let kept = state.slots[target].clone();
            state.stash = Some((state.synced, kept));
        }
        let state = &mut *state;
        // What the slot held, for a write torn at sector granularity.
        let before = if state.tear_next.is_some() {
            state.slots[target].clone()
        } else {
            Vec::new()
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
            match self.layout {
                // Some whole sectors of the new frame reached the disk, the others still hold
                // what the slot held before (the other slot holds the previous state).
                Layout::TwoSlots => {
                    let written = std::mem::take(&mut state.slots[target]);
                    state.slots[target] = tear_sectors(&before, &written, &mut rng);
                }
                // Only a prefix reaches the disk: the file was truncated before the write began.
                Layout::InPlace => {
                    let written = rng.index(state.slots[target].len());
                    state.slots[target].truncate(written);
                }
            }
            state.frozen = true;
            state.torn += 1;
            return Err(StorageError::Crashed);
        }
        state.sequence = sequence;
        state.saves += 1;
        if durability == Durability::Synced {
            state.mark_synced(sequence);
        }
        Ok(sequence)
    }
}

/// A sync under way on a disk that shares fsyncs: what it makes durable if it ends.
struct SyncInFlight {
    /// Power cuts before it began.
    began: u64,
    /// A power cut was armed when it began ([`Disk::cut_power_in_next_sync`]): the power goes
    /// before it ends, unless the cut is taken back meanwhile.
    cut: bool,
    /// The last write when it began, and both slots then.
    sequence: u64,
    image: [Vec<u8>; 2],
}

impl Disk {
    /// A sync of every write up to `ticket` begins: it will make durable the slots as they are
    /// now, whatever is written meanwhile.
    fn begin_sync(&self, ticket: node::WriteTicket) -> Result<SyncInFlight, StorageError> {
        let state = self.state.lock();
        if state.frozen {
            return Err(StorageError::Crashed);
        }
        assert!(ticket.0 <= state.sequence, "a sync of a write never made");
        Ok(SyncInFlight {
            began: state.power_cuts,
            cut: state.cut_next_sync,
            sequence: state.sequence,
            image: state.slots.clone(),
        })
    }

    /// The sync ends: durable, unless the power went since it began.
    fn end_sync(&self, sync: SyncInFlight) -> Result<(), StorageError> {
        if sync.cut && self.cancel_power_cut_in_sync() {
            self.cut_power();
        }
        let mut state = self.state.lock();
        if state.frozen || state.power_cuts != sync.began {
            return Err(StorageError::Crashed);
        }
        if sync.sequence > state.synced {
            state.synced = sync.sequence;
            state.stash = None;
            state.synced_image = (state.sequence > sync.sequence).then_some(sync.image);
        }
        Ok(())
    }
}

/// Whether a write is synced as it is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Durability {
    Synced,
    Cached,
}

impl DiskState {
    /// Every write up to `sequence` is durable.
    fn mark_synced(&mut self, sequence: u64) {
        if sequence > self.synced {
            assert!(sequence <= self.sequence, "a sync of a write never made");
            self.synced = sequence;
            self.stash = None;
            self.synced_image = None;
        }
    }
}

/// A disk sector: a torn write reaches the disk in whole sectors.
pub const SECTOR: usize = 512;

/// What a slot holds when a crash tears the write of `written` over `before`: each 512-byte
/// sector of the new bytes reached the disk or not (at least one did not, when there are two
/// or more; one sector alone is cut short), and a sector that did not holds what was there.
fn tear_sectors(before: &[u8], written: &[u8], rng: &mut DetRng) -> Vec<u8> {
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
        self.write(bytes, Durability::Synced).map(drop)
    }

    /// Written and synced under one hold of the disk's lock (as a whole-state save always
    /// was), so a run's thread switches are what they were before the disk had a page cache.
    fn save_state(
        &self,
        state: &node::PersistentState,
        encoder: &mut node::persist::StateEncoder,
    ) -> Result<(), StorageError> {
        encoder.update(state);
        self.write(encoder.bytes(), Durability::Synced).map(drop)
    }

    /// Into the page cache only (what a node that skips its sync leaves).
    fn write_state(
        &self,
        state: &node::PersistentState,
        encoder: &mut node::persist::StateEncoder,
    ) -> Result<node::WriteTicket, StorageError> {
        encoder.update(state);
        self.write(encoder.bytes(), Durability::Cached)
            .map(node::WriteTicket)
    }

    fn shares_fsyncs(&self) -> bool {
        self.sync_time.is_some()
    }

    /// Makes durable what was written up to `ticket`: at once, or, sharing fsyncs, once the sync
    /// time has passed with no power cut meanwhile.
    fn sync(&self, ticket: node::WriteTicket) -> Result<(), StorageError> {
        let Some((clock, sync_time)) = &self.sync_time else {
            let mut state = self.state.lock();
            if state.frozen {
                return Err(StorageError::Crashed);
            }
            state.mark_synced(ticket.0);
            return Ok(());
        };
        let in_flight = self.begin_sync(ticket)?;
        clock.sleep(*sync_time);
        self.end_sync(in_flight)
    }

    fn load(&self) -> Result<Option<Vec<u8>>, StorageError> {
        let mut state = self.state.lock();
        if state.read_error_armed {
            state.read_error_armed = false;
            state.read_errors += 1;
            return Err(StorageError::Io(
                "a latent sector error: the state could not be read (EIO)".to_string(),
            ));
        }
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
            // The format's frame: nothing was ever saved.
            Some((0, _)) => Ok(None),
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
    fn a_torn_first_save_leaves_a_disk_with_no_state_not_a_damaged_one() {
        for seed in 0..100 {
            let disk = Disk::new();
            disk.tear_next_save(DetRng::new(seed));
            assert_eq!(disk.save(&[7; 3000]), Err(StorageError::Crashed));
            disk.reboot();
            assert_eq!(disk.load(), Ok(None), "seed {seed}");
            disk.save(b"after").unwrap();
            assert_eq!(disk.load().unwrap().as_deref(), Some(&b"after"[..]));
        }
    }

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
    fn an_armed_read_error_fails_one_load_and_the_next_reads_the_state() {
        let disk = Disk::new();
        disk.save(b"state").unwrap();
        disk.fail_next_read();
        assert!(matches!(disk.load(), Err(StorageError::Io(_))));
        assert_eq!(disk.load().unwrap().as_deref(), Some(&b"state"[..]));
        assert_eq!(disk.stats().read_errors, 1);
    }

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

    fn write(disk: &Disk, bytes: &[u8]) -> node::WriteTicket {
        node::WriteTicket(disk.write(bytes, Durability::Cached).expect("written"))
    }

    #[test]
    fn a_power_loss_takes_every_write_since_the_last_sync_and_nothing_before() {
        for layout in [Layout::TwoSlots, Layout::InPlace] {
            let disk = Disk::with_layout(layout);
            disk.save(b"synced").unwrap();
            let unsynced = write(&disk, b"written, visible");
            assert_eq!(disk.load(), Ok(Some(b"written, visible".to_vec())));
            write(&disk, b"written again");
            assert_eq!(disk.lose_unsynced(), 2, "{layout:?}");
            assert_eq!(disk.load(), Ok(Some(b"synced".to_vec())), "{layout:?}");
            // A sync covers every write before it.
            write(&disk, b"one");
            let two = write(&disk, b"two");
            disk.sync(two).unwrap();
            assert_eq!(disk.lose_unsynced(), 0);
            assert_eq!(disk.load(), Ok(Some(b"two".to_vec())), "{layout:?}");
            assert!(unsynced < two);
            assert_eq!(disk.stats().lost, 2);
        }
    }

    #[test]
    fn a_sync_makes_durable_the_writes_made_before_it_began_and_none_after() {
        let disk = Disk::new();
        disk.save(b"synced").unwrap();
        let one = write(&disk, b"one");
        let sync = disk.begin_sync(one).unwrap();
        // Written while the sync runs: "three" overwrites the slot that held "one".
        write(&disk, b"two");
        write(&disk, b"three");
        disk.end_sync(sync).unwrap();
        assert_eq!(disk.load(), Ok(Some(b"three".to_vec())), "the cache");
        assert_eq!(disk.lose_unsynced(), 2);
        assert_eq!(
            disk.load(),
            Ok(Some(b"one".to_vec())),
            "what the sync found"
        );
    }

    #[test]
    fn a_power_cut_during_a_sync_fails_it_and_keeps_only_what_was_synced_before() {
        let disk = Disk::new();
        disk.save(b"synced").unwrap();
        let one = write(&disk, b"one");
        let sync = disk.begin_sync(one).unwrap();
        disk.cut_power();
        assert_eq!(disk.end_sync(sync), Err(StorageError::Crashed));
        assert_eq!(disk.lose_unsynced(), 1);
        assert_eq!(disk.load(), Ok(Some(b"synced".to_vec())));

        // Armed: the next sync to begin is the one cut.
        disk.reboot();
        disk.cut_power_in_next_sync();
        let two = write(&disk, b"two");
        let sync = disk.begin_sync(two).unwrap();
        assert_eq!(disk.end_sync(sync), Err(StorageError::Crashed));
        assert!(!disk.cancel_power_cut_in_sync(), "taken by the sync");
        assert!(disk.is_frozen());
        assert_eq!(disk.lose_unsynced(), 1);
        assert_eq!(disk.load(), Ok(Some(b"synced".to_vec())));
    }

    #[test]
    fn a_power_cut_taken_back_while_a_sync_runs_leaves_the_sync_to_end() {
        let disk = Disk::new();
        disk.cut_power_in_next_sync();
        let one = write(&disk, b"one");
        let sync = disk.begin_sync(one).unwrap();
        assert!(disk.cancel_power_cut_in_sync(), "the run ended meanwhile");
        assert_eq!(disk.end_sync(sync), Ok(()));
        assert_eq!(disk.lose_unsynced(), 0);
        assert_eq!(disk.load(), Ok(Some(b"one".to_vec())));
    }

    #[test]
    fn a_disk_never_synced_comes_back_empty() {
        let disk = Disk::new();
        write(&disk, b"a");
        write(&disk, b"b");
        write(&disk, b"c");
        assert_eq!(disk.lose_unsynced(), 3);
        assert_eq!(disk.load(), Ok(None));
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
