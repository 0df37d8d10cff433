//! Reading a write-ahead log back: the segments replayed in order, a torn tail of the last one
//! cut, damage anywhere else refused with the file and the offset.

use super::files::{check_segment_header, parse_name, read_snapshot, Named, SEGMENT_HEADER_LEN};
use super::record::{decode_items, unframe, Framed, Item, SnapshotRef};
use super::WalError;
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
    pub fn apply_record(&mut self, items: Vec<Item>) -> Result<(), String> {
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
                return Err("a checkpoint without the snapshot in force".to_string());
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
    pub fn apply(&mut self, item: Item) -> Result<(), String> {
        match item {
            Item::HardState { term, voted_for } => {
                if term < self.term {
                    return Err(format!("the term goes back from {} to {}", self.term, term));
                }
                self.term = term;
                self.voted_for = voted_for;
            }
            Item::Truncate { from } => {
                if from <= self.base() || from > self.last_index().next() {
                    return Err(format!(
                        "a truncation from {from} outside the log ({}..={})",
                        self.base().next(),
                        self.last_index()
                    ));
                }
                self.entries.truncate((from.0 - self.base().0 - 1) as usize);
            }
            Item::Entry {
                index,
                term,
                command,
            } => {
                if index != self.last_index().next() {
                    return Err(format!(
                        "entry {index} after a log ending at {}",
                        self.last_index()
                    ));
                }
                self.entries.push(Entry {
                    term,
                    command: Command(command),
                });
            }
            Item::Snapshot(snapshot) => {
                let index = snapshot.index;
                if index < self.base() {
                    return Err(format!(
                        "a snapshot at {index} older than the one at {}",
                        self.base()
                    ));
                }
                let compacted = ((index.0 - self.base().0) as usize).min(self.entries.len());
                self.entries.drain(..compacted);
                self.snapshot = Some(snapshot);
            }
            Item::Checkpoint { .. } => {
                return Err("a checkpoint that does not start its record".to_string())
            }
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
    pub cut: Option<(PathBuf, u64, String)>,
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
                    &dir.join(super::files::snapshot_name(snapshot.file)),
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
    damage: Option<(u64, String)>,
    /// The segment its seal says the log goes on in, if it was rolled over from.
    continued_in: Option<u64>,
}

fn parse_segment(
    filesystem: &dyn Filesystem,
    path: &Path,
    number: u64,
) -> Result<ParsedSegment, WalError> {
    let bytes = super::files::read_bounded(filesystem, path, super::files::MAX_SEGMENT_FILE_BYTES)?;
    let mut segment = ParsedSegment {
        number,
        path: path.to_path_buf(),
        records: Vec::new(),
        checkpoint: None,
        max_entry: LogIndex(0),
        good_len: 0,
        damage: None,
        continued_in: None,
    };
    if let Err(why) = check_segment_header(&bytes, number) {
        if bytes.len() > SEGMENT_HEADER_LEN {
            return Err(WalError::Damaged {
                file: path.to_path_buf(),
                offset: 0,
                why,
            });
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
            Framed::Damaged(why) => {
                if let Some(next) = good_record_after(&bytes, offset) {
                    // A torn write leaves nothing after it: damage that a good record follows
                    // was done to what was written whole, and may have been acknowledged.
                    // Cutting there would drop what the node promised to keep.
                    return Err(WalError::Damaged {
                        file: path.to_path_buf(),
                        offset: offset as u64,
                        why: format!("{why}, and a good record follows at offset {next}"),
                    });
                }
                segment.damage = Some((offset as u64, why));
                break;
            }
            Framed::Record { body, len } => {
                let damaged = |why: String| WalError::Damaged {
                    file: path.to_path_buf(),
                    offset: offset as u64,
                    why,
                };
                let items = decode_items(body).map_err(damaged)?;
                if let Some(next) = segment.continued_in {
                    return Err(damaged(format!(
                        "a record after the seal that ends this segment (the log went on in {})",
                        super::files::segment_name(next)
                    )));
                }
                if let [Item::ContinuedIn { segment: next }] = items[..] {
                    if next != number + 1 {
                        return Err(damaged(format!(
                            "a seal naming segment {next} after segment {number}"
                        )));
                    }
                    segment.continued_in = Some(next);
                } else if items
                    .iter()
                    .any(|item| matches!(item, Item::ContinuedIn { .. }))
                {
                    return Err(damaged("a seal among other items".to_string()));
                }
                for item in &items {
                    if let Item::Entry { index, .. } = item {
                        segment.max_entry = segment.max_entry.max(*index);
                    }
                }
                segment.records.push((offset as u64, items));
                offset += len;
            }
        }
    }
    segment.good_len = offset as u64;
    segment.checkpoint = segment
        .records
        .first()
        .and_then(|(_, items)| checkpoint_snapshot(items));
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

/// Replays the log in `dir`.
pub fn recover(filesystem: &dyn Filesystem, dir: &Path) -> Result<Recovered, WalError> {
    let io = |file: &Path, source| WalError::Io {
        file: file.to_path_buf(),
        source,
    };
    let mut numbers = Vec::new();
    let mut snapshots = Vec::new();
    let mut leftovers = Vec::new();
    let mut names = filesystem.list(dir).map_err(|source| io(dir, source))?;
    // Listing order is the filesystem's: sorted, what recovery does is the same on every one.
    names.sort_unstable();
    for name in names {
        match parse_name(&name) {
            Some(Named::Segment(number)) => numbers.push(number),
            Some(Named::Snapshot(number)) => snapshots.push(number),
            Some(Named::Temporary) => leftovers.push(dir.join(name)),
            None => {}
        }
    }
    numbers.sort_unstable();
    let mut parsed = Vec::new();
    for &number in &numbers {
        let path = dir.join(super::files::segment_name(number));
        parsed.push(parse_segment(filesystem, &path, number)?);
    }
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
        .iter()
        .find(|segment| segment.damage.is_some())
    {
        let (offset, why) = damaged.damage.clone().expect("damaged");
        return Err(WalError::Damaged {
            file: damaged.path.clone(),
            offset,
            why,
        });
    }
    if let Some(last) = parsed.last() {
        if let Some(next) = last.continued_in {
            return Err(WalError::Missing {
                file: dir.join(super::files::segment_name(next)),
                evidence: format!(
                    "{} ends with a seal saying the log goes on in it",
                    last.path.display()
                ),
            });
        }
    } else if let Some(&number) = snapshots.iter().max() {
        return Err(WalError::Missing {
            file: dir.join(super::files::segment_name(1)),
            evidence: format!(
                "no segment is left, and the snapshot {} that a segment pointed at is",
                dir.join(super::files::snapshot_name(number)).display()
            ),
        });
    }
    let start = replay_start(
        &parsed
            .iter()
            .map(|segment| (segment.checkpoint, segment.max_entry))
            .collect::<Vec<_>>(),
    );
    for segment in parsed.drain(..start) {
        leftovers.push(segment.path);
    }
    for pair in parsed.windows(2) {
        if pair[0].number + 1 != pair[1].number {
            return Err(WalError::Damaged {
                file: dir.join(super::files::segment_name(pair[0].number + 1)),
                offset: 0,
                why: "a segment between two others is missing".to_string(),
            });
        }
    }
    let mut replay = Replay::default();
    let mut infos = Vec::new();
    let mut cut = None;
    for segment in parsed {
        if let Some((offset, why)) = segment.damage {
            // Only the last segment gets here: a torn tail of a write that never returned.
            cut = Some((segment.path.clone(), offset, why));
        }
        for (offset, items) in segment.records {
            replay
                .apply_record(items)
                .map_err(|why| WalError::Damaged {
                    file: segment.path.clone(),
                    offset,
                    why,
                })?;
        }
        infos.push(SegmentInfo {
            number: segment.number,
            max_entry: segment.max_entry,
            checkpoint: segment.checkpoint,
            good_len: segment.good_len,
        });
    }
    let referenced = replay.snapshot.map(|snapshot| snapshot.file);
    let highest_snapshot_file = snapshots
        .iter()
        .copied()
        .chain(referenced)
        .max()
        .unwrap_or(0);
    for number in snapshots {
        if Some(number) != referenced {
            leftovers.push(dir.join(super::files::snapshot_name(number)));
        }
    }
    Ok(Recovered {
        replay,
        segments: infos,
        cut,
        leftovers,
        highest_snapshot_file,
    })
}
