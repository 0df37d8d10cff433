//! A key-value store with get, put and append, checked one key at a time ([`KeyValue`]) or as a
//! whole ([`KvStore`]).
//!
//! A store is linearizable iff the history of each key is, so the checker splits a store history
//! into per-key histories ([`partition_by_key`]) and checks those independently.

use crate::history::{History, Operation, Partition};
use crate::kv_value::{extend_hash, KvValue};
use crate::model::{Model, Pruning};
use std::collections::BTreeMap;

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
    /// The positions in `gets` of the gets that no put explains.
    unexplained: Vec<usize>,
    /// Where the first unplaced get was at the last check.
    first_unplaced: std::cell::Cell<usize>,
}

/// The puts of one key, by value, so that the ones a get's value starts with are found by
/// looking up its prefixes of the lengths some put has, not by comparing it with every put.
#[derive(Default)]
struct PutsOfKey<'h> {
    by_value: BTreeMap<&'h str, Vec<(usize, u64)>>,
    lengths: std::collections::BTreeSet<usize>,
}

impl PutsOfKey<'_> {
    /// The puts called no later than `ret` whose value `seen` starts with, in history order.
    fn explaining(&self, seen: &str, ret: u64) -> Vec<usize> {
        let mut puts: Vec<usize> = self
            .lengths
            .iter()
            .take_while(|&&len| len <= seen.len())
            .filter_map(|&len| seen.get(..len))
            .filter_map(|prefix| self.by_value.get(prefix))
            .flatten()
            .filter(|&&(_, call)| call <= ret)
            .map(|&(index, _)| index)
            .collect();
        puts.sort_unstable();
        puts
    }
}

/// How many unplaced gets the prefix rule checks on each state.
const PREFIX_RULE_WINDOW: usize = 8;

/// A get that returned a value, and the puts that could explain it.
struct ReturnedGet<'h> {
    index: usize,
    key: &'h str,
    seen: &'h str,
    /// The puts of the same key called no later than the get returned whose value `seen`
    /// starts with.
    puts: Vec<usize>,
    /// The rolling hash of each prefix of `seen` whose length is a multiple of
    /// [`CHECKPOINT`], so that whether a [`KvValue`] may start `seen` costs at most that many
    /// bytes, not the value's length.
    checkpoints: Vec<u64>,
}

/// How far apart the prefix hashes of a get's value are kept.
const CHECKPOINT: usize = 64;

impl ReturnedGet<'_> {
    /// False if `value` does not start `seen`; true if it does, and (rarely, when two hashes
    /// collide) when it does not, which only keeps a branch the rule could have cut.
    fn may_start_with(&self, value: &KvValue) -> bool {
        let len = value.len();
        if len > self.seen.len() {
            return false;
        }
        let at = len / CHECKPOINT;
        let bytes = &self.seen.as_bytes()[at * CHECKPOINT..len];
        extend_hash(self.checkpoints[at], bytes) == value.rolling_hash()
    }
}

/// The rolling hash of `text`'s prefixes of every length that is a multiple of [`CHECKPOINT`].
fn checkpoints(text: &str) -> Vec<u64> {
    let mut hashes = vec![0];
    for chunk in text.as_bytes().chunks_exact(CHECKPOINT) {
        let last = *hashes.last().expect("starts with one");
        hashes.push(extend_hash(last, chunk));
    }
    hashes
}

impl<'h> PrefixRule<'h> {
    fn new(operations: &'h [Operation<KvInput, KvOutput>]) -> PrefixRule<'h> {
        let mut puts: BTreeMap<&str, PutsOfKey<'_>> = BTreeMap::new();
        for (index, operation) in operations.iter().enumerate() {
            if let KvInput::Put(key, value) = &operation.input {
                let of_key = puts.entry(key).or_default();
                of_key.lengths.insert(value.len());
                of_key
                    .by_value
                    .entry(value)
                    .or_default()
                    .push((index, operation.call));
            }
        }
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
                            checkpoints: checkpoints(seen),
                            puts: puts
                                .get(key.as_str())
                                .map_or_else(Vec::new, |of_key| of_key.explaining(seen, ret)),
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
                .all(|get| is_prefix(get) || get.puts.iter().any(|&put| !placed(put)))
    }
}

impl Pruning<KvValue> for PrefixRule<'_> {
    fn can_continue(&self, state: &KvValue, placed: &dyn Fn(usize) -> bool) -> bool {
        self.holds(|get| get.may_start_with(state), placed)
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
        Some(Box::new(PrefixRule::new(operations)))
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
        Some(Box::new(PrefixRule::new(operations)))
    }

    fn unobservable(&self, operations: &[Operation<KvInput, KvOutput>]) -> Vec<bool> {
        unobservable(operations)
    }

    fn state_heap_bytes(&self, state: &Self::State) -> usize {
        // A B-tree keeps up to 11 entries per node; a node's own bookkeeping, shared out, is
        // well under this per entry.
        const PER_ENTRY: usize = 2 * std::mem::size_of::<String>() + 16;
        state
            .iter()
            .map(|(key, value)| key.capacity() + value.capacity() + PER_ENTRY)
            .sum()
    }

    fn describe(&self, input: &KvInput, output: Option<&KvOutput>) -> String {
        describe(input, output)
    }
}

/// Splits a store history into one history per key, in key order.
pub fn partition_by_key(history: &History<KvInput, KvOutput>) -> Vec<Partition<KvInput, KvOutput>> {
    let mut keys: BTreeMap<String, Vec<Operation<KvInput, KvOutput>>> = BTreeMap::new();
    for operation in history {
        keys.entry(operation.input.key().to_string())
            .or_default()
            .push(operation.clone());
    }
    keys.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_may_start_with_every_prefix_of_what_it_saw_and_not_with_other_values() {
        let seen: String = (0..300).map(|i| char::from(b'a' + (i % 7) as u8)).collect();
        let get = ReturnedGet {
            index: 0,
            key: "k",
            seen: &seen,
            puts: Vec::new(),
            checkpoints: checkpoints(&seen),
        };
        for len in 0..=seen.len() {
            // Built from pieces of 5 bytes, so the links and the checkpoints do not line up.
            let mut value = KvValue::default();
            for piece in seen.as_bytes()[..len].chunks(5) {
                value = value.append(std::str::from_utf8(piece).unwrap());
            }
            assert!(get.may_start_with(&value), "prefix of {len} bytes");
            if len > 0 {
                let other = KvValue::of(&seen[..len - 1]).append("z");
                assert!(!get.may_start_with(&other), "{len} bytes ending in z");
            }
        }
        assert!(!get.may_start_with(&KvValue::of(&format!("{seen}a"))));
    }
}
