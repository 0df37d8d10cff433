//! [`Digest`]: a stable 64-bit fingerprint (FNV-1a) of what a run did, to compare two runs.
//!
//! Stable across processes, machines and releases (no random seed, unlike `std`'s hasher), so a
//! digest printed by one run can be compared with another's.

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// A running FNV-1a hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(OFFSET)
    }
}

impl Digest {
    /// Adds `bytes`.
    pub fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(PRIME);
        }
    }

    /// Adds a number (its little-endian bytes).
    pub fn write_u64(&mut self, value: u64) {
        self.write(&value.to_le_bytes());
    }

    /// Adds a string and a separator, so `["ab", "c"]` and `["a", "bc"]` differ.
    pub fn write_str(&mut self, text: &str) {
        self.write(text.as_bytes());
        self.write(&[0xff]);
    }

    /// The fingerprint so far.
    pub fn value(&self) -> u64 {
        self.0
    }

    /// A digest whose value so far is `value` (one carried over from another build or process).
    pub fn from_value(value: u64) -> Digest {
        Digest(value)
    }
}

impl std::fmt::Display for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_separated_strings() {
        // FNV-1a 64 of "a" is a published test vector.
        let mut digest = Digest::default();
        digest.write(b"a");
        assert_eq!(digest.value(), 0xaf63_dc4c_8601_ec8c);
        let (mut ab_c, mut a_bc) = (Digest::default(), Digest::default());
        ab_c.write_str("ab");
        ab_c.write_str("c");
        a_bc.write_str("a");
        a_bc.write_str("bc");
        assert_ne!(ab_c, a_bc);
    }
}
