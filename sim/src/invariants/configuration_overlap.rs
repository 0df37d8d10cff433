//! **Configuration overlap** (Raft thesis §4.1, §4.3): two configurations in use never have
//! majorities that share no node. Were there two, each could elect a leader of one term, or
//! commit without the other. Checked on every change of any node's log and every commit.
//!
//! A configuration is *in use* while a node follows it and it can still decide something. A
//! node follows the latest configuration in its log (the one its snapshot covers, or the
//! bootstrap one, when its log holds none). That configuration can no longer decide anything
//! when a later configuration is committed (it was superseded), or when it sits in a part of the
//! node's log that disagrees with the committed log (a leader of a later term replaced it, so
//! it can never commit). Single-server changes, one at a time, each after the leader's own
//! first commit, keep every two configurations in use within one voter of each other.

use node::{LogIndex, Membership, NodeId, Term};
use std::collections::BTreeMap;

/// One configuration entry of a log.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    index: LogIndex,
    term: Term,
    membership: Membership,
}

/// Every node's configuration entries, and the committed ones.
#[derive(Default)]
pub(super) struct ConfigurationOverlap {
    /// The configuration before the first entry (`None`: no configuration is known, and
    /// nothing is checked until the harness says).
    bootstrap: Option<Membership>,
    /// Each node's configuration entries, in its log's order. Entries a compaction dropped
    /// stay: the node still follows the last of them.
    logs: BTreeMap<NodeId, Vec<Entry>>,
    /// The configuration entries known committed, in order.
    committed: Vec<Entry>,
}

impl ConfigurationOverlap {
    /// The cluster starts in `bootstrap`.
    pub fn set_bootstrap(&mut self, bootstrap: Membership) {
        self.bootstrap = Some(bootstrap);
    }

    /// A new instance of `node` starts: its restored log follows as events.
    pub fn on_restart(&mut self, node: NodeId) {
        self.logs.insert(node, Vec::new());
    }

    /// `node`'s log lost its entries from `truncated_from` on and gained `appended`, of which
    /// `configurations` are configurations (with their terms).
    pub fn on_log_changed(
        &mut self,
        node: NodeId,
        truncated_from: Option<LogIndex>,
        configurations: &[(LogIndex, Term, Membership)],
    ) {
        let log = self.logs.entry(node).or_default();
        if let Some(from) = truncated_from {
            log.retain(|entry| entry.index < from);
        }
        log.extend(
            configurations
                .iter()
                .map(|(index, term, membership)| Entry {
                    index: *index,
                    term: *term,
                    membership: membership.clone(),
                }),
        );
    }

    /// `node`'s log now starts after a snapshot up to `index` from a leader, its entries after
    /// it gone (a restarted node's own snapshot, or a leader's that replaced its log): it
    /// follows the configuration committed there.
    pub fn on_log_replaced_by_snapshot(&mut self, node: NodeId, index: LogIndex) {
        let committed: Vec<Entry> = (self.committed.iter())
            .filter(|entry| entry.index <= index)
            .cloned()
            .collect();
        self.logs.insert(node, committed);
    }

    /// `node` compacted its log up to `index`: nothing changes for a running node (it follows
    /// the same configuration), but a restarted one, whose log starts there, follows the one
    /// committed there until its entries after it say otherwise.
    pub fn on_compacted(&mut self, node: NodeId, index: LogIndex) {
        if self.logs.get(&node).is_none_or(Vec::is_empty) {
            self.on_log_replaced_by_snapshot(node, index);
        }
    }

    /// `node` committed up to `commit`: its configuration entries up to there are committed.
    pub fn on_commit(&mut self, node: NodeId, commit: LogIndex) {
        let Some(log) = self.logs.get(&node) else {
            return;
        };
        for entry in log.iter().filter(|entry| entry.index <= commit) {
            if self
                .committed
                .last()
                .is_none_or(|last| last.index < entry.index)
            {
                self.committed.push(entry.clone());
            }
        }
    }

    /// The violation, if two configurations in use have majorities that share no node.
    /// `agrees(node, index)` says whether `node`'s log holds the committed entry at `index`;
    /// `commit` is the highest index known committed.
    pub fn check(
        &self,
        commit: LogIndex,
        agrees: impl Fn(NodeId, LogIndex) -> bool,
    ) -> Result<(), String> {
        let Some(bootstrap) = &self.bootstrap else {
            return Ok(());
        };
        let superseded_before = self.committed.last().map_or(LogIndex(0), |last| last.index);
        let in_use: Vec<(NodeId, Option<&Entry>, &Membership)> = (self.logs.iter())
            .filter_map(|(&node, log)| {
                let Some(entry) = log.last() else {
                    return (superseded_before == LogIndex(0)).then_some((node, None, bootstrap));
                };
                let live =
                    entry.index >= superseded_before && agrees(node, entry.index.min(commit));
                live.then_some((node, Some(entry), &entry.membership))
            })
            .collect();
        for (position, (a, a_entry, a_config)) in in_use.iter().enumerate() {
            for (b, b_entry, b_config) in &in_use[position + 1..] {
                if a_config == b_config {
                    continue;
                }
                if let Some((left, right)) = disjoint_majorities(a_config, b_config) {
                    let at = |entry: &Option<&Entry>| {
                        entry.map_or_else(
                            || "the bootstrap one".to_string(),
                            |entry| format!("#{} of {}", entry.index.0, entry.term),
                        )
                    };
                    return Err(format!(
                        "Configuration overlap: {a} follows {a_config} ({}) and {b} follows \
                         {b_config} ({}): the majorities {} and {} share no node",
                        at(a_entry),
                        at(b_entry),
                        names(&left),
                        names(&right)
                    ));
                }
            }
        }
        Ok(())
    }
}

fn names(nodes: &[NodeId]) -> String {
    let names: Vec<String> = nodes.iter().map(|node| node.to_string()).collect();
    format!("[{}]", names.join(" "))
}

/// A majority of `a`'s voters and one of `b`'s that share no node, if there are any: each
/// takes the voters the other lacks first, and the shared ones only as it must.
fn disjoint_majorities(a: &Membership, b: &Membership) -> Option<(Vec<NodeId>, Vec<NodeId>)> {
    let majority = |m: &Membership| m.voters().len() / 2 + 1;
    let only_a: Vec<NodeId> = a.voters().difference(b.voters()).copied().collect();
    let only_b: Vec<NodeId> = b.voters().difference(a.voters()).copied().collect();
    let shared: Vec<NodeId> = a.voters().intersection(b.voters()).copied().collect();
    let a_needs = majority(a).saturating_sub(only_a.len());
    let b_needs = majority(b).saturating_sub(only_b.len());
    if a_needs + b_needs > shared.len() {
        return None;
    }
    let mut left: Vec<NodeId> = only_a.into_iter().take(majority(a)).collect();
    left.extend(&shared[..a_needs]);
    let mut right: Vec<NodeId> = only_b.into_iter().take(majority(b)).collect();
    right.extend(&shared[a_needs..a_needs + b_needs]);
    Some((left, right))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn voters(ids: &[u32]) -> Membership {
        Membership::of_voters(ids.iter().copied().map(NodeId))
    }

    #[test]
    fn configurations_one_voter_apart_always_overlap_and_two_apart_need_not() {
        assert_eq!(
            disjoint_majorities(&voters(&[0, 1, 2]), &voters(&[0, 1, 2, 3])),
            None
        );
        assert_eq!(
            disjoint_majorities(&voters(&[0, 1, 2]), &voters(&[0, 1])),
            None
        );
        // The raft-dev 2015 case: {1..4} + n5 on one side, {1..4} - n1 on the other.
        let grown = voters(&[1, 2, 3, 4, 5]);
        let shrunk = voters(&[2, 3, 4]);
        let (left, right) = disjoint_majorities(&grown, &shrunk).expect("disjoint");
        assert!(left.iter().all(|node| !right.contains(node)));
        assert_eq!((left.len(), right.len()), (3, 2));
        assert!(disjoint_majorities(&voters(&[0, 1, 2]), &voters(&[0, 3, 4])).is_some());
    }

    #[test]
    fn a_superseded_or_overwritten_configuration_is_not_in_use() {
        let mut overlap = ConfigurationOverlap::default();
        overlap.set_bootstrap(voters(&[1, 2, 3, 4]));
        for node in 1..=5 {
            overlap.on_restart(NodeId(node));
        }
        let grown = (LogIndex(2), Term(1), voters(&[1, 2, 3, 4, 5]));
        overlap.on_log_changed(NodeId(1), None, std::slice::from_ref(&grown));
        overlap.on_log_changed(NodeId(5), None, std::slice::from_ref(&grown));
        let everyone_agrees = |_: NodeId, _: LogIndex| true;
        overlap
            .check(LogIndex(1), everyone_agrees)
            .expect("one voter apart");
        // n2, leading term 2 without an entry of its own committed, removes n1.
        let shrunk = (LogIndex(2), Term(2), voters(&[2, 3, 4]));
        overlap.on_log_changed(NodeId(2), None, std::slice::from_ref(&shrunk));
        let violation = overlap.check(LogIndex(1), everyone_agrees).unwrap_err();
        assert!(violation.contains("share no node"), "{violation}");
        // Had n2 committed an entry of its term at #2 first, n1's #2 could never commit.
        let n1_and_n5_disagree = |node: NodeId, index: LogIndex| {
            !(index == LogIndex(2) && (node == NodeId(1) || node == NodeId(5)))
        };
        overlap
            .check(LogIndex(2), n1_and_n5_disagree)
            .expect("n1's change is dead");
    }
}
