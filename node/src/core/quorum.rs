//! Majority arithmetic, in one place: votes, commits, check-quorum and ReadIndex confirmation all
//! ask the same question (do these nodes, counting this one, form a majority of the cluster?).

/// The cluster's size and what a majority of it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quorum {
    cluster_size: usize,
    /// The `half-is-majority` broken variant: half of an even cluster counts.
    half_is_majority: bool,
}

impl Quorum {
    /// A cluster of `peers` other nodes plus this one.
    pub fn of_peers(peers: usize) -> Quorum {
        Quorum {
            cluster_size: peers + 1,
            half_is_majority: false,
        }
    }

    /// The same cluster, counting half of it as a majority (the `half-is-majority` variant).
    pub(crate) fn with_half_as_majority(self) -> Quorum {
        Quorum {
            half_is_majority: true,
            ..self
        }
    }

    /// Nodes in the cluster, this one included.
    pub fn cluster_size(&self) -> usize {
        self.cluster_size
    }

    /// Whether `count` nodes (this one included, if it counts) are more than half the cluster.
    pub fn is_majority(&self, count: usize) -> bool {
        2 * count > self.cluster_size || (self.half_is_majority && 2 * count == self.cluster_size)
    }

    /// The fewest nodes that form a majority.
    pub fn majority(&self) -> usize {
        self.cluster_size / 2 + 1
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_majority_is_more_than_half_in_odd_and_even_clusters() {
        for (size, majority) in [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4)] {
            let quorum = Quorum::of_peers(size - 1);
            assert_eq!(quorum.cluster_size(), size);
            assert_eq!(quorum.majority(), majority, "cluster of {size}");
            assert!(quorum.is_majority(majority), "cluster of {size}");
            assert!(!quorum.is_majority(majority - 1), "cluster of {size}");
        }
        // Half of an even cluster is not a majority: two halves could each elect a leader.
        assert!(!Quorum::of_peers(3).is_majority(2));
    }

    #[test]
    fn the_broken_variant_counts_half_of_an_even_cluster_and_nothing_else_changes() {
        let broken = Quorum::of_peers(3).with_half_as_majority();
        assert!(broken.is_majority(2));
        // Exactly half, in every even size: 3 of 6, and not 2 of 6.
        let six = Quorum::of_peers(5).with_half_as_majority();
        assert!(six.is_majority(3));
        assert!(!six.is_majority(2));
        let odd = Quorum::of_peers(4).with_half_as_majority();
        for count in 0..=5 {
            assert_eq!(
                odd.is_majority(count),
                Quorum::of_peers(4).is_majority(count)
            );
        }
    }
}
