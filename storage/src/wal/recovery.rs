//! Reading a write-ahead log back: the segments replayed in order, a torn tail of the last one
//! cut, damage anywhere else refused with the file and the offset.

use super::files::{check_segment_header, read_snapshot, SEGMENT_HEADER_LEN};
use super::names::{parse_name, Named};
use super::record::{decode_items, unframe, Framed, Item, SnapshotRef};
use super::{Damage, ReplayError, WalError};
use crate::filesystem::Filesystem;
use node::log::RaftLog;
use node::{Command, Entry, LogIndex, NodeId, PersistentState, Term};
use std::path::{Path, PathBuf};

/// What a segment's first record, a checkpoint, restates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Every entry after the snapshot is restated.
    pub complete: bool,
    /// The snapshot's index (0: none).
    pub snapshot: LogIndex,
}

/// What recovery learned of one segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The number in its name.
    pub number: u64,
    /// The highest entry index it holds (0: none).
    pub max_entry: LogIndex,
    /// Its checkpoint, if its first record is one (see [`replay_start`]).
    pub checkpoint: Option<Checkpoint>,
    /// Its length up to the end of its last good record.
    pub good_len: u64,
}

/// The state a log's records leave, as they are replayed.
#[derive(Debug, Default)]
pub struct Replay {
    pub term: Term,
    pub voted_for: Option<NodeId>,
    pub snapshot: Option<SnapshotRef>,
    /// The entries after the snapshot's index.
    pub entries: Vec<Entry>,
}

impl Replay {
    /// Nothing was ever saved (or only the state a fresh node starts with).
    pub fn is_empty(&self) -> bool {
        self.term == Term(0)
            && self.voted_for.is_none()
            && self.snapshot.is_none()
            && self.entries.is_empty()
    }

    /// The snapshot's index (0 without one).
    pub fn base(&self) -> LogIndex {
        self.snapshot.map_or(LogIndex(0), |snapshot| snapshot.index)
    }

    /// The last index the replayed log holds.
    pub fn last_index(&self) -> LogIndex {
        LogIndex(self.base().0 + self.entries.len() as u64)
    }

    /// Applies one record's items. A complete checkpoint replaces the log with the entries it
    /// restates.
    pub fn apply_record(&mut self, items: Vec<Item>) -> Result<(), ReplayError> {
        let mut items = items.into_iter().peekable();
        if let Some(Item::Checkpoint { complete }) = items.peek() {
            let had_snapshot = self.snapshot.is_some();
            if *complete {
                self.entries.clear();
            }
            items.next();
            let restated: Vec<Item> = items.collect();
            let restates_snapshot = restated
                .iter()
                .any(|item| matches!(item, Item::Snapshot(_)));
            if had_snapshot && !restates_snapshot {
                return Err(ReplayError::CheckpointWithoutSnapshot);
            }
            for item in restated {
                self.apply(item)?;
            }
            return Ok(());
        }
        for item in items {
            self.apply(item)?;
        }
        Ok(())
    }

    /// Applies one item; an error says why it cannot follow what came before.
    pub fn apply(&mut self, item: Item) -> Result<(), ReplayError> {
        match item {
            Item::HardState { term, voted_for } => {
                if term < self.term {
                    return Err(ReplayError::TermGoesBack {
                        from: self.term,
                        to: term,
                    });
                }
                self.term = term;
                self.voted_for = voted_for;
            }
            Item::Truncate { from } => {
                if from <= self.base() || from > self.last_index().next() {
                    return Err(ReplayError::TruncationOutside {
                        from,
                        first: self.base().next(),
                        last: self.last_index(),
                    });
                }
                self.entries.truncate((from.0 - self.base().0 - 1) as usize);
            }
            Item::Entry {
                index,
                term,
                command,
            } => {
                if index != self.last_index().next() {
                    return Err(ReplayError::EntryOutOfPlace {
                        index,
                        last: self.last_index(),
                    });
                }
                self.entries.push(Entry {
                    term,
                    command: Command(command),
                });
            }
            Item::Snapshot(snapshot) => {
                let index = snapshot.index;
                if index < self.base() {
                    return Err(ReplayError::SnapshotGoesBack {
                        index,
                        base: self.base(),
                    });
                }
                let compacted = ((index.0 - self.base().0) as usize).min(self.entries.len());
                self.entries.drain(..compacted);
                self.snapshot = Some(snapshot);
            }
            Item::Checkpoint { .. } => return Err(ReplayError::CheckpointNotFirst),
            // Where the segment's file goes on: checked by `recover`, nothing to the state.
            Item::ContinuedIn { .. } => {}
        }
        Ok(())
    }
}

/// What a directory's log holds.
#[derive(Debug)]
pub struct Recovered {
    pub replay: Replay,
    /// The segments replayed, in order (at least one unless the directory held none).
    pub segments: Vec<SegmentInfo>,
    /// Where the last segment's torn tail was cut, and why it was damaged.
    pub cut: Option<(PathBuf, u64, Damage)>,
    /// Files no longer needed: segments before a gap, snapshots no record points at, temporary
    /// files of writes that never finished.
    pub leftovers: Vec<PathBuf>,
    /// The highest snapshot file number found, referenced or not: new ones are numbered above.
    pub highest_snapshot_file: u64,
}

impl Recovered {
    /// The state, with the snapshot's bytes read from its file.
    pub fn state(
        &self,
        filesystem: &dyn Filesystem,
        dir: &Path,
    ) -> Result<PersistentState, WalError> {
        let replay = &self.replay;
        let (index, term, snapshot) = match replay.snapshot {
            None => (LogIndex(0), Term(0), Vec::new()),
            Some(snapshot) => (
                snapshot.index,
                snapshot.term,
                read_snapshot(
                    filesystem,
                    &dir.join(super::names::snapshot_name(snapshot.file)),
                    snapshot.index,
                    snapshot.term,
                    snapshot.len,
                    snapshot.crc,
                )?,
            ),
        };
        Ok(PersistentState {
            current_term: replay.term,
            voted_for: replay.voted_for,
            log: RaftLog::after_snapshot(index, term, replay.entries.clone()),
            snapshot,
        })
    }
}

/// One segment as read: its records, or where its damage starts.
struct ParsedSegment {
    number: u64,
    path: PathBuf,
    /// Each good record's offset and items.
    records: Vec<(u64, Vec<Item>)>,
    /// Its checkpoint, if its first record is one: only such a segment can start a replay.
    checkpoint: Option<Checkpoint>,
    max_entry: LogIndex,
    good_len: u64,
    /// Where a damaged record starts, and why.
    damage: Option<(u64, Damage)>,
    /// The segment its seal says the log goes on in, if it was rolled over from.
    continued_in: Option<u64>,
}

impl ParsedSegment {
    fn new(number: u64, path: &Path) -> ParsedSegment {
        ParsedSegment {
            number,
            path: path.to_path_buf(),
            records: Vec::new(),
            checkpoint: None,
            max_entry: LogIndex(0),
            good_len: 0,
            damage: None,
            continued_in: None,
        }
    }

    /// Adds the good record at `offset`, or says why it cannot be where it is (after the
    /// seal, or a seal of the wrong segment, or among other items).
    fn push_record(&mut self, offset: u64, items: Vec<Item>) -> Result<(), Damage> {
        assert!(offset >= self.good_len, "records are pushed in order");
        if let Some(next) = self.continued_in {
            return Err(Damage::RecordAfterSeal { next });
        }
        if let [Item::ContinuedIn { segment: named }] = items[..] {
            if named != self.number + 1 {
                return Err(Damage::SealNamesAnother {
                    named,
                    segment: self.number,
                });
            }
            self.continued_in = Some(named);
        } else if items
            .iter()
            .any(|item| matches!(item, Item::ContinuedIn { .. }))
        {
            return Err(Damage::SealAmongItems);
        }
        for item in &items {
            if let Item::Entry { index, .. } = item {
                self.max_entry = self.max_entry.max(*index);
            }
        }
        if self.records.is_empty() {
            self.checkpoint = checkpoint_snapshot(&items);
        }
        self.records.push((offset, items));
        Ok(())
    }

    fn damaged(&self, offset: u64, why: impl Into<Damage>) -> WalError {
        WalError::Damaged {
            file: self.path.clone(),
            offset,
            why: why.into(),
        }
    }
}

fn parse_segment(
    filesystem: &dyn Filesystem,
    path: &Path,
    number: u64,
) -> Result<ParsedSegment, WalError> {
    let bytes = super::files::read_bounded(filesystem, path, super::files::MAX_SEGMENT_FILE_BYTES)?;
    let mut segment = ParsedSegment::new(number, path);
    if let Err(why) = check_segment_header(&bytes, number) {
        if bytes.len() > SEGMENT_HEADER_LEN {
            return Err(segment.damaged(0, why));
        }
        // Created, and the machine stopped before its header was durable: nothing in it was
        // ever acknowledged (allowed in the last segment only).
        segment.damage = Some((0, why));
        return Ok(segment);
    }
    let mut offset = SEGMENT_HEADER_LEN;
    loop {
        match unframe(&bytes[offset..]) {
            Framed::End => break,
            Framed::Damaged(damage) => {
                if let Some(next) = good_record_after(&bytes, offset) {
                    // A torn write leaves nothing after it: damage that a good record follows
                    // was done to what was written whole, and may have been acknowledged.
                    // Cutting there would drop what the node promised to keep.
                    let next = next as u64;
                    let why = Damage::GoodRecordFollows { damage, next };
                    return Err(segment.damaged(offset as u64, why));
                }
                segment.damage = Some((offset as u64, damage.into()));
                break;
            }
            Framed::Record { body, len } => {
                let at = offset as u64;
                let items = decode_items(body).map_err(|why| segment.damaged(at, why))?;
                if let Err(why) = segment.push_record(at, items) {
                    return Err(segment.damaged(at, why));
                }
                offset += len;
            }
        }
    }
    assert!(offset <= bytes.len(), "records end inside the file");
    segment.good_len = offset as u64;
    Ok(segment)
}

/// Where the first good record after the damaged one at `offset` starts, if there is one: then
/// the damage is not a torn tail. Every offset is tried, since the damage may have taken the
/// damaged record's length with it (a zeroed sector does).
fn good_record_after(bytes: &[u8], offset: usize) -> Option<usize> {
    (offset + 1..bytes.len().saturating_sub(super::record::FRAME_LEN))
        .find(|&at| matches!(unframe(&bytes[at..]), Framed::Record { .. }))
}

/// What a record restates, if it is a checkpoint.
pub fn checkpoint_snapshot(items: &[Item]) -> Option<Checkpoint> {
    let Some(Item::Checkpoint { complete }) = items.first() else {
        return None;
    };
    let snapshot = items
        .iter()
        .find_map(|item| match item {
            Item::Snapshot(snapshot) => Some(snapshot.index),
            _ => None,
        })
        .unwrap_or(LogIndex(0));
    Some(Checkpoint {
        complete: *complete,
        snapshot,
    })
}

/// Where a replay starts: the latest segment whose checkpoint restates everything the segments
/// before it hold (a complete one, or one whose snapshot covers every entry before it), else
/// the first segment there is.
pub fn replay_start(segments: &[(Option<Checkpoint>, LogIndex)]) -> usize {
    let mut start = 0;
    let mut max_before = LogIndex(0);
    for (position, &(checkpoint, max_entry)) in segments.iter().enumerate() {
        if checkpoint
            .is_some_and(|checkpoint| checkpoint.complete || checkpoint.snapshot >= max_before)
        {
            start = position;
        }
        max_before = max_before.max(max_entry);
    }
    start
}

/// The log's files in a directory, by kind.
#[derive(Default)]
struct Listing {
    /// Segments' numbers, in order.
    segments: Vec<u64>,
    /// Snapshot files' numbers, in order.
    snapshots: Vec<u64>,
    /// Temporary files of writes that never finished.
    temporary: Vec<PathBuf>,
}

fn list(filesystem: &dyn Filesystem, dir: &Path) -> Result<Listing, WalError> {
    let mut names = filesystem.list(dir).map_err(|source| WalError::Io {
        file: dir.to_path_buf(),
        source,
    })?;
    // Listing order is the filesystem's: sorted, what recovery does is the same on every one.
    names.sort_unstable();
    let mut listing = Listing::default();
    for name in names {
        match parse_name(&name) {
            Some(Named::Segment(number)) => listing.segments.push(number),
            Some(Named::Snapshot(number)) => listing.snapshots.push(number),
            Some(Named::Temporary) => listing.temporary.push(dir.join(name)),
            None => {}
        }
    }
    listing.segments.sort_unstable();
    listing.snapshots.sort_unstable();
    Ok(listing)
}

/// Refuses a log whose damage is not a torn tail of its last segment, or that lacks a file its
/// records say exists.
fn check_only_the_tail_is_torn(
    dir: &Path,
    parsed: &mut Vec<ParsedSegment>,
    leftovers: &mut Vec<PathBuf>,
    snapshots: &[u64],
) -> Result<(), WalError> {
    // A roll-over syncs the closed segment before it writes a record to the next
    // (`Writer::roll_over`): a torn tail in the segment before the last, with no record in the
    // last, is a roll-over the power stopped. Nothing in either was acknowledged; the last is
    // a leftover, and the one before it is the last, its tail cut.
    if let [.., closed, next] = &parsed[..] {
        if closed.damage.is_some() && next.records.is_empty() {
            let unstarted = parsed.pop().expect("two segments");
            leftovers.push(unstarted.path);
        }
    }
    let last = parsed.len().saturating_sub(1);
    if let Some(damaged) = parsed[..last]
        .iter_mut()
        .find(|segment| segment.damage.is_some())
    {
        let (offset, why) = damaged.damage.take().expect("damaged");
        return Err(damaged.damaged(offset, why));
    }
    if let Some(last) = parsed.last() {
        if let Some(next) = last.continued_in {
            return Err(WalError::Missing {
                file: dir.join(super::names::segment_name(next)),
                evidence: format!(
                    "{} ends with a seal saying the log goes on in it",
                    last.path.display()
                ),
            });
        }
    } else if let Some(&number) = snapshots.iter().max() {
        return Err(WalError::Missing {
            file: dir.join(super::names::segment_name(1)),
            evidence: format!(
                "no segment is left, and the snapshot {} that a segment pointed at is",
                dir.join(super::names::snapshot_name(number)).display()
            ),
        });
    }
    Ok(())
}

/// Replays `parsed`, which must be numbered without a gap.
fn replay(dir: &Path, parsed: Vec<ParsedSegment>) -> Result<Recovered, WalError> {
    for pair in parsed.windows(2) {
        if pair[0].number + 1 != pair[1].number {
            return Err(WalError::Damaged {
                file: dir.join(super::names::segment_name(pair[0].number + 1)),
                offset: 0,
                why: Damage::SegmentMissing,
            });
        }
    }
    let mut recovered = Recovered {
        replay: Replay::default(),
        segments: Vec::new(),
        cut: None,
        leftovers: Vec::new(),
        highest_snapshot_file: 0,
    };
    for mut segment in parsed {
        if let Some((offset, why)) = segment.damage.take() {
            // Only the last segment gets here: a torn tail of a write that never returned.
            recovered.cut = Some((segment.path.clone(), offset, why));
        }
        for (offset, items) in std::mem::take(&mut segment.records) {
            if let Err(why) = recovered.replay.apply_record(items) {
                return Err(segment.damaged(offset, why));
            }
        }
        recovered.segments.push(SegmentInfo {
            number: segment.number,
            max_entry: segment.max_entry,
            checkpoint: segment.checkpoint,
            good_len: segment.good_len,
        });
    }
    Ok(recovered)
}

/// Replays the log in `dir`.
pub fn recover(filesystem: &dyn Filesystem, dir: &Path) -> Result<Recovered, WalError> {
    let listing = list(filesystem, dir)?;
    let mut leftovers = listing.temporary;
    let mut parsed = Vec::new();
    for &number in &listing.segments {
        let path = dir.join(super::names::segment_name(number));
        parsed.push(parse_segment(filesystem, &path, number)?);
    }
    check_only_the_tail_is_torn(dir, &mut parsed, &mut leftovers, &listing.snapshots)?;
    let start = replay_start(
        &parsed
            .iter()
            .map(|segment| (segment.checkpoint, segment.max_entry))
            .collect::<Vec<_>>(),
    );
    leftovers.extend(parsed.drain(..start).map(|segment| segment.path));
    let mut recovered = replay(dir, parsed)?;
    let referenced = recovered.replay.snapshot.map(|snapshot| snapshot.file);
    recovered.highest_snapshot_file = listing
        .snapshots
        .iter()
        .copied()
        .chain(referenced)
        .max()
        .unwrap_or(0);
    for &number in &listing.snapshots {
        if Some(number) != referenced {
            leftovers.push(dir.join(super::names::snapshot_name(number)));
        }
    }
    recovered.leftovers = leftovers;
    assert!(
        recovered.cut.is_none() || !recovered.segments.is_empty(),
        "a cut tail belongs to a replayed segment"
    );
    Ok(recovered)
}
