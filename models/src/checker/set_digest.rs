//! A 128-bit digest of the set of linearized operations, updated in constant time as operations
//! are placed and taken back (Zobrist hashing: the exclusive or of one random key per member).
//!
//! The memo keeps these digests instead of the sets: 16 bytes per entry whatever the history's
//! length, where a bit set costs one bit per operation (a sequential history of 100,000
//! operations needed 1.3 GB). Two different sets get the same digest only if the exclusive or of
//! the keys of the operations in one but not the other is zero: for a fixed pair, a chance of
//! 2^-128 with keys drawn uniformly. Over a memo of `n` entries the chance that any two collide is
//! below n^2 / 2^129: about 10^-25 at the largest memo the command line allows a partition
//! by default (5 million entries). A collision would make the search skip a branch it had not
//! seen; the brute-force differential tests judge the search with digests like any other change.

/// The keys of every operation of one partition, and the digest of the current set.
pub struct SetDigest {
    keys: Vec<u128>,
    digest: u128,
}

impl SetDigest {
    /// The digest of the empty set over operations `0..count`. The keys are a fixed function of
    /// the index, so a check is the same on every run.
    pub fn new(count: usize) -> SetDigest {
        let keys = (0..count as u64)
            .map(|index| {
                let high = u128::from(mix(2 * index));
                let low = u128::from(mix(2 * index + 1));
                (high << 64) | low
            })
            .collect();
        SetDigest { keys, digest: 0 }
    }

    /// Adds `index` to the set, or takes it out if it is in (the same operation both ways).
    pub fn toggle(&mut self, index: usize) {
        self.digest ^= self.keys[index];
    }

    /// The current set's digest.
    pub fn digest(&self) -> u128 {
        self.digest
    }
}

/// SplitMix64's output function over a counter: well-spread 64-bit keys.
fn mix(counter: u64) -> u64 {
    let mut z = counter.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::SetDigest;

    #[test]
    fn the_digest_depends_on_the_set_not_the_order_it_was_built_in() {
        let mut one = SetDigest::new(100);
        let mut other = SetDigest::new(100);
        for index in [3, 50, 99] {
            one.toggle(index);
        }
        for index in [99, 7, 3, 50, 7] {
            other.toggle(index);
        }
        assert_eq!(one.digest(), other.digest());
        one.toggle(50);
        assert_ne!(one.digest(), other.digest());
        one.toggle(50);
        assert_eq!(one.digest(), other.digest());
    }

    #[test]
    fn small_sets_all_have_distinct_digests() {
        // Every set of at most two of 300 operations: 45,151 digests, no two equal.
        let mut digests = std::collections::BTreeSet::new();
        let mut set = SetDigest::new(300);
        assert!(digests.insert(set.digest()));
        for a in 0..300 {
            set.toggle(a);
            assert!(digests.insert(set.digest()));
            for b in a + 1..300 {
                set.toggle(b);
                assert!(digests.insert(set.digest()), "{{{a}, {b}}}");
                set.toggle(b);
            }
            set.toggle(a);
        }
    }
}
