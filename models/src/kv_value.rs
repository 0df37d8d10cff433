//! [`KvValue`]: one key's value as the checker keeps it, a persistent chain of appends. An append
//! makes a new link that points at the value it extends, so the many values a search reaches
//! share their common prefixes: each costs its own suffix, not its whole length (a key appended
//! to 20,000 times kept a copy of every value it reached, quadratic in bytes). Equality and hashing
//! are exact: a link caches its length and a rolling hash of its bytes, so unequal values almost
//! always differ at once, and equal ones are compared byte by byte, stopping where both reach the
//! same shared link.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A key's value: empty, or the last link of a chain.
#[derive(Clone, Default)]
pub struct KvValue(Option<Arc<Link>>);

/// One put (a chain's first link) or append.
struct Link {
    /// The value this link extends (empty for a put).
    before: KvValue,
    /// The bytes it adds.
    bytes: Box<str>,
    /// The whole value's length in bytes.
    len: usize,
    /// A polynomial hash of the whole value, modulo 2^64.
    hash: u64,
}

/// The rolling hash's base (odd).
const BASE: u64 = 0x100_0000_01b3;

/// `hash` of a value extended by `bytes` (the hash of the empty value is 0).
pub(crate) fn extend_hash(mut hash: u64, bytes: &[u8]) -> u64 {
    for &byte in bytes {
        hash = hash.wrapping_mul(BASE).wrapping_add(u64::from(byte) + 1);
    }
    hash
}

impl KvValue {
    /// The value `text`, as a put leaves it.
    pub fn of(text: &str) -> KvValue {
        KvValue::default().append(text)
    }

    /// This value followed by `suffix`.
    pub fn append(&self, suffix: &str) -> KvValue {
        if suffix.is_empty() {
            return self.clone();
        }
        KvValue(Some(Arc::new(Link {
            before: self.clone(),
            bytes: suffix.into(),
            len: self.len() + suffix.len(),
            hash: extend_hash(self.rolling_hash(), suffix.as_bytes()),
        })))
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |link| link.len)
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A polynomial hash of its bytes ([`extend_hash`] from 0): equal values have equal hashes.
    pub(crate) fn rolling_hash(&self) -> u64 {
        self.0.as_ref().map_or(0, |link| link.hash)
    }

    /// The bytes this value's last link holds (what keeping it costs beyond the value it
    /// extends, which it shares).
    pub fn own_bytes(&self) -> usize {
        self.0
            .as_ref()
            .map_or(0, |link| link.bytes.len() + std::mem::size_of::<Link>())
    }

    /// Whether `text` starts with this value.
    pub fn is_prefix_of(&self, text: &str) -> bool {
        self.len() <= text.len() && self.matches(&text.as_bytes()[..self.len()])
    }

    /// Whether this value is exactly `bytes` (compared from the end, link by link).
    fn matches(&self, mut bytes: &[u8]) -> bool {
        if bytes.len() != self.len() {
            return false;
        }
        let mut link = self.0.as_deref();
        while let Some(current) = link {
            let own = current.bytes.as_bytes();
            let Some(rest) = bytes.strip_suffix(own) else {
                return false;
            };
            bytes = rest;
            link = current.before.0.as_deref();
        }
        bytes.is_empty()
    }

    /// The whole value as a string (for reports).
    pub fn to_text(&self) -> String {
        let mut parts = Vec::new();
        let mut link = self.0.as_deref();
        while let Some(current) = link {
            parts.push(&*current.bytes);
            link = current.before.0.as_deref();
        }
        parts.iter().rev().copied().collect()
    }
}

impl PartialEq for KvValue {
    fn eq(&self, other: &KvValue) -> bool {
        if self.len() != other.len() || self.rolling_hash() != other.rolling_hash() {
            return false;
        }
        // Walk both chains from the end over their bytes, stopping where they share a link.
        let (mut mine, mut theirs) = (self.0.as_deref(), other.0.as_deref());
        let (mut my_rest, mut their_rest): (&[u8], &[u8]) = (&[], &[]);
        loop {
            if my_rest.is_empty() {
                match mine {
                    Some(link) => {
                        if let Some(other_link) = theirs {
                            if their_rest.is_empty() && std::ptr::eq(link, other_link) {
                                return true;
                            }
                        }
                        my_rest = link.bytes.as_bytes();
                        mine = link.before.0.as_deref();
                    }
                    None => return their_rest.is_empty() && theirs.is_none(),
                }
            }
            if their_rest.is_empty() {
                match theirs {
                    Some(link) => {
                        their_rest = link.bytes.as_bytes();
                        theirs = link.before.0.as_deref();
                    }
                    None => return false,
                }
            }
            let common = my_rest.len().min(their_rest.len());
            let (my_head, my_tail) = my_rest.split_at(my_rest.len() - common);
            let (their_head, their_tail) = their_rest.split_at(their_rest.len() - common);
            if my_tail != their_tail {
                return false;
            }
            my_rest = my_head;
            their_rest = their_head;
        }
    }
}

impl Eq for KvValue {}

impl PartialEq<str> for KvValue {
    fn eq(&self, text: &str) -> bool {
        self.matches(text.as_bytes())
    }
}

impl Hash for KvValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        state.write_u64(self.rolling_hash());
    }
}

impl fmt::Debug for KvValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_text(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn hash_of(value: &KvValue) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn values_built_by_different_appends_are_equal_exactly_when_their_text_is() {
        let base = KvValue::of("x");
        let one = base.append("ab").append("c");
        let two = base.append("a").append("bc");
        let three = KvValue::of("xabc");
        for (a, b) in [(&one, &two), (&one, &three), (&two, &three)] {
            assert_eq!(a, b);
            assert_eq!(hash_of(a), hash_of(b));
        }
        assert_ne!(one, base.append("abd"));
        assert_ne!(one, base.append("ab"));
        assert!(one == *"xabc");
        assert!(one != *"xabd");
        assert_eq!(one.to_text(), "xabc");
        assert_eq!(KvValue::default(), KvValue::of(""));
        assert!(KvValue::default() == *"");
    }

    #[test]
    fn a_prefix_is_recognised_whatever_the_links() {
        let value = KvValue::of("12").append(" 3");
        assert!(value.is_prefix_of("12 3"));
        assert!(value.is_prefix_of("12 3 4"));
        assert!(!value.is_prefix_of("12 4"));
        assert!(!value.is_prefix_of("12"));
        assert!(KvValue::default().is_prefix_of(""));
    }

    #[test]
    fn equal_texts_from_random_splits_compare_equal_and_others_do_not() {
        let mut seed = 7u64;
        let mut next = |bound: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % bound
        };
        for _ in 0..2_000 {
            let text: String = (0..next(12))
                .map(|_| char::from(b'a' + next(3) as u8))
                .collect();
            let split = |next: &mut dyn FnMut(usize) -> usize| {
                let mut value = KvValue::default();
                let mut at = 0;
                while at < text.len() {
                    let end = (at + 1 + next(4)).min(text.len());
                    value = value.append(&text[at..end]);
                    at = end;
                }
                value
            };
            let (a, b) = (split(&mut next), split(&mut next));
            assert_eq!(a, b, "{text:?}");
            assert!(a == *text.as_str());
            let other: String = (0..next(12))
                .map(|_| char::from(b'a' + next(3) as u8))
                .collect();
            assert_eq!(
                a == KvValue::of(&other),
                text == other,
                "{text:?} {other:?}"
            );
        }
    }
}
