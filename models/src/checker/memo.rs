//! The memo of the search: which (set of linearized operations, state) pairs were reached, with
//! subsumption for operations of unknown outcome.
//!
//! A pair is kept as the digest of the returned operations placed, the state, and the set of
//! unknown-outcome operations placed (a bit mask over their ranks). Reaching the same returned
//! operations and state with a superset of the unknown ones adds nothing: an unknown outcome
//! allows "never", so every continuation of the larger set is a continuation of the smaller one,
//! whose exploration covers it. Lowe's memo is the special case of equal sets.

use super::fold_hasher::FoldHasher;
#[allow(clippy::disallowed_types)] // lookups only: nothing iterates the table
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// The most unknown-outcome operations a partition may have for subsumption; beyond it they
/// count as returned ones in the digest (exact matches only, as in Lowe's memo).
pub const MAX_RANKED_UNKNOWN: usize = 128;

/// The unknown-outcome operations' sets reached with one (returned set, state) pair: one set
/// inline (the common case), more on the heap.
enum Masks {
    One(u128),
    Many(Vec<u128>),
}

/// Reached (returned set, state, unknown set) triples, none a superset of another with the same
/// returned set and state.
#[allow(clippy::disallowed_types)] // see the import
pub struct Memo {
    seen: HashMap<(u128, u32), Masks, BuildHasherDefault<FoldHasher>>,
    entries: usize,
    /// Bytes of the `Many` lists on the heap.
    list_bytes: usize,
}

impl Memo {
    /// An empty memo.
    #[allow(clippy::disallowed_types)] // see the import
    pub fn new() -> Memo {
        Memo {
            seen: HashMap::default(),
            entries: 0,
            list_bytes: 0,
        }
    }

    /// Records reaching `state` with the returned operations of digest `returned` and the
    /// unknown ones of `unknown`; `false` if that adds nothing (the same or a subset of the
    /// unknown ones was reached with them before).
    pub fn visit(&mut self, returned: u128, state: u32, unknown: u128) -> bool {
        let subsumed = |earlier: u128| earlier & !unknown == 0;
        match self.seen.get_mut(&(returned, state)) {
            None => {
                self.seen.insert((returned, state), Masks::One(unknown));
            }
            Some(Masks::One(earlier)) => {
                if subsumed(*earlier) {
                    return false;
                }
                let earlier = *earlier;
                let masks = vec![earlier, unknown];
                self.list_bytes += masks.capacity() * MASK_BYTES;
                self.seen.insert((returned, state), Masks::Many(masks));
            }
            Some(Masks::Many(masks)) => {
                if masks.iter().any(|&earlier| subsumed(earlier)) {
                    return false;
                }
                let before = masks.capacity();
                masks.push(unknown);
                self.list_bytes += (masks.capacity() - before) * MASK_BYTES;
            }
        }
        self.entries += 1;
        true
    }

    /// How many triples it holds: the search's memory, in the budget's unit.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// The bytes it holds: the table's slots (with their control bytes) and the lists.
    pub fn bytes(&self) -> usize {
        self.seen.capacity() * SLOT_BYTES + self.list_bytes
    }
}

const MASK_BYTES: usize = std::mem::size_of::<u128>();
const SLOT_BYTES: usize = std::mem::size_of::<((u128, u32), Masks)>() + 1;

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::Memo;

    #[test]
    fn a_superset_of_unknown_operations_reached_before_adds_nothing() {
        let mut memo = Memo::new();
        assert!(memo.visit(7, 1, 0b0101));
        assert!(!memo.visit(7, 1, 0b0101), "the same triple");
        assert!(!memo.visit(7, 1, 0b1101), "a superset");
        assert!(memo.visit(7, 1, 0b0001), "a subset is new");
        assert!(!memo.visit(7, 1, 0b0011), "a superset of the subset");
        assert!(memo.visit(7, 2, 0b1101), "another state");
        assert!(memo.visit(8, 1, 0b1101), "other returned operations");
        assert_eq!(memo.len(), 4);
    }

    #[test]
    fn its_bytes_grow_with_what_it_holds() {
        let mut memo = Memo::new();
        let empty = memo.bytes();
        for returned in 0..1000 {
            memo.visit(returned, 0, 0);
        }
        let pairs = memo.bytes();
        assert!(pairs >= empty + 1000 * 48, "{pairs} bytes for 1000 pairs");
        assert!(memo.visit(5000, 0, 0b10));
        assert!(memo.visit(5000, 0, 0b100));
        assert!(memo.bytes() > pairs, "a list of unknown sets is counted");
    }
}
