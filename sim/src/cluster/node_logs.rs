//! The server's write-ahead log as the simulated nodes' storage (`--storage log`): the engine
//! that ships ([`storage::WalPersister`]), each node's on a [`MemoryFilesystem`] of its own
//! that survives its crashes. A process crash keeps the page cache; a power loss keeps what was
//! synced and, of each file's unsynced tail, a drawn number of whole 512-byte sectors (a torn
//! write); a cut armed for a node's next sync fails that sync, as the two-copy disk's does.
//!
//! A sync takes no simulated time: the log syncs under its own lock and the node's (a roll-over,
//! a follower's save), and the fake clock does not advance while a thread waits for a lock.

use crate::disk::SECTOR;
use node::{MutationSet, NodeError, NodeId, Persister, StorageError};
use runspec::RunFigures;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use storage::filesystem::{Filesystem, MemoryFilesystem};
use storage::{WalError, WalPersister};
use threadsim::sync::Arc;
use threadsim::DetRng;

/// Where each node's log is, on its own disk.
const DATA_DIR: &str = "/data";
/// Segments roll over at 1 KiB (the server's: 64 MiB), so a run of a few hundred rounds rolls
/// over, snapshots and deletes segments many times.
pub const SEGMENT_BYTES: u64 = 1024;

/// Every node's disk (see the module's documentation).
pub struct NodeLogs {
    disks: Vec<MemoryFilesystem>,
    /// Power losses so far, and the unsynced bytes they took (`std` atomics: not a thread
    /// switch).
    power_losses: AtomicU64,
    bytes_lost: AtomicU64,
    /// Where the torn sectors of a power loss are drawn from (a `std` mutex: drawing is not a
    /// thread switch, so a replay switches threads alike).
    tears: std::sync::Mutex<DetRng>,
}

impl NodeLogs {
    /// `nodes` empty disks.
    pub fn new(nodes: usize, tears: DetRng) -> NodeLogs {
        NodeLogs {
            disks: (0..nodes).map(|_| MemoryFilesystem::new()).collect(),
            tears: std::sync::Mutex::new(tears),
            power_losses: AtomicU64::new(0),
            bytes_lost: AtomicU64::new(0),
        }
    }

    /// Adds what the logs went through to `figures`: power losses, the bytes they took, and
    /// roll-overs (each node's highest segment number, less its first).
    pub fn count(&self, figures: &mut RunFigures) {
        figures.log_power_losses += self.power_losses.load(Ordering::Relaxed);
        figures.log_bytes_lost += self.bytes_lost.load(Ordering::Relaxed);
        for disk in &self.disks {
            let highest = disk
                .list(Path::new(DATA_DIR))
                .unwrap_or_default()
                .iter()
                .filter_map(|name| name.strip_prefix("wal-")?.strip_suffix(".log"))
                .filter_map(|hex| u64::from_str_radix(hex, 16).ok())
                .max();
            figures.log_roll_overs += highest.map_or(0, |number| number - 1);
        }
    }

    fn disk(&self, node: NodeId) -> &MemoryFilesystem {
        &self.disks[node.0 as usize]
    }

    /// `node`'s log, recovered from its disk (a torn tail cut, damage refused), broken as
    /// `mutations` say (`roll-over-unsynced`).
    pub fn open(
        &self,
        node: NodeId,
        mutations: &MutationSet,
    ) -> Result<Arc<dyn Persister>, NodeError> {
        // A disk that filled up has room again by the time the node restarts.
        self.disk(node).make_room();
        let filesystem = Arc::new(self.disk(node).clone());
        match WalPersister::open_on(filesystem, Path::new(DATA_DIR), SEGMENT_BYTES) {
            Ok(wal) => {
                wal.break_as(mutations);
                Ok(Arc::new(wal))
            }
            Err(error @ (WalError::Damaged { .. } | WalError::Missing { .. })) => {
                Err(NodeError::Storage(StorageError::Corrupt(error.to_string())))
            }
            Err(error) => Err(NodeError::Storage(StorageError::Io(error.to_string()))),
        }
    }

    /// `node`'s process is gone and its machine stays up: its disk keeps everything written.
    pub fn process_killed(&self, node: NodeId) {
        self.disk(node).process_killed();
    }

    /// `node`'s power goes at this instant: no write or sync under way gets through.
    pub fn cut_power_now(&self, node: NodeId) {
        self.disk(node).cut_power_after(0);
    }

    /// `node`'s machine loses power: returns how many bytes written and not synced are gone.
    pub fn lose_power(&self, node: NodeId) -> usize {
        let mut tears = self
            .tears
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut lost = 0;
        self.disk(node).crash(&mut |_, unsynced| {
            let kept = (tears.index(unsynced / SECTOR + 1) * SECTOR).min(unsynced);
            lost += unsynced - kept;
            kept
        });
        self.power_losses.fetch_add(1, Ordering::Relaxed);
        self.bytes_lost.fetch_add(lost as u64, Ordering::Relaxed);
        lost
    }

    /// Arms a crash in the middle of `node`'s next save: the power goes after 0 to 2 more
    /// changes to its disk (drawn from `tear`), so a write or a sync of the save fails and the
    /// node stops.
    pub fn tear_next_save(&self, node: NodeId, mut tear: DetRng) {
        self.disk(node).cut_power_after(tear.index(3) as u64);
    }

    /// Takes back a tear armed for `node` that no save met; returns whether there was one.
    pub fn cancel_tear(&self, node: NodeId) -> bool {
        self.disk(node).cancel_power_cut()
    }

    /// Fills `node`'s disk: a drawn number of bytes up to a sector more fit (a few saves), then
    /// its writes fail with ENOSPC until it restarts. Returns the room left.
    pub fn fill_disk(&self, node: NodeId) -> u64 {
        let mut draws = self
            .tears
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let room = draws.index(SECTOR) as u64;
        self.disk(node).fill_up_after(room);
        room
    }

    /// Gives `node`'s disk its room back; returns whether it was full or filling.
    pub fn make_room(&self, node: NodeId) -> bool {
        self.disk(node).make_room()
    }

    /// Makes `node`'s next sync fail, dropping what it should have written.
    pub fn fail_next_sync(&self, node: NodeId) {
        self.disk(node).fail_next_sync();
    }

    /// Takes back a failure armed for `node` that no sync met; returns whether there was one.
    pub fn cancel_sync_failure(&self, node: NodeId) -> bool {
        self.disk(node).cancel_sync_failure()
    }

    /// Arms a power cut in `node`'s next sync.
    pub fn cut_power_in_next_sync(&self, node: NodeId) {
        self.disk(node).cut_power_at_next_sync();
    }

    /// Takes back a cut armed for `node` that no sync met; returns whether there was one.
    pub fn cancel_power_cut_in_sync(&self, node: NodeId) -> bool {
        self.disk(node).cancel_power_cut_at_next_sync()
    }
}
