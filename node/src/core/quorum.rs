//! Majority arithmetic, in one place: votes, commits, check-quorum and ReadIndex confirmation all
//! ask the same question (do these nodes form a majority of the voters?). Only voters count: a
//! learner's copy or answer, or a node outside the configuration, adds nothing.

use crate::NodeId;
use std::collections::BTreeSet;

/// The voters of the configuration in force, and what a majority of them is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quorum {
    voters: BTreeSet<NodeId>,
    /// The `half-is-majority` broken variant: half of an even cluster counts.
    half_is_majority: bool,
    /// Nodes counted though they do not vote (the `learner-counted` and
    /// `removed-votes-counted` broken variants; empty otherwise).
    also_counted: BTreeSet<NodeId>,
}

impl Quorum {
    /// The majorities of `voters`.
    pub fn of_voters(voters: &BTreeSet<NodeId>) -> Quorum {
        assert!(!voters.is_empty(), "a configuration without voters");
        Quorum {
            voters: voters.clone(),
            half_is_majority: false,
            also_counted: BTreeSet::new(),
        }
    }

    /// The same voters, counting half of them as a majority (the `half-is-majority` variant).
    pub(crate) fn with_half_as_majority(self) -> Quorum {
        Quorum {
            half_is_majority: true,
            ..self
        }
    }

    /// The same voters, counting `nodes` too though they do not vote (the `learner-counted`
    /// and `removed-votes-counted` variants).
    pub(crate) fn also_counting(mut self, nodes: impl IntoIterator<Item = NodeId>) -> Quorum {
        self.also_counted.extend(nodes);
        self
    }

    /// The voters.
    pub fn voters(&self) -> &BTreeSet<NodeId> {
        &self.voters
    }

    /// How many vote.
    pub fn cluster_size(&self) -> usize {
        self.voters.len()
    }

    /// Whether `node`'s vote, copy or answer counts toward a majority.
    pub fn is_counted(&self, node: NodeId) -> bool {
        self.voters.contains(&node) || self.also_counted.contains(&node)
    }

    /// Whether `nodes` (each counted once; those that do not vote not at all) are a majority of
    /// the voters.
    pub fn counts(&self, nodes: impl IntoIterator<Item = NodeId>) -> bool {
        let counted: BTreeSet<NodeId> = nodes
            .into_iter()
            .filter(|&node| self.is_counted(node))
            .collect();
        self.is_majority(counted.len())
    }

    /// Whether `count` voters are more than half of them.
    pub fn is_majority(&self, count: usize) -> bool {
        let size = self.cluster_size();
        2 * count > size || (self.half_is_majority && 2 * count == size)
    }

    /// The fewest voters that form a majority.
    pub fn majority(&self) -> usize {
        self.cluster_size() / 2 + 1
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn voters(count: u32) -> Quorum {
        Quorum::of_voters(&(0..count).map(NodeId).collect())
    }

    #[test]
    fn a_majority_is_more_than_half_in_odd_and_even_clusters() {
        for (size, majority) in [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4)] {
            let quorum = voters(size);
            assert_eq!(quorum.cluster_size(), size as usize);
            assert_eq!(quorum.majority(), majority, "cluster of {size}");
            assert!(quorum.is_majority(majority), "cluster of {size}");
            assert!(!quorum.is_majority(majority - 1), "cluster of {size}");
        }
        // Half of an even cluster is not a majority: two halves could each elect a leader.
        assert!(!voters(4).is_majority(2));
    }

    #[test]
    fn only_voters_count_and_each_once() {
        let quorum = voters(3);
        assert!(quorum.counts([NodeId(0), NodeId(2)]));
        assert!(!quorum.counts([NodeId(0), NodeId(0)]), "counted once");
        assert!(!quorum.counts([NodeId(0), NodeId(7)]), "n7 does not vote");
        assert!(quorum
            .also_counting([NodeId(7)])
            .counts([NodeId(0), NodeId(7)]));
    }

    #[test]
    fn the_broken_variant_counts_half_of_an_even_cluster_and_nothing_else_changes() {
        let broken = voters(4).with_half_as_majority();
        assert!(broken.is_majority(2));
        // Exactly half, in every even size: 3 of 6, and not 2 of 6.
        let six = voters(6).with_half_as_majority();
        assert!(six.is_majority(3));
        assert!(!six.is_majority(2));
        let odd = voters(5).with_half_as_majority();
        for count in 0..=5 {
            assert_eq!(odd.is_majority(count), voters(5).is_majority(count));
        }
    }
}
