//! A key-value store with get, put and append, checked one key at a time ([`KeyValue`]) or as a
//! whole ([`KvStore`]).
//!
//! A store is linearizable iff the history of each key is, so the checker splits a store history
//! into per-key histories ([`partition_by_key`]) and checks those independently.

use crate::checker::fold_hasher::LookupTable;
use crate::history::{History, Operation, Partition};
use crate::kv_value::{extend_hash, KvValue};
use crate::model::{Model, Pruning};
use std::collections::BTreeMap;

/// Puts by (value length, value hash): (index, call, value) of each.
type PutsByHash<'h> = LookupTable<(usize, u64), Vec<(usize, u64, &'h str)>>;
use std::ops::Range;

/// An operation on a key-value store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KvInput {
    /// Read `key` (the empty string if never written).
    Get(String),
    /// Set `key` to the value.
    Put(String, String),
    /// Append the value to `key`'s value.
    Append(String, String),
}

impl KvInput {
    /// The key it touches.
    pub fn key(&self) -> &str {
        match self {
            KvInput::Get(key) | KvInput::Put(key, _) | KvInput::Append(key, _) => key,
        }
    }
}

/// What a key-value operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KvOutput {
    /// A get saw this value.
    Value(String),
    /// A put or append completed.
    Done,
}

/// One key's specification; the state is the key's value, kept as a chain of the appends that
/// made it ([`KvValue`]), so the values a search reaches share their prefixes.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyValue;

fn apply(value: &str, input: &KvInput) -> (Option<String>, KvOutput) {
    match input {
        KvInput::Get(_) => (None, KvOutput::Value(value.to_string())),
        KvInput::Put(_, new) => (Some(new.clone()), KvOutput::Done),
        // Exactly as long as it needs to be: the checker keeps every value it reaches.
        KvInput::Append(_, suffix) => (Some([value, suffix.as_str()].concat()), KvOutput::Done),
    }
}

fn describe(input: &KvInput, output: Option<&KvOutput>) -> String {
    let call = match input {
        KvInput::Get(key) => format!("get({key:?})"),
        KvInput::Put(key, value) => format!("put({key:?}, {value:?})"),
        KvInput::Append(key, value) => format!("append({key:?}, {value:?})"),
    };
    match output {
        None => format!("{call} -> ?"),
        Some(KvOutput::Value(value)) => format!("{call} -> {value:?}"),
        Some(KvOutput::Done) => call,
    }
}

/// The prefix rule. Values only grow by appends, and a put replaces them, so from here until a
/// get `g`, the key's value is the current value or a pending put's value, followed by appends:
/// `g`'s result must start with one of those. Only puts that can come before `g` count: those
/// called before `g` returned (or at the same time: operations that touch in time count as
/// concurrent). Which puts those are does not depend on the search, so it is worked out once
/// per history; the search then only compares each unplaced get with the current value.
///
/// Checking every unplaced get on every state made the rule cost the number of gets per state,
/// quadratic over a long history of puts that is otherwise searched in a line. It checks every
/// unplaced get that no put could explain (in a history of appends, every get: there the far
/// gets are the ones that cut, since each shows the order of every append before it), and of the
/// others the [`PREFIX_RULE_WINDOW`] unplaced ones that come first in the history (as the search
/// stands; `first_unplaced` follows it forward and back). A rule that checks fewer gets cuts
/// fewer branches and never a wrong one.
struct PrefixRule<'h> {
    gets: Vec<ReturnedGet<'h>>,
    /// Every get's checkpoint hashes, one after the other (one allocation for all the gets).
    hashes: Vec<u64>,
    /// Every get's explaining puts, one after the other.
    explaining: Vec<usize>,
    /// The positions in `gets` of the gets that no put explains.
    unexplained: Vec<usize>,
    /// Where the first unplaced get was at the last check.
    first_unplaced: std::cell::Cell<usize>,
}

/// The puts of one key, by the length and rolling hash of their value, so that the ones a
/// get's value starts with are found by hashing its prefixes of the lengths some put has (each
/// hash extending the last), not by comparing it with every put.
#[derive(Default)]
struct PutsOfKey<'h> {
    /// (length, hash) of a value: the puts of it, as (index, call, value). Looked up, never
    /// iterated.
    by_hash: PutsByHash<'h>,
    lengths: std::collections::BTreeSet<usize>,
}

/// The puts of each key: of one key when the history is one key's (the [`KeyValue`] model's
/// partitions), which spares looking the key up for every operation.
enum PutsByKey<'h> {
    One(PutsOfKey<'h>),
    Many(BTreeMap<&'h str, PutsOfKey<'h>>),
}

impl<'h> PutsByKey<'h> {
    fn of_key(&mut self, key: &'h str) -> &mut PutsOfKey<'h> {
        match self {
            PutsByKey::One(puts) => puts,
            PutsByKey::Many(keys) => keys.entry(key).or_default(),
        }
    }

    fn get(&self, key: &str) -> Option<&PutsOfKey<'h>> {
        match self {
            PutsByKey::One(puts) => Some(puts),
            PutsByKey::Many(keys) => keys.get(key),
        }
    }
}

impl<'h> PutsOfKey<'h> {
    fn insert(&mut self, index: usize, call: u64, value: &'h str) {
        self.lengths.insert(value.len());
        let hash = extend_hash(0, value.as_bytes());
        let puts = self.by_hash.entry((value.len(), hash)).or_default();
        puts.push((index, call, value));
    }

    /// Pushes onto `out` the puts called no later than `ret` whose value `seen` starts with, in
    /// history order, and says where they are.
    fn explaining(&self, seen: &str, ret: u64, out: &mut Vec<usize>) -> Range<usize> {
        let start = out.len();
        let bytes = seen.as_bytes();
        let (mut hash, mut hashed) = (0, 0);
        for &len in self.lengths.iter().take_while(|&&len| len <= bytes.len()) {
            hash = extend_hash(hash, &bytes[hashed..len]);
            hashed = len;
            let Some(puts) = self.by_hash.get(&(len, hash)) else {
                continue;
            };
            out.extend(
                puts.iter()
                    .filter(|&&(_, call, value)| call <= ret && value.as_bytes() == &bytes[..len])
                    .map(|&(index, _, _)| index),
            );
        }
        out[start..].sort_unstable();
        start..out.len()
    }
}

/// How many unplaced gets the prefix rule checks on each state.
const PREFIX_RULE_WINDOW: usize = 8;

/// A get that returned a value, and the puts that could explain it.
struct ReturnedGet<'h> {
    index: usize,
    key: &'h str,
    seen: &'h str,
    /// Where, in the rule's `explaining`, the puts of the same key called no later than the
    /// get returned whose value `seen` starts with are.
    puts: Range<usize>,
    /// Where, in the rule's `hashes`, the rolling hash of each prefix of `seen` whose length is
    /// a multiple of [`CHECKPOINT`] is, so that whether a [`KvValue`] may start `seen` costs
    /// at most that many bytes, not the value's length.
    checkpoints: Range<usize>,
}

/// How far apart the prefix hashes of a get's value are kept.
const CHECKPOINT: usize = 64;

impl ReturnedGet<'_> {
    /// False if `value` does not start `seen`; true if it does, and (rarely, when two hashes
    /// collide) when it does not, which only keeps a branch the rule could have cut.
    /// `hashes` is the rule's, which holds this get's checkpoints.
    fn may_start_with(&self, hashes: &[u64], value: &KvValue) -> bool {
        let len = value.len();
        if len > self.seen.len() {
            return false;
        }
        let at = len / CHECKPOINT;
        let bytes = &self.seen.as_bytes()[at * CHECKPOINT..len];
        extend_hash(hashes[self.checkpoints.start + at], bytes) == value.rolling_hash()
    }
}

/// Pushes onto `hashes` the rolling hash of `text`'s prefixes of every length that is a
/// multiple of [`CHECKPOINT`], and says where they are.
fn push_checkpoints(text: &str, hashes: &mut Vec<u64>) -> Range<usize> {
    let start = hashes.len();
    let mut last = 0;
    hashes.push(last);
    for chunk in text.as_bytes().chunks_exact(CHECKPOINT) {
        last = extend_hash(last, chunk);
        hashes.push(last);
    }
    start..hashes.len()
}

impl<'h> PrefixRule<'h> {
    /// The rule for `operations`, all on one key if `one_key`.
    fn new(operations: &'h [Operation<KvInput, KvOutput>], one_key: bool) -> PrefixRule<'h> {
        let mut puts = if one_key {
            PutsByKey::One(PutsOfKey::default())
        } else {
            PutsByKey::Many(BTreeMap::new())
        };
        for (index, operation) in operations.iter().enumerate() {
            if let KvInput::Put(key, value) = &operation.input {
                puts.of_key(key).insert(index, operation.call, value);
            }
        }
        let mut hashes = Vec::new();
        let mut explaining = Vec::new();
        let gets: Vec<ReturnedGet<'_>> = operations
            .iter()
            .enumerate()
            .filter_map(|(index, operation)| {
                match (&operation.input, operation.output(), operation.ret) {
                    (KvInput::Get(key), Some(KvOutput::Value(seen)), Some(ret)) => {
                        Some(ReturnedGet {
                            index,
                            key,
                            seen,
                            checkpoints: push_checkpoints(seen, &mut hashes),
                            puts: puts.get(key).map_or(0..0, |of_key| {
                                of_key.explaining(seen, ret, &mut explaining)
                            }),
                        })
                    }
                    _ => None,
                }
            })
            .collect();
        let unexplained = (gets.iter().enumerate())
            .filter(|(_, get)| get.puts.is_empty())
            .map(|(at, _)| at)
            .collect();
        PrefixRule {
            gets,
            hashes,
            explaining,
            unexplained,
            first_unplaced: std::cell::Cell::new(0),
        }
    }

    /// `is_prefix(get)`: whether the current value of the get's key may start what it saw.
    fn holds(
        &self,
        is_prefix: impl Fn(&ReturnedGet<'_>) -> bool,
        placed: &dyn Fn(usize) -> bool,
    ) -> bool {
        let mut first = self.first_unplaced.get().min(self.gets.len());
        while first > 0 && !placed(self.gets[first - 1].index) {
            first -= 1;
        }
        while first < self.gets.len() && placed(self.gets[first].index) {
            first += 1;
        }
        self.first_unplaced.set(first);
        let unexplained = self.unexplained.iter().map(|&at| &self.gets[at]);
        unexplained.filter(|get| !placed(get.index)).all(&is_prefix)
            && self.gets[first..]
                .iter()
                .filter(|get| !placed(get.index) && !get.puts.is_empty())
                .take(PREFIX_RULE_WINDOW)
                .all(|get| {
                    is_prefix(get)
                        || self.explaining[get.puts.clone()]
                            .iter()
                            .any(|&put| !placed(put))
                })
    }
}

impl Pruning<KvValue> for PrefixRule<'_> {
    fn can_continue(&self, state: &KvValue, placed: &dyn Fn(usize) -> bool) -> bool {
        self.holds(|get| get.may_start_with(&self.hashes, state), placed)
    }
}

impl Pruning<BTreeMap<String, String>> for PrefixRule<'_> {
    fn can_continue(
        &self,
        state: &BTreeMap<String, String>,
        placed: &dyn Fn(usize) -> bool,
    ) -> bool {
        self.holds(
            |get| {
                get.seen
                    .starts_with(state.get(get.key).map_or("", String::as_str))
            },
            placed,
        )
    }
}

impl Model for KeyValue {
    type State = KvValue;
    type Input = KvInput;
    type Output = KvOutput;

    fn init(&self) -> KvValue {
        KvValue::default()
    }

    fn step(&self, state: &KvValue, input: &KvInput) -> (KvValue, KvOutput) {
        match input {
            KvInput::Get(_) => (state.clone(), KvOutput::Value(state.to_text())),
            KvInput::Put(_, value) => (KvValue::of(value), KvOutput::Done),
            KvInput::Append(_, suffix) => (state.append(suffix), KvOutput::Done),
        }
    }

    fn accept(&self, state: &KvValue, input: &KvInput, observed: &KvOutput) -> Option<KvValue> {
        // Avoids building the output string of a get just to compare it.
        match (input, observed) {
            (KvInput::Get(_), KvOutput::Value(seen)) => {
                (*state == *seen.as_str()).then(|| state.clone())
            }
            (KvInput::Get(_), KvOutput::Done) => None,
            (_, KvOutput::Done) => Some(self.step(state, input).0),
            (_, KvOutput::Value(_)) => None,
        }
    }

    fn pruning<'h>(
        &self,
        operations: &'h [Operation<KvInput, KvOutput>],
    ) -> Option<Box<dyn Pruning<KvValue> + 'h>> {
        // A partition of [`partition_by_key`]: every operation is on one key.
        Some(Box::new(PrefixRule::new(operations, true)))
    }

    fn unobservable(&self, operations: &[Operation<KvInput, KvOutput>]) -> Vec<bool> {
        unobservable(operations)
    }

    fn changes_nothing(&self, input: &KvInput) -> bool {
        matches!(input, KvInput::Get(_))
    }

    fn state_heap_bytes(&self, state: &KvValue) -> usize {
        // The rest of the chain is shared with the value it extends, counted there.
        state.own_bytes()
    }

    fn describe(&self, input: &KvInput, output: Option<&KvOutput>) -> String {
        describe(input, output)
    }
}

/// The operations of unknown outcome no returned get could have observed (see
/// [`Model::unobservable`]): a get that never returned, and a put or append of a value that no
/// returned get on its key contains. Taken out of a linearization, a put or append changes its
/// key's value only until the next put, and every value in that stretch contains the string it
/// wrote, so a get there would have returned it. (A value that occurs inside another by chance
/// only keeps an operation in the search.)
fn unobservable(operations: &[Operation<KvInput, KvOutput>]) -> Vec<bool> {
    if operations.iter().all(|operation| operation.ret.is_some()) {
        return vec![false; operations.len()];
    }
    let mut seen_per_key: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for operation in operations {
        if let (KvInput::Get(key), Some(KvOutput::Value(seen))) =
            (&operation.input, operation.output())
        {
            seen_per_key.entry(key).or_default().push(seen);
        }
    }
    operations
        .iter()
        .map(|operation| {
            operation.ret.is_none()
                && match &operation.input {
                    KvInput::Get(_) => true,
                    KvInput::Put(key, value) | KvInput::Append(key, value) => seen_per_key
                        .get(key.as_str())
                        .is_none_or(|seen| !seen.iter().any(|seen| seen.contains(value.as_str()))),
                }
        })
        .collect()
}

/// The whole store as one object; the state maps keys to values (absent keys are empty).
/// Checking a store this way, without splitting by key, is exponentially harder: it exists to
/// measure the checker and to check histories whose keys cannot be separated.
#[derive(Clone, Copy, Debug, Default)]
pub struct KvStore;

impl Model for KvStore {
    type State = BTreeMap<String, String>;
    type Input = KvInput;
    type Output = KvOutput;

    fn changes_nothing(&self, input: &KvInput) -> bool {
        matches!(input, KvInput::Get(_))
    }

    fn init(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    fn step(&self, state: &Self::State, input: &KvInput) -> (Self::State, KvOutput) {
        let value = state.get(input.key()).map_or("", String::as_str);
        let (next, output) = apply(value, input);
        match next {
            None => (state.clone(), output),
            Some(next) => {
                let mut state = state.clone();
                state.insert(input.key().to_string(), next);
                (state, output)
            }
        }
    }

    fn accept(
        &self,
        state: &Self::State,
        input: &KvInput,
        observed: &KvOutput,
    ) -> Option<Self::State> {
        match (input, observed) {
            (KvInput::Get(key), KvOutput::Value(seen)) => {
                (state.get(key).map_or("", String::as_str) == seen).then(|| state.clone())
            }
            (KvInput::Get(_), KvOutput::Done) | (_, KvOutput::Value(_)) => None,
            (_, KvOutput::Done) => Some(self.step(state, input).0),
        }
    }

    fn pruning<'h>(
        &self,
        operations: &'h [Operation<KvInput, KvOutput>],
    ) -> Option<Box<dyn Pruning<Self::State> + 'h>> {
        Some(Box::new(PrefixRule::new(operations, false)))
    }

    fn unobservable(&self, operations: &[Operation<KvInput, KvOutput>]) -> Vec<bool> {
        unobservable(operations)
    }

    fn state_heap_bytes(&self, state: &Self::State) -> usize {
        // Whole nodes, and every string's buffer as the allocator hands it out: counted by
        // length, a map of a few short keys took twice the budget (issue 59).
        let entry = 2 * std::mem::size_of::<String>();
        crate::heap::btree_node_bytes(state.len(), entry)
            + state
                .iter()
                .map(|(key, value)| {
                    crate::heap::allocated(key.capacity())
                        + crate::heap::allocated(value.capacity())
                })
                .sum::<usize>()
    }

    fn describe(&self, input: &KvInput, output: Option<&KvOutput>) -> String {
        describe(input, output)
    }
}

/// Splits a store history into one history per key, in key order, copying each operation.
pub fn partition_by_key(history: &History<KvInput, KvOutput>) -> Vec<Partition<KvInput, KvOutput>> {
    into_partitions_by_key(history.iter().cloned())
}

/// [`partition_by_key`] of a history the caller gives up: each operation is moved into its
/// key's history, not copied (as Porcupine's `Partition` copies only references).
pub fn into_partitions_by_key(
    history: impl IntoIterator<Item = Operation<KvInput, KvOutput>>,
) -> Vec<Partition<KvInput, KvOutput>> {
    // Each key's place in `partitions`, found by hash (one comparison of keys per operation,
    // where a tree of keys takes several); the key is copied once per key.
    let mut places: LookupTable<String, usize> = LookupTable::default();
    let mut partitions: Vec<Partition<KvInput, KvOutput>> = Vec::new();
    for operation in history {
        match places.get(operation.input.key()) {
            Some(&place) => partitions[place].1.push(operation),
            None => {
                places.insert(operation.input.key().to_string(), partitions.len());
                partitions.push((operation.input.key().to_string(), vec![operation]));
            }
        }
    }
    partitions.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
    partitions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_may_start_with_every_prefix_of_what_it_saw_and_not_with_other_values() {
        let seen: String = (0..300).map(|i| char::from(b'a' + (i % 7) as u8)).collect();
        let mut hashes = vec![7, 7];
        let get = ReturnedGet {
            index: 0,
            key: "k",
            seen: &seen,
            puts: 0..0,
            checkpoints: push_checkpoints(&seen, &mut hashes),
        };
        for len in 0..=seen.len() {
            // Built from pieces of 5 bytes, so the links and the checkpoints do not line up.
            let mut value = KvValue::default();
            for piece in seen.as_bytes()[..len].chunks(5) {
                value = value.append(std::str::from_utf8(piece).unwrap());
            }
            assert!(get.may_start_with(&hashes, &value), "prefix of {len} bytes");
            if len > 0 {
                let other = KvValue::of(&seen[..len - 1]).append("z");
                assert!(
                    !get.may_start_with(&hashes, &other),
                    "{len} bytes ending in z"
                );
            }
        }
        assert!(!get.may_start_with(&hashes, &KvValue::of(&format!("{seen}a"))));
    }
}
