//! [`FoldHasher`]: the fast, deterministic hasher of the search's tables.

use std::hash::Hasher;

/// A fast, deterministic hasher for the memo (keys are already well mixed).
#[derive(Default)]
pub struct FoldHasher(u64);

impl Hasher for FoldHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x5851_f42d_4c95_7f2d);
    }
    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }
    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }
}

/// A hash table that is looked up and never iterated, so its order cannot reach a result, with
/// the fast deterministic hasher.
#[allow(clippy::disallowed_types)] // lookups only: nothing iterates it
pub(crate) type LookupTable<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FoldHasher>>;
