//! [`Digest`]: a stable 64-bit fingerprint (FNV-1a) of what a run did, to compare two runs.
//!
//! Stable across processes, machines and releases (no random seed, unlike `std`'s hasher), so a
//! digest printed by one run can be compared with another's.

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;
/// The multiplier of [`Digest::write_text`]'s words (the 64-bit golden ratio, odd).
const WORD_PRIME: u64 = 0x9e37_79b9_7f4a_7c15;

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

    /// Adds a string of any length quickly: its length, then its bytes eight at a time (a
    /// multiply and a shift a word, where [`write_str`](Self::write_str) multiplies a byte).
    /// Stable as the rest, but not the fingerprint `write_str` gives the same text: for
    /// fingerprints of large states (a state machine's, at each snapshot), compared only with
    /// others made the same way.
    pub fn write_text(&mut self, text: &str) {
        let bytes = text.as_bytes();
        self.write_u64(bytes.len() as u64);
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.mix_word(u64::from_le_bytes(word.try_into().expect("eight bytes")));
        }
        let mut tail = [0u8; 8];
        tail[..words.remainder().len()].copy_from_slice(words.remainder());
        self.mix_word(u64::from_le_bytes(tail));
    }

    fn mix_word(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(WORD_PRIME);
        self.0 ^= self.0 >> 29;
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
    fn texts_written_by_words_are_separated_and_every_byte_counts() {
        let digest = |texts: &[&str]| {
            let mut digest = Digest::default();
            for text in texts {
                digest.write_text(text);
            }
            digest.value()
        };
        assert_ne!(digest(&["ab", "c"]), digest(&["a", "bc"]));
        assert_ne!(digest(&["abcdefgh"]), digest(&["abcdefgh", ""]));
        let long = "0123456789abcdef".repeat(8);
        for at in 0..long.len() {
            let mut changed = long.clone().into_bytes();
            changed[at] ^= 1;
            let changed = String::from_utf8(changed).unwrap();
            assert_ne!(digest(&[&long]), digest(&[&changed]), "byte {at}");
        }
        assert_eq!(digest(&[&long]), digest(&[&long]));
    }

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
