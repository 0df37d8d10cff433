//! **Leader Completeness** (Raft §5.4, Figure 3): if a log entry is committed in a given term,
//! then that entry will be present in the logs of the leaders for all higher-numbered terms.
//!
//! A node's commit index advancing in term `t` (its current term) says that every entry up to it
//! was committed in `t` or earlier. The check runs when a node becomes leader of a term (its log
//! must hold every entry committed in an earlier term) and when a commit is first seen (every
//! current leader of a later term must hold it). Because a commit can only be seen late, `t` is
//! an upper bound of the term it happened in: the check never fails a correct node, and it fails
//! a leader elected without a committed entry.

use super::log_mirror::{LogMirrors, Mirrored};
use node::{LogIndex, NodeId, Term};
use std::collections::BTreeMap;

/// Every committed entry (from index 1 on), with the earliest term it is known committed in;
/// those terms never decrease with the index.
#[derive(Default)]
pub(super) struct LeaderCompleteness {
    committed: Vec<(Term, Mirrored)>,
    leaders: BTreeMap<NodeId, Term>,
}

impl LeaderCompleteness {
    /// `node` is no longer leader (a role change or a restart).
    pub fn on_not_leader(&mut self, node: NodeId) {
        self.leaders.remove(&node);
    }

    /// `node` became leader of `term`: its log must hold every entry committed before `term`.
    pub fn on_leader(&mut self, node: NodeId, term: Term, logs: &LogMirrors) -> Result<(), String> {
        self.leaders.insert(node, term);
        let before = self
            .committed
            .partition_point(|(in_term, _)| *in_term < term);
        let Some(highest) = before.checked_sub(1) else {
            return Ok(());
        };
        let index = LogIndex(highest as u64 + 1);
        let (in_term, entry) = self.committed[highest];
        if logs.entry(node, index) == Some(entry) {
            Ok(())
        } else {
            Err(format!(
                "Leader Completeness: {node} became leader of {term} without the entry committed \
                 at {index} (in {in_term} or earlier)"
            ))
        }
    }

    /// The highest index known committed, and the entry there.
    pub fn highest(&self) -> Option<(LogIndex, Mirrored)> {
        let (_, entry) = *self.committed.last()?;
        Some((LogIndex(self.committed.len() as u64), entry))
    }

    /// The committed entry at `index`, if known.
    pub fn committed_at(&self, index: LogIndex) -> Option<Mirrored> {
        let position = usize::try_from(index.0.checked_sub(1)?).ok()?;
        self.committed.get(position).map(|&(_, entry)| entry)
    }

    /// The committed entries from index 1 up to `index`, if every one of them is known.
    pub fn committed_upto(&self, index: LogIndex) -> Option<Vec<Mirrored>> {
        let len = usize::try_from(index.0).ok()?;
        let prefix = self.committed.get(..len)?;
        Some(prefix.iter().map(|&(_, entry)| entry).collect())
    }

    /// `node`, in `term`, advanced its commit index to `commit`: the entries up to it are
    /// committed in `term` or earlier, and every leader of a later term must hold them.
    pub fn on_commit(
        &mut self,
        node: NodeId,
        term: Term,
        commit: LogIndex,
        logs: &LogMirrors,
    ) -> Result<(), String> {
        let commit_len = commit.0 as usize;
        for position in self.committed.len()..commit_len {
            let index = LogIndex(position as u64 + 1);
            // A node reports every change to its log before it reports a commit that covers it
            // (an effect of the same step, or of an earlier one): a committed entry the mirror
            // lacks is a log change that went unreported, and would leave the log invariants
            // checking nothing.
            let Some(entry) = logs.entry(node, index) else {
                return Err(format!(
                    "{node} commits up to {commit}, but its reported log has no entry {index}: a \
                     log change went unreported"
                ));
            };
            self.committed.push((term, entry));
        }
        for (in_term, _) in self.committed[..commit_len].iter_mut().rev() {
            if *in_term <= term {
                break;
            }
            *in_term = term;
        }
        let (_, entry) = self.committed[commit_len - 1];
        for (&leader, &leader_term) in &self.leaders {
            if leader_term > term && logs.entry(leader, commit) != Some(entry) {
                return Err(format!(
                    "Leader Completeness: {leader}, leader of {leader_term}, lacks the entry \
                     committed at {commit} in {term} or earlier"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::super::log_mirror::logged;
    use super::*;

    #[test]
    fn a_leader_elected_without_a_committed_entry_is_a_violation() {
        let mut logs = LogMirrors::default();
        let mut property = LeaderCompleteness::default();
        logs.on_changed(NodeId(0), None, &[logged(1, 1, 10), logged(2, 1, 11)]);
        logs.on_changed(NodeId(1), None, &[logged(1, 1, 10)]);
        property
            .on_commit(NodeId(0), Term(1), LogIndex(2), &logs)
            .expect("nothing to compare yet");
        // n1 lacks #2, committed in t1: it may not lead t2 ...
        let violation = property.on_leader(NodeId(1), Term(2), &logs).unwrap_err();
        assert!(
            violation.contains("n1 became leader of t2 without the entry committed at #2"),
            "{violation}"
        );
        // ... while a node that holds it may.
        assert!(property.on_leader(NodeId(0), Term(3), &logs).is_ok());
    }

    #[test]
    fn a_commit_seen_late_is_checked_against_the_leaders_of_later_terms_only() {
        let mut logs = LogMirrors::default();
        let mut property = LeaderCompleteness::default();
        logs.on_changed(NodeId(0), None, &[logged(1, 3, 10)]);
        logs.on_changed(NodeId(1), None, &[logged(1, 2, 99)]);
        // n1 leads t2 and has a different #1: fine, as long as #1 was committed after t2.
        assert!(property.on_leader(NodeId(1), Term(2), &logs).is_ok());
        assert!(property
            .on_commit(NodeId(0), Term(3), LogIndex(1), &logs)
            .is_ok());
        // A leader of t4 without it is not.
        logs.on_changed(NodeId(2), None, &[logged(1, 2, 99)]);
        assert!(property.on_leader(NodeId(2), Term(4), &logs).is_err());
    }

    #[test]
    fn a_commit_beyond_the_reported_log_is_a_violation() {
        // Without log events the log invariants would compare nothing and always pass.
        let mut logs = LogMirrors::default();
        let mut property = LeaderCompleteness::default();
        logs.on_changed(NodeId(0), None, &[logged(1, 1, 10)]);
        let violation = property
            .on_commit(NodeId(0), Term(1), LogIndex(2), &logs)
            .unwrap_err();
        assert!(
            violation.contains("n0 commits up to #2, but its reported log has no entry #2"),
            "{violation}"
        );
    }
}
