//! A fixed-size bit set: which operations are linearized.

/// A set of operation indices below a fixed bound.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bitset {
    words: Box<[u64]>,
}

impl Bitset {
    /// An empty set for indices below `bound`.
    pub fn new(bound: usize) -> Bitset {
        Bitset {
            words: vec![0; bound.div_ceil(64).max(1)].into_boxed_slice(),
        }
    }

    /// Adds `index`.
    pub fn set(&mut self, index: usize) {
        self.words[index / 64] |= 1 << (index % 64);
    }

    /// Removes `index`.
    pub fn clear(&mut self, index: usize) {
        self.words[index / 64] &= !(1 << (index % 64));
    }

    /// Whether `index` is in the set.
    pub fn contains(&self, index: usize) -> bool {
        self.words[index / 64] & (1 << (index % 64)) != 0
    }

    /// A 64-bit digest of the set's contents.
    pub fn digest(&self) -> u64 {
        self.words
            .iter()
            .fold(0x9e37_79b9_7f4a_7c15u64, |hash, &word| {
                (hash.rotate_left(5) ^ word).wrapping_mul(0x5851_f42d_4c95_7f2d)
            })
    }

    /// The words, for hashing and comparison.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn set_clear_contains() {
        let mut bits = Bitset::new(130);
        bits.set(0);
        bits.set(129);
        assert!(bits.contains(0) && bits.contains(129) && !bits.contains(64));
        let digest = bits.digest();
        bits.clear(129);
        assert!(!bits.contains(129));
        assert_ne!(bits.digest(), digest);
    }
}
