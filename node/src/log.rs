//! [`RaftLog`]: the replicated log, indexed from 1, with the operations the protocol needs.

use crate::{Entry, LogIndex, Term};

/// The log of entries from index 1, of which a prefix may be compacted into a snapshot: the log
/// then holds the entries after `snapshot_index` and remembers the term of the last entry the
/// snapshot covers (Raft section 7). Index 0 is the empty prefix, of term 0, and with nothing
/// compacted `snapshot_index` is 0.
#[derive(Clone, Debug, Default)]
pub struct RaftLog {
    /// The last index the snapshot covers (0: nothing compacted).
    snapshot_index: LogIndex,
    /// The term of the entry at `snapshot_index`.
    snapshot_term: Term,
    /// The entries after `snapshot_index`, `entries[0]` at `snapshot_index + 1`.
    entries: Vec<Entry>,
    /// How many times entries were removed (from the end, or compacted from the front). Between
    /// two removals the log only grows, which is what lets a [`crate::persist::StateEncoder`]
    /// encode only the entries appended since its last persist.
    removals: u64,
    /// The bytes of the commands in `entries`, kept as they change.
    command_bytes: usize,
    /// The indices of the entries that carry a configuration
    /// ([`crate::membership::is_membership`]), in order, kept as they change.
    configurations: Vec<LogIndex>,
}

/// Two logs are equal when they cover the same prefix and hold the same entries after it
/// (however they got them).
impl PartialEq for RaftLog {
    fn eq(&self, other: &RaftLog) -> bool {
        (self.snapshot_index, self.snapshot_term, &self.entries)
            == (other.snapshot_index, other.snapshot_term, &other.entries)
    }
}

impl Eq for RaftLog {}

/// What [`RaftLog::merge`] changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The first index removed because it conflicted, if any entry was removed.
    pub truncated_from: Option<LogIndex>,
    /// The first index written, if any entry was appended.
    pub appended_from: Option<LogIndex>,
    /// Whether anything was appended or removed.
    pub changed: bool,
}

impl RaftLog {
    /// A log holding `entries` at indices 1, 2, ...
    pub fn from_entries(entries: Vec<Entry>) -> RaftLog {
        RaftLog::after_snapshot(LogIndex(0), Term(0), entries)
    }

    /// A log whose prefix up to `snapshot_index`, of term `snapshot_term` there, is compacted,
    /// holding `entries` after it.
    pub fn after_snapshot(
        snapshot_index: LogIndex,
        snapshot_term: Term,
        entries: Vec<Entry>,
    ) -> RaftLog {
        assert!(
            snapshot_index.0 > 0 || snapshot_term == Term(0),
            "the empty prefix has term 0, not {snapshot_term}"
        );
        let command_bytes = entries.iter().map(|entry| entry.command.0.len()).sum();
        let mut log = RaftLog {
            snapshot_index,
            snapshot_term,
            entries: Vec::new(),
            removals: 0,
            command_bytes,
            configurations: Vec::new(),
        };
        log.note_configurations(snapshot_index.next(), &entries);
        log.entries = entries;
        log
    }

    /// Records the configuration entries among `entries`, placed from `first` on.
    fn note_configurations(&mut self, first: LogIndex, entries: &[Entry]) {
        for (offset, entry) in entries.iter().enumerate() {
            if crate::membership::is_membership(&entry.command) {
                self.configurations.push(LogIndex(first.0 + offset as u64));
            }
        }
    }

    /// The last entry at or before `index` that carries a configuration, and its index.
    pub fn last_configuration_at(&self, index: LogIndex) -> Option<(LogIndex, &Entry)> {
        let position = self.configurations.partition_point(|&at| at <= index);
        let at = *self.configurations[..position].last()?;
        Some((
            at,
            self.entry(at).expect("a configuration entry the log holds"),
        ))
    }

    /// The last entry that carries a configuration, and its index.
    pub fn last_configuration(&self) -> Option<(LogIndex, &Entry)> {
        let index = *self.configurations.last()?;
        Some((
            index,
            self.entry(index)
                .expect("a configuration entry the log holds"),
        ))
    }

    /// How many times entries were removed from this log: while it stays the same, the log has
    /// only been appended to.
    pub fn removals(&self) -> u64 {
        self.removals
    }

    /// The last index the snapshot covers (0 when nothing is compacted).
    pub fn snapshot_index(&self) -> LogIndex {
        self.snapshot_index
    }

    /// The term of the entry at [`RaftLog::snapshot_index`].
    pub fn snapshot_term(&self) -> Term {
        self.snapshot_term
    }

    /// The index of the last entry (the snapshot's last index when no entry follows it; 0 when
    /// empty).
    pub fn last_index(&self) -> LogIndex {
        LogIndex(self.snapshot_index.0 + self.entries.len() as u64)
    }

    /// The term of the last entry (0 when empty).
    pub fn last_term(&self) -> Term {
        self.entries
            .last()
            .map_or(self.snapshot_term, |entry| entry.term)
    }

    /// The term of the entry at `index`: the snapshot's term at its last index, `None` before
    /// it (compacted: the term is no longer known) and past the end.
    pub fn term_at(&self, index: LogIndex) -> Option<Term> {
        if index == self.snapshot_index {
            return Some(self.snapshot_term);
        }
        self.entry(index).map(|entry| entry.term)
    }

    /// The entry at `index`, if the log holds it (not compacted, not past the end).
    pub fn entry(&self, index: LogIndex) -> Option<&Entry> {
        let position = index.0.checked_sub(self.snapshot_index.0)?.checked_sub(1)?;
        self.entries.get(usize::try_from(position).ok()?)
    }

    /// Every entry the log holds, the one after the snapshot first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Where `index` is in `entries`; `index` must be after the snapshot.
    fn position(&self, index: LogIndex) -> usize {
        assert!(
            index > self.snapshot_index,
            "{index} is compacted into the snapshot up to {}",
            self.snapshot_index
        );
        (index.0 - self.snapshot_index.0 - 1) as usize
    }

    /// Up to `max_entries` entries starting at `from` (which may be one past the end, and must
    /// be after the snapshot), and no more than `max_bytes` of commands: the first entry is
    /// always taken (when `max_entries` allows one), so a command longer than `max_bytes` still
    /// travels, alone.
    pub fn slice_from(&self, from: LogIndex, max_entries: usize, max_bytes: usize) -> Vec<Entry> {
        let start = self.position(from);
        assert!(
            start <= self.entries.len(),
            "slice from {from} past the end {}",
            self.last_index()
        );
        let mut bytes = 0;
        let taken = self.entries[start..]
            .iter()
            .take(max_entries)
            .enumerate()
            .take_while(|(position, entry)| {
                bytes += entry.command.0.len();
                *position == 0 || bytes <= max_bytes
            })
            .count();
        self.entries[start..start + taken].to_vec()
    }

    /// The bytes of the commands the log holds (after its snapshot).
    pub fn command_bytes(&self) -> usize {
        debug_assert_eq!(
            self.command_bytes,
            Self::bytes_of(&self.entries),
            "the kept count drifted"
        );
        self.command_bytes
    }

    fn bytes_of(entries: &[Entry]) -> usize {
        entries.iter().map(|entry| entry.command.0.len()).sum()
    }

    /// Appends one entry and returns its index.
    pub fn append(&mut self, entry: Entry) -> LogIndex {
        self.command_bytes += entry.command.0.len();
        self.note_configurations(self.last_index().next(), std::slice::from_ref(&entry));
        self.entries.push(entry);
        self.last_index()
    }

    /// Removes every entry at `from` and after (`from` must be after the snapshot: what a
    /// snapshot covers is committed and never removed).
    pub fn truncate_from(&mut self, from: LogIndex) {
        let position = self.position(from);
        if position < self.entries.len() {
            self.command_bytes -= Self::bytes_of(&self.entries[position..]);
            self.entries.truncate(position);
            self.configurations.retain(|&at| at < from);
            self.removals += 1;
        }
    }

    /// Places `entries` after `prev_index` (which must be in the log or the snapshot's range):
    /// entries that match are kept, the first conflicting entry and everything after it are
    /// replaced, missing ones are appended. Entries the snapshot covers are skipped (they are
    /// committed, so they match). A log is never truncated where the incoming entries agree
    /// with it.
    pub fn merge(&mut self, prev_index: LogIndex, entries: &[Entry]) -> MergeOutcome {
        assert!(
            prev_index <= self.last_index(),
            "merge after {prev_index} past the end"
        );
        let mut outcome = MergeOutcome {
            truncated_from: None,
            appended_from: None,
            changed: false,
        };
        for (offset, entry) in entries.iter().enumerate() {
            let index = LogIndex(prev_index.0 + 1 + offset as u64);
            if index <= self.snapshot_index {
                continue;
            }
            match self.term_at(index) {
                Some(term) if term == entry.term => continue,
                Some(_) => {
                    self.truncate_from(index);
                    outcome.truncated_from = Some(index);
                }
                None => {}
            }
            self.command_bytes += Self::bytes_of(&entries[offset..]);
            self.note_configurations(index, &entries[offset..]);
            self.entries.extend_from_slice(&entries[offset..]);
            outcome.appended_from = Some(index);
            outcome.changed = true;
            break;
        }
        outcome
    }

    /// Compacts every entry up to `index` (held by the log) into the snapshot: they are
    /// dropped, and the term at `index` is kept.
    pub fn compact_to(&mut self, index: LogIndex) {
        if index <= self.snapshot_index {
            return;
        }
        let term = self.term_at(index).expect("compacting past the end");
        let position = self.position(index);
        self.command_bytes -= Self::bytes_of(&self.entries[..=position]);
        self.entries.drain(..=position);
        self.configurations.retain(|&at| at > index);
        self.snapshot_index = index;
        self.snapshot_term = term;
        self.removals += 1;
    }

    /// Takes a snapshot that covers every entry up to `index`, of term `term` there, from a
    /// leader: if the log holds that entry, the entries after it are kept (they may be newer
    /// than the snapshot); otherwise the whole log gives way to the snapshot (Raft section 7).
    /// A snapshot older than the log's own is ignored. Returns whether anything changed.
    pub fn install_snapshot(&mut self, index: LogIndex, term: Term) -> bool {
        if index <= self.snapshot_index {
            return false;
        }
        if self.term_at(index) == Some(term) {
            self.compact_to(index);
        } else {
            self.entries.clear();
            self.configurations.clear();
            self.command_bytes = 0;
            self.snapshot_index = index;
            self.snapshot_term = term;
            self.removals += 1;
        }
        true
    }

    /// The first index holding an entry of the term at `from`, searching backwards from `from`
    /// no further than the log holds (the snapshot's last index, where the log starts).
    pub fn first_index_of_term_run(&self, from: LogIndex) -> LogIndex {
        let term = self.term_at(from).expect("index within the log");
        let mut index = from;
        while index.0 > 1 && index > self.snapshot_index && self.term_at(index.prev()) == Some(term)
        {
            index = index.prev();
        }
        index
    }

    /// The last index holding an entry of `term`, if any the log knows of (the snapshot's last
    /// index counts).
    pub fn last_index_of_term(&self, term: Term) -> Option<LogIndex> {
        self.entries
            .iter()
            .rposition(|entry| entry.term == term)
            .map(|position| LogIndex(self.snapshot_index.0 + position as u64 + 1))
            .or((self.snapshot_index.0 > 0 && self.snapshot_term == term)
                .then_some(self.snapshot_index))
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::Command;

    fn entry(term: u64) -> Entry {
        Entry {
            term: Term(term),
            command: Command(vec![term as u8]),
        }
    }

    fn log_of(terms: &[u64]) -> RaftLog {
        RaftLog::from_entries(terms.iter().map(|&t| entry(t)).collect())
    }

    #[test]
    fn merge_keeps_matching_entries_and_replaces_from_the_first_conflict() {
        let mut log = log_of(&[1, 1, 2, 2]);
        let outcome = log.merge(LogIndex(1), &[entry(1), entry(3)]);
        assert_eq!(outcome.truncated_from, Some(LogIndex(3)));
        assert_eq!(outcome.appended_from, Some(LogIndex(3)));
        assert_eq!(log, log_of(&[1, 1, 3]));
        assert_eq!(log.removals(), 1);
    }

    #[test]
    fn only_a_truncation_that_removes_entries_counts_as_a_removal() {
        let mut log = log_of(&[1, 1]);
        log.truncate_from(LogIndex(3));
        log.append(entry(2));
        assert_eq!(log.removals(), 0, "nothing was removed");
        log.truncate_from(LogIndex(2));
        assert_eq!(log, log_of(&[1]));
        assert_eq!(log.removals(), 1);
    }

    #[test]
    fn merge_of_a_stale_prefix_does_not_truncate() {
        let mut log = log_of(&[1, 1, 2, 2]);
        let outcome = log.merge(LogIndex(0), &[entry(1), entry(1)]);
        assert_eq!(
            outcome,
            MergeOutcome {
                truncated_from: None,
                appended_from: None,
                changed: false
            }
        );
        assert_eq!(log.last_index(), LogIndex(4));
    }

    #[test]
    fn a_slice_stops_at_its_byte_budget_but_always_carries_one_entry() {
        let mut log = RaftLog::default();
        for length in [3, 3, 10, 1] {
            log.append(Entry {
                term: Term(1),
                command: Command(vec![b'x'; length]),
            });
        }
        let lengths = |from, max_entries, max_bytes| -> Vec<usize> {
            let slice: Vec<Entry> = log.slice_from(LogIndex(from), max_entries, max_bytes);
            slice.iter().map(|entry| entry.command.0.len()).collect()
        };
        assert_eq!(lengths(1, 10, 6), [3, 3], "6 bytes hold the first two");
        assert_eq!(lengths(1, 10, 5), [3], "the second would pass 5");
        assert_eq!(
            lengths(3, 10, 4),
            [10],
            "one over the budget still goes, alone"
        );
        assert_eq!(lengths(1, 3, usize::MAX), [3, 3, 10]);
        assert!(lengths(1, 0, usize::MAX).is_empty(), "a heartbeat");
    }

    #[test]
    fn term_lookups() {
        let log = log_of(&[1, 1, 2, 2, 2, 4]);
        assert_eq!(log.term_at(LogIndex(0)), Some(Term(0)));
        assert_eq!(log.term_at(LogIndex(7)), None);
        assert_eq!(log.first_index_of_term_run(LogIndex(5)), LogIndex(3));
        assert_eq!(log.last_index_of_term(Term(2)), Some(LogIndex(5)));
        assert_eq!(log.last_index_of_term(Term(3)), None);
        assert_eq!(
            log.slice_from(LogIndex(5), 10, usize::MAX),
            vec![entry(2), entry(4)]
        );
        assert!(log.slice_from(LogIndex(7), 10, usize::MAX).is_empty());
    }

    #[test]
    fn a_compacted_log_keeps_its_indices_and_the_term_where_it_was_cut() {
        let mut log = log_of(&[1, 1, 2, 2, 3]);
        log.compact_to(LogIndex(3));
        assert_eq!(log.snapshot_index(), LogIndex(3));
        assert_eq!(log.snapshot_term(), Term(2));
        assert_eq!(log.last_index(), LogIndex(5));
        assert_eq!(log.last_term(), Term(3));
        assert_eq!(log.term_at(LogIndex(3)), Some(Term(2)));
        assert_eq!(log.term_at(LogIndex(2)), None, "compacted");
        assert_eq!(log.entry(LogIndex(4)), Some(&entry(2)));
        assert_eq!(log.entry(LogIndex(3)), None);
        assert_eq!(
            log.slice_from(LogIndex(4), 10, usize::MAX),
            vec![entry(2), entry(3)]
        );
        assert_eq!(
            log.removals(),
            1,
            "a compaction is a removal for the encoder"
        );
        assert_eq!(log.append(entry(3)), LogIndex(6));
        log.compact_to(LogIndex(2));
        assert_eq!(log.snapshot_index(), LogIndex(3), "a log never uncompacts");
        log.compact_to(LogIndex(6));
        assert_eq!((log.last_index(), log.last_term()), (LogIndex(6), Term(3)));
        assert!(log.entries().is_empty());
        assert_eq!(log.last_index_of_term(Term(3)), Some(LogIndex(6)));
        assert_eq!(log.last_index_of_term(Term(2)), None);
    }

    #[test]
    fn merge_skips_what_the_snapshot_covers_and_truncates_only_after_it() {
        let mut log = log_of(&[1, 1, 2, 2]);
        log.compact_to(LogIndex(2));
        // An AppendEntries from before the compaction: its first entries are covered.
        let outcome = log.merge(LogIndex(0), &[entry(1), entry(1), entry(2), entry(3)]);
        assert_eq!(outcome.truncated_from, Some(LogIndex(4)));
        assert_eq!(log.last_index(), LogIndex(4));
        assert_eq!(log.term_at(LogIndex(4)), Some(Term(3)));
        let unchanged = log.merge(LogIndex(1), &[entry(1)]);
        assert!(!unchanged.changed);
        assert_eq!(log.snapshot_index(), LogIndex(2));
    }

    #[test]
    fn an_installed_snapshot_keeps_a_matching_suffix_and_replaces_a_conflicting_log() {
        let mut log = log_of(&[1, 1, 2, 2]);
        assert!(log.install_snapshot(LogIndex(2), Term(1)));
        assert_eq!(
            log.last_index(),
            LogIndex(4),
            "entries after a match are kept"
        );
        assert_eq!(log.term_at(LogIndex(4)), Some(Term(2)));
        assert!(
            !log.install_snapshot(LogIndex(1), Term(1)),
            "an older one is ignored"
        );
        assert!(log.install_snapshot(LogIndex(3), Term(5)));
        assert_eq!(
            log,
            RaftLog::after_snapshot(LogIndex(3), Term(5), Vec::new()),
            "a conflicting log gives way whole"
        );
        assert!(log.install_snapshot(LogIndex(9), Term(6)));
        assert_eq!((log.last_index(), log.last_term()), (LogIndex(9), Term(6)));
    }

    #[test]
    #[should_panic(expected = "is compacted into the snapshot")]
    fn a_compacted_entry_cannot_be_truncated() {
        let mut log = log_of(&[1, 1, 2]);
        log.compact_to(LogIndex(2));
        log.truncate_from(LogIndex(2));
    }

    #[test]
    fn a_term_run_is_searched_no_further_back_than_the_log_holds() {
        let mut log = log_of(&[2, 2, 2, 2, 3]);
        assert_eq!(log.first_index_of_term_run(LogIndex(4)), LogIndex(1));
        log.compact_to(LogIndex(2));
        assert_eq!(log.first_index_of_term_run(LogIndex(4)), LogIndex(2));
    }
}
