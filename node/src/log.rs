//! [`RaftLog`]: the replicated log, indexed from 1, with the operations the protocol needs.

use crate::{Entry, LogIndex, Term};

/// The log of entries, `entries[0]` being index 1. Index 0 is the empty prefix, of term 0.
#[derive(Clone, Debug, Default)]
pub struct RaftLog {
    entries: Vec<Entry>,
    /// How many times entries were removed. Between two removals the log only grows, which is
    /// what lets a [`crate::persist::StateEncoder`] encode only the entries appended since its
    /// last persist.
    removals: u64,
}

/// Two logs are equal when they hold the same entries (however they got them).
impl PartialEq for RaftLog {
    fn eq(&self, other: &RaftLog) -> bool {
        self.entries == other.entries
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
        RaftLog {
            entries,
            removals: 0,
        }
    }

    /// How many times entries were removed from this log: while it stays the same, the log has
    /// only been appended to.
    pub fn removals(&self) -> u64 {
        self.removals
    }

    /// The index of the last entry (0 when empty).
    pub fn last_index(&self) -> LogIndex {
        LogIndex(self.entries.len() as u64)
    }

    /// The term of the last entry (0 when empty).
    pub fn last_term(&self) -> Term {
        self.entries.last().map_or(Term(0), |entry| entry.term)
    }

    /// The term of the entry at `index`; `Some(Term(0))` at index 0, `None` past the end.
    pub fn term_at(&self, index: LogIndex) -> Option<Term> {
        if index.0 == 0 {
            return Some(Term(0));
        }
        self.entry(index).map(|entry| entry.term)
    }

    /// The entry at `index`, if there is one.
    pub fn entry(&self, index: LogIndex) -> Option<&Entry> {
        let position = usize::try_from(index.0).ok()?.checked_sub(1)?;
        self.entries.get(position)
    }

    /// Every entry, index 1 first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Up to `limit` entries starting at `from` (which may be one past the end).
    pub fn slice_from(&self, from: LogIndex, limit: usize) -> Vec<Entry> {
        assert!(from.0 >= 1, "entries start at index 1, asked for {from}");
        let start = (from.0 - 1) as usize;
        assert!(
            start <= self.entries.len(),
            "slice from {from} past the end {}",
            self.last_index()
        );
        let end = (start + limit).min(self.entries.len());
        self.entries[start..end].to_vec()
    }

    /// Appends one entry and returns its index.
    pub fn append(&mut self, entry: Entry) -> LogIndex {
        self.entries.push(entry);
        self.last_index()
    }

    /// Removes every entry at `from` and after.
    pub fn truncate_from(&mut self, from: LogIndex) {
        assert!(from.0 >= 1, "cannot truncate index 0");
        if from <= self.last_index() {
            self.entries.truncate((from.0 - 1) as usize);
            self.removals += 1;
        }
    }

    /// Places `entries` after `prev_index` (which must exist): entries that match are kept, the
    /// first conflicting entry and everything after it are replaced, missing ones are appended.
    /// A log is never truncated where the incoming entries agree with it.
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
            match self.term_at(index) {
                Some(term) if term == entry.term => continue,
                Some(_) => {
                    self.truncate_from(index);
                    outcome.truncated_from = Some(index);
                }
                None => {}
            }
            self.entries.extend_from_slice(&entries[offset..]);
            outcome.appended_from = Some(index);
            outcome.changed = true;
            break;
        }
        outcome
    }

    /// The first index holding an entry of `term`, searching backwards from `from`.
    pub fn first_index_of_term_run(&self, from: LogIndex) -> LogIndex {
        let term = self.term_at(from).expect("index within the log");
        let mut index = from;
        while index.0 > 1 && self.term_at(index.prev()) == Some(term) {
            index = index.prev();
        }
        index
    }

    /// The last index holding an entry of `term`, if any.
    pub fn last_index_of_term(&self, term: Term) -> Option<LogIndex> {
        self.entries
            .iter()
            .rposition(|entry| entry.term == term)
            .map(|position| LogIndex(position as u64 + 1))
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
    fn term_lookups() {
        let log = log_of(&[1, 1, 2, 2, 2, 4]);
        assert_eq!(log.term_at(LogIndex(0)), Some(Term(0)));
        assert_eq!(log.term_at(LogIndex(7)), None);
        assert_eq!(log.first_index_of_term_run(LogIndex(5)), LogIndex(3));
        assert_eq!(log.last_index_of_term(Term(2)), Some(LogIndex(5)));
        assert_eq!(log.last_index_of_term(Term(3)), None);
        assert_eq!(log.slice_from(LogIndex(5), 10), vec![entry(2), entry(4)]);
        assert!(log.slice_from(LogIndex(7), 10).is_empty());
    }
}
