//! [`Disk`]: simulated stable storage implementing [`Persister`], with the storage faults of
//! TigerBeetle's and Jepsen's models: crashes that tear a write, power losses that take what
//! was written but not synced, latent read errors, misdirected writes, and corruption of one
//! copy at rest.
//!
//! The correct layout keeps **two copies** of the state, each framed with a sequence number, a
//! length and a checksum ([`frame`]), and a save writes both, one after the other; loading
//! takes the newest copy that checks out. So one damaged copy is never served and never costs
//! an acknowledged save:
//! - a crash tears at most the copy being written: the other holds the state from before the
//!   save (which was not acknowledged) or after it;
//! - a misdirected write lands on the other copy's place: one copy holds the save, the other
//!   is intact but stale, and the sequence numbers tell them apart;
//! - a bit flipped at rest fails that copy's checksum, and the other copy holds the state.
//!
//! After a load, the persister writes the damaged or stale copy first, so that a tear in the
//! next save can only hit a copy that is already bad. The disk never lets two faults damage
//! both copies (a corruption is only of the copy written first, while the other holds the
//! newest state): with one good copy always left, as in TigerBeetle's fault model, a correct
//! node never loses what it acknowledged, and a node that reads carelessly does.
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

mod flaw;
pub mod frame;

pub use flaw::Flaw;
pub use frame::SECTOR;

use frame::{frame_into, tear_sectors, unframe};
use node::{Persister, StorageError};
use std::time::Duration;
use threadsim::clock::ClockRef;
use threadsim::sync::Mutex;
use threadsim::DetRng;

/// How a disk lays out its writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Two checksummed copies, both written by every save: one damaged copy leaves the other.
    TwoCopies,
    /// One file truncated and rewritten in place, with no framing: a torn write leaves only a
    /// prefix of the new bytes (the storage of the `accept-torn-writes` mutation).
    InPlace,
}

/// One node's simulated disk. It survives the node's crashes.
pub struct Disk {
    layout: Layout,
    flaw: Flaw,
    state: Mutex<DiskState>,
    /// With fsyncs shared: the clock a sync takes its time on, and that time.
    sync_time: Option<(ClockRef, Duration)>,
}

struct DiskState {
    /// The two copies as reads see them (the page cache over the platter). The in-place layout
    /// uses the first only.
    slots: [Vec<u8>; 2],
    /// The number of the last save begun (torn or not), which frames carry: a number is never
    /// used twice while a frame holding it may be on the disk.
    sequence: u64,
    /// The last write made durable.
    synced: u64,
    /// Both slots as the last sync made them durable, kept once a later write (or a sync that
    /// began before it) left them different: what a power loss brings back.
    durable: Option<[Vec<u8>; 2]>,
    /// The copy the next save writes first: the one the last load found damaged or stale.
    first: usize,
    /// The state file's directory entry is durable (a flawed persister never makes it so).
    entry_durable: bool,
    tear_next: Option<DetRng>,
    /// The next save writes one copy (drawn from this) over the other, then the machine stops.
    misdirect_next: Option<DetRng>,
    frozen: bool,
    /// The next load fails with EIO.
    read_error_armed: bool,
    /// Power cuts so far: a sync that began before one fails.
    power_cuts: u64,
    /// The next sync is cut by a power loss before it ends.
    cut_next_sync: bool,
    /// The frame being written, kept to reuse its buffer.
    scratch: Vec<u8>,
    stats: DiskStats,
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
    /// Saves that wrote one copy over the other.
    pub misdirected: u64,
    /// Copies corrupted at rest.
    pub corrupted: u64,
    /// Loads that found one copy damaged or stale and read the other.
    pub damaged_copies_read_past: u64,
}

impl Default for Disk {
    fn default() -> Self {
        Disk::new()
    }
}

impl Disk {
    /// An empty disk with the correct layout.
    pub fn new() -> Disk {
        Disk::with_layout(Layout::TwoCopies)
    }

    /// An empty disk with `layout`. Both copies are formatted first with a frame of sequence 0
    /// that says "no state", durably, so that a crash tearing the very first save leaves a copy
    /// that checks out (and the node starts empty, as it never saved) instead of no copy at
    /// all, which looks like damage to the only state.
    pub fn with_layout(layout: Layout) -> Disk {
        let mut formatted = Vec::new();
        if layout == Layout::TwoCopies {
            frame_into(&mut formatted, 0, &[]);
        }
        let slots = match layout {
            Layout::TwoCopies => [formatted.clone(), formatted],
            Layout::InPlace => [Vec::new(), Vec::new()],
        };
        Disk {
            layout,
            flaw: Flaw::None,
            state: Mutex::new(DiskState {
                slots,
                sequence: 0,
                synced: 0,
                durable: None,
                first: 0,
                entry_durable: true,
                tear_next: None,
                misdirect_next: None,
                frozen: false,
                read_error_armed: false,
                power_cuts: 0,
                cut_next_sync: false,
                scratch: Vec::new(),
                stats: DiskStats::default(),
            }),
            sync_time: None,
        }
    }

    /// This disk, read or synced with `flaw` (a storage variant's persister).
    pub fn with_flaw(mut self, flaw: Flaw) -> Disk {
        assert_eq!(
            self.layout,
            Layout::TwoCopies,
            "a flaw of the two-copy layout"
        );
        self.flaw = flaw;
        // The format's directory entry was never synced either.
        self.state.lock().entry_durable = flaw != Flaw::DirectoryNeverSynced;
        self
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

    /// Arms a crash in the middle of the next save: one copy reaches the disk in part (a
    /// random set of its sectors), and every later save is lost until [`Disk::reboot`] (the
    /// machine is down).
    pub fn tear_next_save(&self, rng: DetRng) {
        self.state.lock().tear_next = Some(rng);
    }

    /// Takes back an armed tear that has not happened (the crash it stood for never came);
    /// returns whether one was armed.
    pub fn cancel_tear(&self) -> bool {
        self.state.lock().tear_next.take().is_some()
    }

    /// Arms a misdirected write: the next save writes one of its copies (drawn from `rng`) over
    /// the other copy's place, so one place holds the save twice and the other keeps what it
    /// held; then the machine goes down, as after a tear (a later save would rewrite both).
    pub fn misdirect_next_save(&self, rng: DetRng) {
        self.state.lock().misdirect_next = Some(rng);
    }

    /// Takes back an armed misdirection that has not happened; returns whether one was armed.
    pub fn cancel_misdirection(&self) -> bool {
        self.state.lock().misdirect_next.take().is_some()
    }

    /// Flips one bit (drawn from `rng`) of the copy the next save writes first, if the other
    /// copy holds the newest state intact: a corruption at rest that leaves one good copy.
    /// Returns the copy flipped, or `None` if there is no such copy (the in-place layout, or a
    /// disk whose other copy is already damaged or stale).
    pub fn corrupt_one_copy(&self, mut rng: DetRng) -> Option<usize> {
        if self.layout != Layout::TwoCopies {
            return None;
        }
        let mut state = self.state.lock();
        let target = state.first;
        let kept = unframe(&state.slots[1 - target]).map(|(sequence, _)| sequence);
        let hit = unframe(&state.slots[target]).map(|(sequence, _)| sequence);
        if kept.is_none() || hit > kept || state.slots[target].is_empty() {
            return None;
        }
        let slot = &mut state.slots[target];
        let byte = rng.index(slot.len());
        slot[byte] ^= 1 << rng.index(8);
        state.stats.corrupted += 1;
        Some(target)
    }

    /// Whether an armed tear (or misdirection) has happened (the node should now be crashed).
    pub fn is_frozen(&self) -> bool {
        self.state.lock().frozen
    }

    /// The machine restarts: saves are accepted again.
    pub fn reboot(&self) {
        let mut state = self.state.lock();
        state.frozen = false;
        state.tear_next = None;
        state.misdirect_next = None;
    }

    /// What the disk has done.
    pub fn stats(&self) -> DiskStats {
        self.state.lock().stats
    }

    /// Arms a latent read error: the next load fails with EIO; the load after it reads the
    /// state.
    pub fn fail_next_read(&self) {
        self.state.lock().read_error_armed = true;
    }

    /// The machine lost power: every write since the last sync is gone, the disk holds the
    /// last synced state (nothing, if none was ever synced, or if the file's directory entry
    /// never was). Returns how many writes were lost.
    pub fn lose_unsynced(&self) -> u64 {
        let mut state = self.state.lock();
        let state = &mut *state;
        if !state.entry_durable {
            // The file itself is gone: a fresh file's writes start over.
            let lost = state.sequence;
            state.slots = [Vec::new(), Vec::new()];
            state.durable = None;
            state.sequence = 0;
            state.synced = 0;
            state.stats.lost += lost;
            return lost;
        }
        let lost = state.sequence - state.synced;
        if let Some(image) = state.durable.take() {
            // Every frame numbered past the last sync is gone.
            state.slots = image;
            state.sequence = state.synced;
        }
        state.stats.lost += lost;
        lost
    }

    /// Writes `bytes` into the page cache, and syncs it if `durability` says so; returns the
    /// write's sequence.
    fn write(&self, bytes: &[u8], durability: Durability) -> Result<u64, StorageError> {
        let mut state = self.state.lock();
        let state = &mut *state;
        if state.frozen {
            return Err(StorageError::Crashed);
        }
        if durability == Durability::Cached && state.durable.is_none() {
            // The slots are durable as they are: keep them for a power loss.
            state.durable = Some(state.slots.clone());
        }
        let sequence = state.sequence + 1;
        let written = match self.layout {
            Layout::TwoCopies => state.write_copies(sequence, bytes),
            Layout::InPlace => state.write_in_place(bytes),
        };
        if written.is_err() {
            // The number is taken: a copy of the torn save may be whole on the disk, and a
            // later save must not reuse its number with other contents.
            state.sequence = sequence;
            state.frozen = true;
            state.stats.torn += 1;
            return Err(StorageError::Crashed);
        }
        state.sequence = sequence;
        state.stats.saves += 1;
        if durability == Durability::Synced {
            state.mark_synced(self.flaw);
        }
        Ok(sequence)
    }
}

/// A crash tore the save.
struct Torn;

impl DiskState {
    /// Writes both copies of save `sequence`, the damaged or stale one first, each to its place
    /// unless a misdirection is armed; a tear armed interrupts one of the two writes. A tear
    /// and a misdirection never come in one save: the first write, misdirected onto the good
    /// copy and torn, would leave no copy whole. The tear goes first and its crash takes back
    /// the misdirection.
    fn write_copies(&mut self, sequence: u64, bytes: &[u8]) -> Result<(), Torn> {
        let order = [self.first, 1 - self.first];
        let misdirected = match self.tear_next {
            Some(_) => None,
            None => self.misdirect_next.take().map(|mut rng| rng.index(2)),
        };
        let mut tear = self.tear_next.take().map(|mut rng| (rng.index(2), rng));
        let mut frame = std::mem::take(&mut self.scratch);
        frame_into(&mut frame, sequence, bytes);
        let written = self.place_copies(order, misdirected, tear.as_mut(), &frame);
        self.scratch = frame;
        written?;
        if misdirected.is_some() {
            self.stats.misdirected += 1;
            self.frozen = true;
        }
        Ok(())
    }

    /// Writes `frame` as copies `order`, the copy `misdirected` over the other's place; a
    /// crash interrupts the write at the position `tear` says.
    fn place_copies(
        &mut self,
        order: [usize; 2],
        misdirected: Option<usize>,
        mut tear: Option<&mut (usize, DetRng)>,
        frame: &[u8],
    ) -> Result<(), Torn> {
        for (position, copy) in order.into_iter().enumerate() {
            let place = if misdirected == Some(copy) {
                1 - copy
            } else {
                copy
            };
            match tear.as_deref_mut() {
                Some((torn, rng)) if *torn == position => {
                    self.slots[place] = tear_sectors(&self.slots[place], frame, rng);
                    return Err(Torn);
                }
                _ => {
                    self.slots[place].clear();
                    self.slots[place].extend_from_slice(frame);
                }
            }
        }
        Ok(())
    }

    /// Truncates the one file and writes `bytes` in place; a tear armed leaves a prefix.
    fn write_in_place(&mut self, bytes: &[u8]) -> Result<(), Torn> {
        let slot = &mut self.slots[0];
        slot.clear();
        slot.extend_from_slice(bytes);
        if let Some(mut rng) = self.tear_next.take() {
            // Only a prefix reaches the disk: the file was truncated before the write began.
            let written = rng.index(slot.len());
            slot.truncate(written);
            return Err(Torn);
        }
        Ok(())
    }

    /// Every write so far is durable (an fsync syncs every page written before it), and so is
    /// the file's directory entry unless `flaw` never syncs it.
    fn mark_synced(&mut self, flaw: Flaw) {
        self.synced = self.sequence;
        self.durable = None;
        if flaw != Flaw::DirectoryNeverSynced {
            self.entry_durable = true;
        }
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
            let written_since = state.sequence > sync.sequence;
            state.mark_synced(self.flaw);
            if written_since {
                // Only what the sync found is durable.
                state.synced = sync.sequence;
                state.durable = Some(sync.image);
            }
        }
        Ok(())
    }

    /// The newest copy that checks out (as the disk's flaw reads it), noting which copy the
    /// next save must write first.
    fn read_copies(&self, state: &mut DiskState) -> Result<Option<Vec<u8>>, StorageError> {
        let framed: [Option<(u64, &[u8])>; 2] =
            [unframe(&state.slots[0]), unframe(&state.slots[1])];
        let newest = match (framed[0], framed[1]) {
            (Some(zero), Some(one)) if one.0 > zero.0 => Some((1, one)),
            (Some(zero), _) => Some((0, zero)),
            (None, one) => one.map(|one| (1, one)),
        };
        let read = flaw::flawed_read(self.flaw, &state.slots).or(newest.map(|(_, read)| read));
        let payload = match read {
            // The format's frame: nothing was ever saved.
            Some((0, _)) => None,
            Some((_, payload)) => Some(payload.to_vec()),
            None if state.slots.iter().all(Vec::is_empty) => None,
            None => {
                return Err(StorageError::Corrupt(
                    "neither copy of the state passes its checksum".to_string(),
                ))
            }
        };
        if let (Some(zero), Some(one)) = (framed[0], framed[1]) {
            assert!(
                zero.0 != one.0 || zero.1 == one.1,
                "two frames numbered {} with different states",
                zero.0
            );
        }
        if let Some((newest, (sequence, _))) = newest {
            let other = framed[1 - newest].map(|(other, _)| other);
            if other != Some(sequence) {
                state.first = 1 - newest;
                state.stats.damaged_copies_read_past += 1;
            }
        }
        Ok(payload)
    }
}

/// Whether a write is synced as it is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Durability {
    Synced,
    Cached,
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

    /// Makes durable what was written up to `ticket` (and after it: an fsync syncs every page
    /// written before it): at once, or, sharing fsyncs, once the sync time has passed with no
    /// power cut meanwhile.
    fn sync(&self, ticket: node::WriteTicket) -> Result<(), StorageError> {
        let Some((clock, sync_time)) = &self.sync_time else {
            let mut state = self.state.lock();
            if state.frozen {
                return Err(StorageError::Crashed);
            }
            assert!(ticket.0 <= state.sequence, "a sync of a write never made");
            state.mark_synced(self.flaw);
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
            state.stats.read_errors += 1;
            return Err(StorageError::Io(
                "a latent sector error: the state could not be read (EIO)".to_string(),
            ));
        }
        match self.layout {
            Layout::InPlace => {
                let slot = &state.slots[0];
                Ok((!slot.is_empty()).then(|| slot.clone()))
            }
            Layout::TwoCopies => self.read_copies(&mut state),
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
