//! The appending side of a [`super::WalPersister`]: what the log holds (so a save writes only
//! the difference), the current segment, and the files waiting for an fsync or a deletion.

use super::files::{create_segment, encode_snapshot, write_durably};
use super::flaws::Flaws;
use super::names::{segment_name, snapshot_name};
use super::record::{frame, Item, SnapshotRef, MAX_BODY_BYTES};
use super::recovery::{checkpoint_snapshot, replay_start, Recovered, Replay, SegmentInfo};
use super::WalError;
use crate::filesystem::{AppendFile, Filesystem};
use node::persist::checksum;
use node::{Entry, LogIndex, NodeId, PersistentState, Term, WriteTicket};
use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use threadsim::sync::Arc;

/// A segment at least this long is closed right after a save that took a snapshot.
const ROLL_AT_SNAPSHOT_BYTES: u64 = 1 << 20;

/// What the log holds, as the node last wrote it.
#[derive(Debug, Default)]
struct Mirror {
    term: Term,
    voted_for: Option<NodeId>,
    snapshot: Option<SnapshotRef>,
    /// A hash of the snapshot's bytes.
    snapshot_hash: u64,
    /// A hash of each entry after the snapshot.
    entries: Vec<u64>,
    /// The node's log's removal count at the last write: while it stays, the log only grew.
    /// `None`: unknown, compare every entry.
    removals: Option<u64>,
}

impl Mirror {
    /// What a recovered log holds.
    fn of(replay: &Replay, state: &PersistentState) -> Mirror {
        Mirror {
            term: replay.term,
            voted_for: replay.voted_for,
            snapshot: replay.snapshot,
            snapshot_hash: checksum(&state.snapshot),
            entries: replay.entries.iter().map(entry_hash).collect(),
            // A node starts from what `load` returns, a log with no removals yet.
            removals: Some(0),
        }
    }

    fn base(&self) -> LogIndex {
        self.snapshot.map_or(LogIndex(0), |snapshot| snapshot.index)
    }
    fn last_index(&self) -> LogIndex {
        LogIndex(self.base().0 + self.entries.len() as u64)
    }
    fn hash_at(&self, index: LogIndex) -> Option<u64> {
        let offset = index.0.checked_sub(self.base().0 + 1)?;
        self.entries.get(offset as usize).copied()
    }
}

fn entry_hash(entry: &Entry) -> u64 {
    checksum(&entry.command.0) ^ entry.term.0.rotate_left(17)
}

/// What [`Writer::append`] wrote.
pub enum Appended {
    /// This many records (each is a write for the group commit).
    Records(usize),
    /// The state was what the log already held.
    Nothing,
}

/// The appending side (see the module's documentation).
pub struct Writer {
    filesystem: Arc<dyn Filesystem>,
    dir: PathBuf,
    segment_bytes: u64,
    segment: Arc<dyn AppendFile>,
    segment_len: u64,
    /// The live segments, oldest first; the last is `segment`.
    segments: VecDeque<SegmentInfo>,
    mirror: Mirror,
    next_snapshot_file: u64,
    /// Files to delete once the write that made them unneeded is durable: those of the write
    /// under way, then with its ticket.
    deletions_pending: Vec<PathBuf>,
    deletions: Vec<(WriteTicket, PathBuf)>,
    pub bytes_appended: u64,
    pub segments_created: u64,
    pub segments_deleted: u64,
    /// Broken (`WalPersister::open_broken`): records not yet written to the file.
    buffered: Option<Vec<u8>>,
    /// The steps of durability left out (none but in a broken log,
    /// [`super::WalPersister::break_as`]).
    pub flaws: Flaws,
}

/// How much the broken buffered log gathers before it writes.
const BROKEN_BUFFER_BYTES: usize = 64 * 1024;

fn io_error(file: &Path, source: io::Error) -> WalError {
    WalError::Io {
        file: file.to_path_buf(),
        source,
    }
}

/// Cuts a recovered log's torn tail and deletes the files no record needs, durably.
fn clean_up(
    filesystem: &dyn Filesystem,
    dir: &Path,
    recovered: &Recovered,
) -> Result<(), WalError> {
    if let Some((file, offset, why)) = &recovered.cut {
        tracing::warn!(
            file = %file.display(),
            offset,
            why = %why,
            "cutting the torn tail of the log"
        );
        filesystem
            .truncate_synced(file, *offset)
            .map_err(|source| io_error(file, source))?;
    }
    for leftover in &recovered.leftovers {
        filesystem
            .remove(leftover)
            .map_err(|source| io_error(leftover, source))?;
    }
    filesystem
        .sync_directory(dir)
        .map_err(|source| io_error(dir, source))
}

/// Where a resumed log appends.
struct AppendPoint {
    file: Box<dyn AppendFile>,
    /// The segment's length.
    len: u64,
    /// The number of the segment if it is new, and its checkpoint is still to be written.
    fresh: Option<u64>,
}

/// The segment a resumed log appends to and its length: its last one, or a new one (whose
/// number comes last) if there is none or the last one's header never became durable.
fn open_last_segment(
    filesystem: &dyn Filesystem,
    dir: &Path,
    segments: &mut VecDeque<SegmentInfo>,
) -> Result<AppendPoint, WalError> {
    if let Some(last) = segments.back().filter(|last| last.good_len > 0) {
        let path = dir.join(segment_name(last.number));
        let file = filesystem
            .open_append(&path)
            .map_err(|source| io_error(&path, source))?;
        return Ok(AppendPoint {
            file,
            len: last.good_len,
            fresh: None,
        });
    }
    let number = segments.back().map_or(1, |last| last.number);
    let path = dir.join(segment_name(number));
    if segments.pop_back().is_some() {
        filesystem
            .remove(&path)
            .map_err(|source| io_error(&path, source))?;
    }
    let file =
        create_segment(filesystem, dir, number, true).map_err(|source| io_error(&path, source))?;
    Ok(AppendPoint {
        file,
        len: 0,
        fresh: Some(number),
    })
}

impl Writer {
    /// Takes up a recovered log: cuts its torn tail, deletes what no record needs, and appends
    /// to its last segment (or to a new first one).
    pub fn resume(
        filesystem: Arc<dyn Filesystem>,
        dir: &Path,
        recovered: Recovered,
        segment_bytes: u64,
    ) -> Result<Writer, WalError> {
        // Read the snapshot now: a damaged one refuses to open.
        let state = recovered.state(&*filesystem, dir)?;
        clean_up(&*filesystem, dir, &recovered)?;
        let mut segments: VecDeque<SegmentInfo> = recovered.segments.iter().copied().collect();
        let append = open_last_segment(&*filesystem, dir, &mut segments)?;
        let mut writer = Writer {
            filesystem,
            dir: dir.to_path_buf(),
            segment_bytes,
            segment: Arc::from(append.file),
            segment_len: append.len,
            segments,
            mirror: Mirror::of(&recovered.replay, &state),
            next_snapshot_file: recovered.highest_snapshot_file + 1,
            deletions_pending: Vec::new(),
            deletions: Vec::new(),
            bytes_appended: 0,
            segments_created: 0,
            segments_deleted: 0,
            buffered: None,
            flaws: Flaws::default(),
        };
        if let Some(fresh) = append.fresh {
            let path = dir.join(segment_name(fresh));
            writer
                .start_segment(fresh, &state)
                .map_err(|source| io_error(&path, source))?;
            // Its header and checkpoint are durable before anything is written after them.
            writer
                .segment
                .sync_data()
                .map_err(|source| io_error(&path, source))?;
        }
        assert!(
            !writer.segments.is_empty(),
            "a resumed log has a current segment"
        );
        Ok(writer)
    }

    /// The next write compares every entry with what the log holds (the state comes from
    /// somewhere other than the node's own log).
    pub fn forget_what_the_node_saw(&mut self) {
        self.mirror.removals = None;
    }

    /// Appends what `state` changed since the last write, as records (one unless its entries
    /// are too many bytes for one).
    pub fn append(&mut self, state: &PersistentState) -> io::Result<Appended> {
        let items = self.changes(state)?;
        if items.is_empty() {
            return Ok(Appended::Nothing);
        }
        let mut records = 0;
        let mut batch = Vec::new();
        let mut batch_len = 0;
        for item in items {
            if batch_len + item.encoded_len() > MAX_BODY_BYTES && !batch.is_empty() {
                self.write_record(&std::mem::take(&mut batch))?;
                batch_len = 0;
                records += 1;
            }
            batch_len += item.encoded_len();
            batch.push(item);
        }
        let compacted = batch.iter().any(|item| matches!(item, Item::Snapshot(_)));
        self.write_record(&batch)?;
        records += 1;
        // Right after a snapshot the entries past it are few, so the next segment's checkpoint
        // restates them all and every segment before it can go: a restart then reads little.
        let full = self.segment_len >= self.segment_bytes;
        let worth_rolling_at_snapshot =
            compacted && self.segment_len >= ROLL_AT_SNAPSHOT_BYTES.min(self.segment_bytes);
        if full || worth_rolling_at_snapshot {
            self.roll_over(state)?;
            records += 1;
        }
        Ok(Appended::Records(records))
    }

    /// The items that bring the log from the mirror to `state`, and the mirror brought along.
    /// A new snapshot is written to its file, durably, first.
    fn changes(&mut self, state: &PersistentState) -> io::Result<Vec<Item>> {
        let log = &state.log;
        let mut items = Vec::new();
        let log_rewritten = self.mirror.removals != Some(log.removals());
        let snapshot_index = log.snapshot_index();
        let snapshot_changed = snapshot_index != self.mirror.base()
            || (log_rewritten
                && snapshot_index > LogIndex(0)
                && checksum(&state.snapshot) != self.mirror.snapshot_hash);
        if snapshot_changed {
            items.push(Item::Snapshot(self.write_snapshot(state)?));
        }
        let first_new = self.first_new_entry(state, log_rewritten || snapshot_changed);
        if self.mirror.last_index() >= first_new {
            items.push(Item::Truncate { from: first_new });
            let keep = (first_new.0 - self.mirror.base().0 - 1) as usize;
            self.mirror.entries.truncate(keep);
        }
        let mut index = first_new;
        while index <= log.last_index() {
            let entry = log.entry(index).expect("within the log");
            self.mirror.entries.push(entry_hash(entry));
            items.push(Item::Entry {
                index,
                term: entry.term,
                command: entry.command.0.clone(),
            });
            index = index.next();
        }
        if (state.current_term, state.voted_for) != (self.mirror.term, self.mirror.voted_for) {
            self.mirror.term = state.current_term;
            self.mirror.voted_for = state.voted_for;
            items.push(Item::HardState {
                term: state.current_term,
                voted_for: state.voted_for,
            });
        }
        self.mirror.removals = Some(log.removals());
        assert_eq!(
            self.mirror.last_index(),
            log.last_index(),
            "the mirror lost track"
        );
        assert_eq!(self.mirror.base(), snapshot_index, "the mirror lost track");
        Ok(items)
    }

    /// Writes `state`'s snapshot to a file of its own, durably, and brings the mirror to it:
    /// the entries it covers dropped, the old snapshot's file to be deleted.
    fn write_snapshot(&mut self, state: &PersistentState) -> io::Result<SnapshotRef> {
        let log = &state.log;
        let snapshot_index = log.snapshot_index();
        assert!(
            snapshot_index >= self.mirror.base(),
            "the snapshot went back from {} to {snapshot_index}",
            self.mirror.base()
        );
        let number = self.next_snapshot_file;
        self.next_snapshot_file += 1;
        let contents = encode_snapshot(snapshot_index, log.snapshot_term(), &state.snapshot);
        let path = self.dir.join(snapshot_name(number));
        write_durably(
            &*self.filesystem,
            &self.dir,
            &path,
            &contents,
            !self.flaws.snapshot_unsynced,
        )?;
        let crc = u32::from_le_bytes(contents[contents.len() - 4..].try_into().expect("4"));
        let snapshot = SnapshotRef {
            file: number,
            index: snapshot_index,
            term: log.snapshot_term(),
            len: state.snapshot.len() as u64,
            crc,
        };
        if let Some(old) = self.mirror.snapshot {
            assert!(old.file < number, "snapshot files are numbered upwards");
            self.deletions_pending
                .push(self.dir.join(snapshot_name(old.file)));
        }
        let compacted =
            ((snapshot_index.0 - self.mirror.base().0) as usize).min(self.mirror.entries.len());
        self.mirror.entries.drain(..compacted);
        self.mirror.snapshot = Some(snapshot);
        self.mirror.snapshot_hash = checksum(&state.snapshot);
        Ok(snapshot)
    }

    /// The first of `state`'s entries the log does not hold: after the last the mirror holds
    /// if the node's log only grew, else after the last that matches (`compare`).
    fn first_new_entry(&self, state: &PersistentState, compare: bool) -> LogIndex {
        let log = &state.log;
        if !compare {
            assert!(
                log.last_index() >= self.mirror.last_index(),
                "the log shrank from {} to {} without a removal",
                self.mirror.last_index(),
                log.last_index()
            );
            return self.mirror.last_index().next();
        }
        let mut index = log.snapshot_index().next();
        while index <= log.last_index()
            && self.mirror.hash_at(index)
                == Some(entry_hash(log.entry(index).expect("within the log")))
        {
            index = index.next();
        }
        index
    }

    /// Makes later records wait in a buffer (the broken log of `WalPersister::open_broken`).
    #[cfg(feature = "mutations")]
    pub fn buffer_appends(&mut self) {
        self.buffered = Some(Vec::new());
    }

    fn write_record(&mut self, items: &[Item]) -> io::Result<()> {
        let record = frame(items);
        match &mut self.buffered {
            Some(buffer) => {
                buffer.extend_from_slice(&record);
                if buffer.len() >= BROKEN_BUFFER_BYTES {
                    self.segment.append(buffer)?;
                    buffer.clear();
                }
            }
            None => self.segment.append(&record)?,
        }
        self.segment_len += record.len() as u64;
        self.bytes_appended += record.len() as u64;
        let current = self.segments.back_mut().expect("a current segment");
        for item in items {
            if let Item::Entry { index, .. } = item {
                current.max_entry = current.max_entry.max(*index);
            }
        }
        Ok(())
    }

    /// Closes the current segment (sealed with the next one's number, and synced) and starts
    /// the next with a checkpoint of the term, the vote and the snapshot; the segments the new
    /// checkpoint's snapshot covers are deleted once it is durable.
    fn roll_over(&mut self, state: &PersistentState) -> io::Result<()> {
        let closed = self.segments.back().expect("a current segment").number;
        let number = closed + 1;
        if let Some(buffer) = &mut self.buffered {
            self.segment.append(buffer)?;
            buffer.clear();
        }
        let file = create_segment(
            &*self.filesystem,
            &self.dir,
            number,
            !self.flaws.segment_name_unsynced,
        )?;
        // The closed segment says where the log goes on: the new one exists durably now, so a
        // recovery that finds this seal and not the segment knows a file was lost.
        self.segment
            .append(&frame(&[Item::ContinuedIn { segment: number }]))?;
        // The closed segment is durable, seal and all, before anything is written to the next:
        // so a closed segment with a torn tail means the power went during a roll-over, when
        // the next held no record and nothing in either was acknowledged (what recovery
        // relies on: `recovery::recover`). Once per segment, 64 MiB by default.
        if !self.flaws.closed_segment_unsynced {
            self.segment.sync_data()?;
        }
        self.segment = Arc::from(file);
        self.start_segment(number, state)?;
        let live: Vec<_> = self
            .segments
            .iter()
            .map(|segment| (segment.checkpoint, segment.max_entry))
            .collect();
        for _ in 0..replay_start(&live) {
            let gone = self
                .segments
                .pop_front()
                .expect("a segment before the start");
            self.deletions_pending
                .push(self.dir.join(segment_name(gone.number)));
        }
        Ok(())
    }

    /// Takes `number`, just created with its header, as the current segment and writes its
    /// checkpoint: term, vote, snapshot, and every entry after the snapshot unless they take
    /// more than a quarter of a segment (with snapshots on they take less than the snapshot
    /// threshold): then every segment before this one can go.
    fn start_segment(&mut self, number: u64, state: &PersistentState) -> io::Result<()> {
        assert_eq!(
            (self.mirror.last_index(), self.mirror.term),
            (state.log.last_index(), state.current_term),
            "a checkpoint of a state the log does not hold"
        );
        self.segments_created += 1;
        self.segment_len = super::files::SEGMENT_HEADER_LEN as u64;
        let entries = state.log.entries();
        let entry_bytes: usize = entries.iter().map(|entry| 21 + entry.command.0.len()).sum();
        let complete = entry_bytes as u64 <= self.segment_bytes / 4;
        let mut checkpoint = vec![
            Item::Checkpoint { complete },
            Item::HardState {
                term: self.mirror.term,
                voted_for: self.mirror.voted_for,
            },
        ];
        if let Some(snapshot) = self.mirror.snapshot {
            checkpoint.push(Item::Snapshot(snapshot));
        }
        if complete {
            let mut index = state.log.snapshot_index();
            for entry in entries {
                index = index.next();
                checkpoint.push(Item::Entry {
                    index,
                    term: entry.term,
                    command: entry.command.0.clone(),
                });
            }
        }
        self.segments.push_back(SegmentInfo {
            number,
            max_entry: LogIndex(0),
            checkpoint: checkpoint_snapshot(&checkpoint),
            good_len: 0,
        });
        self.write_record(&checkpoint)
    }

    /// The ticket of the last record of the write under way: its pending deletions wait for it.
    pub fn note_ticket(&mut self, ticket: WriteTicket) {
        for path in self.deletions_pending.drain(..) {
            self.deletions.push((ticket, path));
        }
    }

    /// The files an fsync must sync now, named.
    pub fn files_to_sync(&mut self) -> Vec<(PathBuf, Arc<dyn AppendFile>)> {
        let current = self.segments.back().expect("a current segment").number;
        vec![(self.dir.join(segment_name(current)), self.segment.clone())]
    }

    /// The files whose deletion waited for a write now durable.
    pub fn deletions_due(&mut self, durable: WriteTicket) -> Vec<PathBuf> {
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.deletions)
            .into_iter()
            .partition(|(ticket, _)| *ticket <= durable);
        self.deletions = later;
        due.into_iter().map(|(_, path)| path).collect()
    }
}
