//! [`LogMirrors`]: what the invariants know of every node's log, from its `LogChanged` events:
//! per entry its term and a chain digest of the whole log up to it, so two logs that agree up to
//! an index have the same chain digest there (and, up to hash collisions, only they do).

use node::{LogIndex, LoggedEntry, NodeId, Term};
use std::collections::BTreeMap;
use threadsim::Digest;

/// One mirrored entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Mirrored {
    pub term: Term,
    /// Digest of every entry up to and including this one.
    pub chain: u64,
}

/// Every node's log as its events described it.
#[derive(Default)]
pub(super) struct LogMirrors {
    logs: BTreeMap<NodeId, Vec<Mirrored>>,
}

impl LogMirrors {
    /// A new instance of `node` starts with an empty log (its restored log follows as an event).
    pub fn on_restart(&mut self, node: NodeId) {
        self.logs.insert(node, Vec::new());
    }

    /// `node`'s log lost every entry from `truncated_from` and gained `appended`; returns the
    /// new entries with their chain digests.
    pub fn on_changed(
        &mut self,
        node: NodeId,
        truncated_from: Option<LogIndex>,
        appended: &[LoggedEntry],
    ) -> Vec<(LogIndex, Mirrored)> {
        let log = self.logs.entry(node).or_default();
        if let Some(from) = truncated_from {
            log.truncate((from.0 - 1) as usize);
        }
        let mut added = Vec::with_capacity(appended.len());
        for entry in appended {
            // Entries that follow the log's end: anything else is a harness bug.
            assert_eq!(
                entry.index.0,
                log.len() as u64 + 1,
                "{node}'s log events skip from {} to {}",
                log.len(),
                entry.index
            );
            let mut digest = Digest::from_value(log.last().map_or(0, |last| last.chain));
            digest.write_u64(entry.term.0);
            digest.write_u64(entry.digest);
            let mirrored = Mirrored {
                term: entry.term,
                chain: digest.value(),
            };
            log.push(mirrored);
            added.push((entry.index, mirrored));
        }
        added
    }

    /// `node`'s log now starts after its service's snapshot up to `index`; `committed` are the
    /// committed entries up to there. A running node may compact only what is committed (its
    /// entry at `index` must be the committed one); a restarted node, whose mirror is empty,
    /// restored them from its snapshot.
    pub fn on_compacted(
        &mut self,
        node: NodeId,
        index: LogIndex,
        committed: &[Mirrored],
    ) -> Result<(), String> {
        let log = self.logs.entry(node).or_default();
        if log.is_empty() {
            log.extend_from_slice(committed);
            return Ok(());
        }
        Self::require_committed(log, index, committed, || {
            format!(
                "{node} compacted its log up to {index}, but its entry there is not the \
                 committed one"
            )
        })
    }

    /// `node` installed a leader's snapshot up to `index`, keeping the entries after it or not;
    /// `committed` are the committed entries up to there. Kept entries must follow the
    /// committed ones (Log Matching: the log agreed there).
    pub fn on_installed(
        &mut self,
        node: NodeId,
        index: LogIndex,
        kept_suffix: bool,
        committed: &[Mirrored],
    ) -> Result<(), String> {
        let log = self.logs.entry(node).or_default();
        if !kept_suffix {
            log.clear();
            log.extend_from_slice(committed);
            return Ok(());
        }
        Self::require_committed(log, index, committed, || {
            format!(
                "Log Matching: {node} kept its entries after a snapshot up to {index}, but its \
                 log differs from the committed one there"
            )
        })
    }

    /// `violation` unless `log` holds the committed entry at `index` (and so, by its chain
    /// digest, every committed entry before it).
    fn require_committed(
        log: &[Mirrored],
        index: LogIndex,
        committed: &[Mirrored],
        violation: impl FnOnce() -> String,
    ) -> Result<(), String> {
        let position = (index.0 - 1) as usize;
        match log.get(position) {
            Some(entry) if committed.get(position) == Some(entry) => Ok(()),
            _ => Err(violation()),
        }
    }

    /// `node`'s entry at `index`, if its log reaches it.
    pub fn entry(&self, node: NodeId, index: LogIndex) -> Option<Mirrored> {
        let position = usize::try_from(index.0.checked_sub(1)?).ok()?;
        self.logs.get(&node)?.get(position).copied()
    }
}

/// An entry of index `index` and term `term` whose command has `digest`, for the invariants'
/// tests.
#[cfg(all(test, not(any(loom, shuttle))))]
pub(super) fn logged(index: u64, term: u64, digest: u64) -> LoggedEntry {
    LoggedEntry {
        index: LogIndex(index),
        term: Term(term),
        digest,
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    /// n0's log of two entries, which the tests take as the committed ones.
    fn committed_two() -> (LogMirrors, Vec<Mirrored>) {
        let mut logs = LogMirrors::default();
        let added = logs.on_changed(NodeId(0), None, &[logged(1, 1, 10), logged(2, 1, 11)]);
        let committed = added.into_iter().map(|(_, entry)| entry).collect();
        (logs, committed)
    }

    #[test]
    fn compacting_anything_but_the_committed_prefix_is_a_violation() {
        let (mut logs, committed) = committed_two();
        assert!(logs
            .on_compacted(NodeId(0), LogIndex(2), &committed)
            .is_ok());
        logs.on_changed(NodeId(1), None, &[logged(1, 1, 10), logged(2, 2, 99)]);
        let violation = logs
            .on_compacted(NodeId(1), LogIndex(2), &committed)
            .unwrap_err();
        assert!(
            violation.contains(
                "n1 compacted its log up to #2, but its entry there is not the committed one"
            ),
            "{violation}"
        );
        // A restarted node's empty mirror takes the committed prefix, and its log follows it.
        logs.on_restart(NodeId(2));
        assert!(logs
            .on_compacted(NodeId(2), LogIndex(2), &committed)
            .is_ok());
        assert_eq!(logs.entry(NodeId(2), LogIndex(2)), Some(committed[1]));
        logs.on_changed(NodeId(2), None, &[logged(3, 1, 12)]);
    }

    #[test]
    fn an_install_that_keeps_entries_after_a_differing_prefix_is_a_violation() {
        let (mut logs, committed) = committed_two();
        // n1 agrees up to #2 and keeps #3.
        logs.on_changed(
            NodeId(1),
            None,
            &[logged(1, 1, 10), logged(2, 1, 11), logged(3, 1, 12)],
        );
        assert!(logs
            .on_installed(NodeId(1), LogIndex(2), true, &committed)
            .is_ok());
        assert!(logs.entry(NodeId(1), LogIndex(3)).is_some());
        // n2 differs at #2 but claims to keep what follows.
        logs.on_changed(
            NodeId(2),
            None,
            &[logged(1, 1, 10), logged(2, 1, 77), logged(3, 1, 12)],
        );
        let violation = logs
            .on_installed(NodeId(2), LogIndex(2), true, &committed)
            .unwrap_err();
        assert!(
            violation.starts_with("Log Matching: n2 kept its entries"),
            "{violation}"
        );
        // Giving way whole replaces its log with the committed prefix.
        assert!(logs
            .on_installed(NodeId(2), LogIndex(2), false, &committed)
            .is_ok());
        assert_eq!(logs.entry(NodeId(2), LogIndex(2)), Some(committed[1]));
        assert_eq!(logs.entry(NodeId(2), LogIndex(3)), None);
    }
}
