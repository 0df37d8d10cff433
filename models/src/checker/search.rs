//! The search for one partition: Wing & Gong's algorithm with Lowe's memoization of
//! (set of linearized operations, model state), over interned model states.
//!
//! Calls and returns are kept in a doubly linked list sorted by time. Scanning from the head, a
//! call may be linearized next (if the model accepts it and the resulting (set, state) pair is
//! new); it is then lifted out of the list, with its return, and the scan restarts. Reaching a
//! return means the operation it belongs to was not linearized before it returned: backtrack.
//! An operation may therefore go next only if no pending operation returned before it was called.
//! Operations of unknown outcome have no return entry: they may be linearized at any point after
//! their call, or never. The history is linearizable once every returned operation is placed.

use super::bitset::Bitset;
use super::fold_hasher::FoldHasher;
use super::memo::{Memo, MAX_RANKED_UNKNOWN};
use super::set_digest::SetDigest;
use super::Budget;
use crate::history::Operation;
use crate::model::Model;
#[allow(clippy::disallowed_types)] // membership only: iteration order never reaches a result
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};

/// The result of searching one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchOutcome {
    /// Every returned operation was placed.
    Linearizable,
    /// No order works. The longest linearizable prefix found (operation indices in order) and
    /// the operations that could not be placed after it.
    NotLinearizable {
        /// The longest linearizable prefix found.
        longest_prefix: Vec<usize>,
        /// The returned operations that had to come next but could not be placed.
        unplaced: Vec<usize>,
    },
    /// The budget ran out first.
    Unknown(String),
    /// Another partition was illegal; this one was stopped.
    Cancelled,
}

type Fast = BuildHasherDefault<FoldHasher>;

const NIL: usize = usize::MAX;
const ILLEGAL: u32 = u32::MAX;
const UNKNOWN_TRANSITION: u32 = u32::MAX - 1;

/// The linked list of call and return entries.
struct Events {
    next: Vec<usize>,
    prev: Vec<usize>,
    /// For each entry: the operation it belongs to.
    op: Vec<usize>,
    /// For each entry: whether it is a call.
    is_call: Vec<bool>,
    /// For each operation: its return entry, if it returned.
    ret_entry: Vec<Option<usize>>,
}

impl Events {
    /// Entry 0 is the head sentinel; entries are sorted by time, calls before returns at equal
    /// times (operations that touch in time count as concurrent).
    /// Operations marked in `left_out` get no entries: the search never places them.
    fn new<I, O>(operations: &[Operation<I, O>], left_out: &[bool]) -> Events {
        let mut order: Vec<(u64, bool, usize)> = Vec::with_capacity(2 * operations.len());
        for (index, operation) in operations.iter().enumerate() {
            if left_out[index] {
                assert!(
                    operation.ret.is_none(),
                    "only an unknown outcome may be left out"
                );
                continue;
            }
            order.push((operation.call, false, index));
            if let Some(ret) = operation.ret {
                order.push((ret, true, index));
            }
        }
        order.sort_unstable();
        let count = order.len() + 1;
        let mut events = Events {
            next: (1..=count)
                .map(|i| if i == count { NIL } else { i })
                .collect(),
            prev: (0..count)
                .map(|i| if i == 0 { NIL } else { i - 1 })
                .collect(),
            op: vec![NIL; count],
            is_call: vec![false; count],
            ret_entry: vec![None; operations.len()],
        };
        for (position, &(_, is_return, index)) in order.iter().enumerate() {
            let entry = position + 1;
            events.op[entry] = index;
            events.is_call[entry] = !is_return;
            if is_return {
                events.ret_entry[index] = Some(entry);
            }
        }
        events
    }

    fn unlink(&mut self, entry: usize) {
        let (prev, next) = (self.prev[entry], self.next[entry]);
        self.next[prev] = next;
        if next != NIL {
            self.prev[next] = prev;
        }
    }

    fn relink(&mut self, entry: usize) {
        let (prev, next) = (self.prev[entry], self.next[entry]);
        self.next[prev] = entry;
        if next != NIL {
            self.prev[next] = entry;
        }
    }

    /// Removes an operation's call entry and its return entry.
    fn lift(&mut self, call_entry: usize) {
        self.unlink(call_entry);
        if let Some(ret) = self.ret_entry[self.op[call_entry]] {
            self.unlink(ret);
        }
    }

    /// Undoes [`Events::lift`] (in reverse order of lifting).
    fn unlift(&mut self, call_entry: usize) {
        if let Some(ret) = self.ret_entry[self.op[call_entry]] {
            self.relink(ret);
        }
        self.relink(call_entry);
    }
}

/// Interned model states and the cached transitions between them (hash maps for lookups only:
/// nothing iterates them, so their order never reaches a verdict).
#[allow(clippy::disallowed_types)]
struct States<'m, M: Model> {
    model: &'m M,
    states: Vec<M::State>,
    /// State hash to the ids of the states with that hash (each state is stored once, in
    /// `states`).
    ids: HashMap<u64, Vec<u32>, Fast>,
    /// (state, operation) to the next state, or [`ILLEGAL`].
    transitions: HashMap<(u32, u32), u32, Fast>,
    /// The heap bytes the interned states own, as the model counts them.
    heap_bytes: usize,
}

impl<'m, M: Model> States<'m, M> {
    #[allow(clippy::disallowed_types)] // see the struct
    fn new(model: &'m M) -> Self {
        let mut states = States {
            model,
            states: Vec::new(),
            ids: HashMap::default(),
            transitions: HashMap::default(),
            heap_bytes: 0,
        };
        states.intern(model.init());
        states
    }

    fn intern(&mut self, state: M::State) -> u32 {
        let mut hasher = FoldHasher::default();
        state.hash(&mut hasher);
        let candidates = self.ids.entry(hasher.finish()).or_default();
        if let Some(&id) = candidates
            .iter()
            .find(|&&id| self.states[id as usize] == state)
        {
            return id;
        }
        let id = u32::try_from(self.states.len()).expect("fewer than 4 billion states");
        assert!(id < UNKNOWN_TRANSITION, "state ids exhausted");
        candidates.push(id);
        self.heap_bytes += self.model.state_heap_bytes(&state);
        self.states.push(state);
        id
    }

    /// The bytes it holds: the states (inline and on the heap), the tables' slots with their
    /// control bytes, and one id per state in the hash table's lists.
    fn bytes(&self) -> usize {
        const ID_SLOT: usize = std::mem::size_of::<(u64, Vec<u32>)>() + 1;
        const TRANSITION_SLOT: usize = std::mem::size_of::<((u32, u32), u32)>() + 1;
        self.states.capacity() * std::mem::size_of::<M::State>()
            + self.heap_bytes
            + self.ids.capacity() * ID_SLOT
            + self.states.len() * std::mem::size_of::<u32>()
            + self.transitions.capacity() * TRANSITION_SLOT
    }

    /// The state after `operation` on `state`, or [`ILLEGAL`].
    fn step(
        &mut self,
        state: u32,
        index: usize,
        operation: &Operation<M::Input, M::Output>,
    ) -> u32 {
        let key = (state, index as u32);
        let cached = self
            .transitions
            .get(&key)
            .copied()
            .unwrap_or(UNKNOWN_TRANSITION);
        if cached != UNKNOWN_TRANSITION {
            return cached;
        }
        let current = &self.states[state as usize];
        let next = match operation.output() {
            Some(observed) => self.model.accept(current, &operation.input, observed),
            None => Some(self.model.step(current, &operation.input).0),
        };
        let result = next.map_or(ILLEGAL, |next| self.intern(next));
        self.transitions.insert(key, result);
        result
    }
}

/// Searches for a linearization of `operations` (all of one partition).
pub fn search<M: Model>(
    model: &M,
    operations: &[Operation<M::Input, M::Output>],
    budget: &Budget,
    cancel: &AtomicBool,
) -> (SearchOutcome, u64) {
    assert!(operations.len() < u32::MAX as usize, "too many operations");
    let left_out = model.unobservable(operations);
    let mut events = Events::new(operations, &left_out);
    // Without unknown-outcome operations in the search, its second phase has nothing to try.
    let any_unknown = operations
        .iter()
        .zip(&left_out)
        .any(|(op, &out)| op.ret.is_none() && !out);
    let pruning = model.pruning(operations);
    let mut states = States::new(model);
    let mut memo = Memo::new();
    let unknown_ranks = UnknownRanks::new(operations);
    let mut unknown_placed = 0u128;
    let mut linearized = Bitset::new(operations.len());
    let mut digest = SetDigest::new(operations.len());
    let mut stack: Vec<(usize, u32)> = Vec::new(); // (call entry, state before)
    let mut remaining = operations.iter().filter(|op| op.ret.is_some()).count();
    let mut state = 0u32;
    let mut entry = events.next[0];
    // The candidates to go next are the calls before the first return in the list: first the
    // returned operations among them are tried, then (this phase) the unknown-outcome ones, so
    // a (returned set, state) pair is reached with few unknown operations before many, and the
    // memo's subsumption cuts the rest.
    let mut unknown_phase = false;
    let mut longest: Vec<usize> = Vec::new();
    // How many first entries of the stack `longest` still equals: a new longest prefix copies
    // only the rest, so a history placed straight through costs linear time, not quadratic.
    let mut shared = 0usize;
    let mut iterations = 0u64;

    loop {
        if remaining == 0 {
            return (SearchOutcome::Linearizable, memo.len() as u64);
        }
        iterations += 1;
        // Memory on every step (a few additions: one step may intern a large state), the clock
        // and the other partitions now and then.
        let memory = budget.memory_exhausted(memo.len(), memo.bytes() + states.bytes());
        let exhausted = match memory {
            None if iterations.is_multiple_of(4096) => {
                if cancel.load(Ordering::Relaxed) {
                    return (SearchOutcome::Cancelled, memo.len() as u64);
                }
                budget.exhausted(memo.len(), memo.bytes() + states.bytes())
            }
            memory => memory,
        };
        if let Some(reason) = exhausted {
            return (SearchOutcome::Unknown(reason), memo.len() as u64);
        }
        assert!(
            entry != NIL,
            "scan ran off the list with {remaining} returned operations unplaced"
        );
        let index = events.op[entry];
        if events.is_call[entry] && operations[index].ret.is_none() != unknown_phase {
            // Not this phase's kind of operation.
            entry = events.next[entry];
        } else if !events.is_call[entry] && !unknown_phase && any_unknown {
            // The returned operations that may go next are tried; now the unknown ones.
            unknown_phase = true;
            entry = events.next[0];
        } else if events.is_call[entry] {
            let mut next_state = states.step(state, index, &operations[index]);
            if next_state != ILLEGAL
                && useless_unknown(
                    operations,
                    &events,
                    &stack,
                    &mut states,
                    state,
                    index,
                    next_state,
                )
            {
                next_state = ILLEGAL;
            }
            if next_state != ILLEGAL {
                linearized.set(index);
                unknown_ranks.toggle(index, &mut digest, &mut unknown_placed);
                // The memo also remembers pairs that pruning found dead, so each is judged once.
                if memo.visit(digest.digest(), next_state, unknown_placed)
                    && pruning.as_ref().is_none_or(|pruning| {
                        pruning.can_continue(&states.states[next_state as usize], &|index| {
                            linearized.contains(index)
                        })
                    })
                {
                    stack.push((entry, state));
                    state = next_state;
                    events.lift(entry);
                    if operations[index].ret.is_some() {
                        remaining -= 1;
                    }
                    if stack.len() > longest.len() {
                        longest.truncate(shared);
                        longest.extend(stack[shared..].iter().map(|&(call, _)| events.op[call]));
                        shared = stack.len();
                    }
                    entry = events.next[0];
                    unknown_phase = false;
                    continue;
                }
                linearized.clear(index);
                unknown_ranks.toggle(index, &mut digest, &mut unknown_placed);
            }
            entry = events.next[entry];
        } else {
            // A return whose operation is not placed: undo the last choice.
            let popped = stack.pop();
            shared = shared.min(stack.len());
            let Some((call_entry, before)) = popped else {
                let unplaced = unplaced_after(operations, &longest);
                let outcome = SearchOutcome::NotLinearizable {
                    longest_prefix: longest,
                    unplaced,
                };
                return (outcome, memo.len() as u64);
            };
            let undone = events.op[call_entry];
            events.unlift(call_entry);
            linearized.clear(undone);
            unknown_ranks.toggle(undone, &mut digest, &mut unknown_placed);
            state = before;
            if operations[undone].ret.is_some() {
                remaining += 1;
            }
            entry = events.next[call_entry];
            unknown_phase = operations[undone].ret.is_none();
        }
    }
}

/// Each unknown-outcome operation's bit in the memo's unknown set (`None` for returned ones, and
/// for all when a partition has more than [`MAX_RANKED_UNKNOWN`]: they then count as returned).
struct UnknownRanks(Vec<Option<u32>>);

impl UnknownRanks {
    fn new<I, O>(operations: &[Operation<I, O>]) -> UnknownRanks {
        let unknown = operations.iter().filter(|op| op.ret.is_none()).count();
        let mut next = 0;
        UnknownRanks(
            operations
                .iter()
                .map(|op| {
                    (op.ret.is_none() && unknown <= MAX_RANKED_UNKNOWN).then(|| {
                        next += 1;
                        next - 1
                    })
                })
                .collect(),
        )
    }

    /// Places operation `index` or takes it back: in the unknown set if it has a rank, else in
    /// the returned set's digest.
    fn toggle(&self, index: usize, digest: &mut SetDigest, unknown: &mut u128) {
        match self.0[index] {
            Some(rank) => *unknown ^= 1 << rank,
            None => digest.toggle(index),
        }
    }
}

/// Whether placing operation `index` now, from `state` to `next_state`, can only repeat what a
/// sibling branch reaches with fewer operations of unknown outcome placed (an unknown outcome
/// allows "never", so that branch can do everything this one can):
/// - an unknown-outcome operation that leaves the state as it is;
/// - any operation right after an unknown-outcome one when, from the state before that one, it
///   is accepted and reaches the same state (the unknown one was overwritten unseen).
#[allow(clippy::too_many_arguments)] // the search's own state, passed apart to borrow it apart
fn useless_unknown<M: Model>(
    operations: &[Operation<M::Input, M::Output>],
    events: &Events,
    stack: &[(usize, u32)],
    states: &mut States<'_, M>,
    state: u32,
    index: usize,
    next_state: u32,
) -> bool {
    if operations[index].ret.is_none() && next_state == state {
        return true;
    }
    let Some(&(last_call, before_last)) = stack.last() else {
        return false;
    };
    operations[events.op[last_call]].ret.is_none()
        && states.step(before_last, index, &operations[index]) == next_state
}

/// After `prefix`, the returned operation that returns first must go next; it and the
/// operations that could precede it are the ones that could not be placed.
fn unplaced_after<I, O>(operations: &[Operation<I, O>], prefix: &[usize]) -> Vec<usize> {
    let mut placed = vec![false; operations.len()];
    for &index in prefix {
        placed[index] = true;
    }
    let first_return = (0..operations.len())
        .filter(|&i| !placed[i])
        .filter_map(|i| operations[i].ret)
        .min();
    let Some(first_return) = first_return else {
        return Vec::new();
    };
    (0..operations.len())
        .filter(|&i| {
            !placed[i] && operations[i].ret.is_some() && operations[i].call <= first_return
        })
        .collect()
}
