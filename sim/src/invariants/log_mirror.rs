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
        if Self::holds_committed(log, index, committed) {
            Ok(())
        } else {
            Err(format!(
                "{node} compacted its log up to {index}, but its entry there is not the \
                 committed one"
            ))
        }
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
        if Self::holds_committed(log, index, committed) {
            Ok(())
        } else {
            Err(format!(
                "Log Matching: {node} kept its entries after a snapshot up to {index}, but its \
                 log differs from the committed one there"
            ))
        }
    }

    /// Whether `log` holds the committed entry at `index` (and so, by its chain digest, every
    /// committed entry before it).
    fn holds_committed(log: &[Mirrored], index: LogIndex, committed: &[Mirrored]) -> bool {
        let position = (index.0 - 1) as usize;
        log.get(position).is_some() && log.get(position) == committed.get(position)
    }

    /// `node`'s entry at `index`, if its log reaches it.
    pub fn entry(&self, node: NodeId, index: LogIndex) -> Option<Mirrored> {
        let position = usize::try_from(index.0.checked_sub(1)?).ok()?;
        self.logs.get(&node)?.get(position).copied()
    }
}
