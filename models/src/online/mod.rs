//! Online linearizability checking: each key's history checked while the run goes, so a
//! violation stops the run when it happens, not after it.
//!
//! A key's history is cut wherever none of its operations is in flight: every operation called
//! before such a point returned before it, so each must take effect before every operation
//! called after it. (Strictly after: an operation called at the very time another returned is
//! concurrent with it, so a cut at time `t` is made at the first event after `t`, once no call
//! at `t` can come.) Between two cuts lies a *window*. When a window closes, every state some
//! order of its operations can end in, from every state possible at the window's start, becomes
//! the states possible at the next cut (the *frontier*); an empty frontier is a violation, found
//! the moment the window closes. An operation of unknown outcome (its client gave up on it) may
//! take effect at any later time or never: it is carried from window to window, and each state
//! of the frontier says which carried operations it has not applied yet. An operation that
//! changes nothing ([`Model::changes_nothing`]) and whose outcome is unknown constrains nothing
//! and is left out.
//!
//! A key that is never quiet never closes its window, so a window open for a while is also
//! checked as it stands ([`OnlineChecker::check_open_windows_every`]): its operations in flight
//! count as of unknown outcome, and if no order explains even that, none will explain the
//! history, whatever they return.
//!
//! A window too large for the checker's fixed sets, one whose orders take more than
//! [`closure::MAX_VISITS`] steps to go through, too many carried operations or too many frontier
//! states leave the key to the check of the whole history at the end of the run (an open window
//! checked as it stands past that many steps is left for later), and are counted ([`OnlineFigures::keys_deferred`]); nothing is ever decided by a guess.

mod closure;
#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;

use crate::checker::FoldHasher;
use crate::history::{Operation, Outcome, Time};
use crate::model::Model;
use closure::{Closure, Entry, Seen, MAX_OPERATIONS};
use std::collections::{BTreeMap, VecDeque};
#[allow(clippy::disallowed_types)] // lookups only: nothing iterates them
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

/// The most carried operations of unknown outcome one key may have.
const MAX_CARRIED: usize = 16;

/// The most states one key's frontier may hold.
const MAX_FRONTIER: usize = 1_024;

/// Which of a key's carried operations a frontier state has not applied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Carried(u64);

impl Carried {
    fn contains(self, index: usize) -> bool {
        self.0 & (1 << index) != 0
    }

    fn insert(&mut self, index: usize) {
        self.0 |= 1 << index;
    }

    /// Whether every member of `self` is in `other`.
    fn within(self, other: Carried) -> bool {
        self.0 & !other.0 == 0
    }
}

/// An operation handed to the checker at its call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(u64);

/// A violation found online: a window of one key that no order explains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnlineViolation<I, O> {
    /// The key.
    pub key: String,
    /// The window's operations: the carried ones of unknown outcome first, then those called
    /// since the window opened.
    pub operations: Vec<Operation<I, O>>,
    /// How many states were possible at the window's start.
    pub states_at_start: usize,
    /// The first return after which no order explained the window (the operations still in
    /// flight then counted as of unknown outcome): the earliest anyone could have known.
    pub impossible_from: Time,
    /// When the window closed and the violation was found.
    pub found_at: Time,
}

impl<I, O> OnlineViolation<I, O> {
    /// The violation in words, one operation a line, with `describe` for each and `time` for
    /// each time.
    pub fn describe(
        &self,
        describe: impl Fn(&I, Option<&O>) -> String,
        time: impl Fn(Time) -> String,
    ) -> String {
        let mut text = format!(
            "key {:?}: no order of these {} operations explains them, from any of the {} states \
             possible when they began (impossible from {}, found at {}):",
            self.key,
            self.operations.len(),
            self.states_at_start,
            time(self.impossible_from),
            time(self.found_at)
        );
        for operation in &self.operations {
            let ret = operation.ret.map_or("?".to_string(), &time);
            text.push_str(&format!(
                "\n  client {}: {} [{} to {}]",
                operation.client,
                describe(&operation.input, operation.output()),
                time(operation.call),
                ret
            ));
        }
        text
    }
}

/// What the online checker did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OnlineFigures {
    /// Operations called.
    pub operations: u64,
    /// Windows closed and checked.
    pub windows: u64,
    /// Open windows checked as they stood.
    pub open_windows_checked: u64,
    /// The most operations in one window (carried ones included).
    pub largest_window: usize,
    /// The most states one frontier held.
    pub largest_frontier: usize,
    /// Keys left to the whole history's check, and the operations called on them after that.
    pub keys_deferred: u64,
    /// Operations called on keys already deferred.
    pub operations_deferred: u64,
}

/// The operations in flight by id: looked up, never iterated.
#[allow(clippy::disallowed_types)] // see the import
type InFlightTable = HashMap<u64, InFlight, BuildHasherDefault<FoldHasher>>;

/// Frontier entries met so far: looked up, never iterated.
#[allow(clippy::disallowed_types)] // see the import
type EntrySet<S> = HashSet<Entry<S>, BuildHasherDefault<FoldHasher>>;

/// Where an operation in flight is.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    /// Its key's place in [`OnlineChecker::checks`].
    key: usize,
    /// Its index in the key's window; `None` on a deferred key.
    index: Option<usize>,
}

/// One key's state of the check.
struct KeyCheck<M: Model> {
    key: String,
    /// The closures' memo, kept for its allocation.
    memo: Seen<M::State>,
    frontier: Vec<Entry<M::State>>,
    carried: Vec<Operation<M::Input, M::Output>>,
    window: Vec<Operation<M::Input, M::Output>>,
    /// Operations of the window still in flight.
    open: usize,
    /// When the last of them ended, if none is in flight now: the window closes at the first
    /// event after it.
    quiet_since: Option<Time>,
    /// When the open window was last checked as it stood (or opened).
    checked_at: Time,
    deferred: bool,
}

/// Checks histories online, one key at a time (see the module's documentation).
pub struct OnlineChecker<M: Model> {
    model: M,
    /// Each key's place in `checks`.
    keys: BTreeMap<String, usize>,
    checks: Vec<KeyCheck<M>>,
    in_flight: InFlightTable,
    /// Keys that went quiet, in the order they did: each closes at the first event after.
    quiet: VecDeque<(Time, usize)>,
    /// The time of the last event.
    now: Time,
    /// How often an open window is checked as it stands.
    check_open_every: Option<Time>,
    next: u64,
    figures: OnlineFigures,
}

impl<M: Model> OnlineChecker<M> {
    /// A checker of `model`'s keys, each starting from the model's initial state.
    pub fn new(model: M) -> OnlineChecker<M> {
        OnlineChecker {
            model,
            keys: BTreeMap::new(),
            checks: Vec::new(),
            in_flight: InFlightTable::default(),
            quiet: VecDeque::new(),
            now: 0,
            check_open_every: None,
            next: 0,
            figures: OnlineFigures::default(),
        }
    }

    /// Checks a window that stays open as it stands once `period` passed since it opened or
    /// was last so checked (at the next event on its key): a key never quiet is then still
    /// checked every `period` or so. Without it, windows are checked only when they close.
    pub fn check_open_windows_every(mut self, period: Time) -> OnlineChecker<M> {
        assert!(period > 0, "a period of zero would check at every event");
        self.check_open_every = Some(period);
        self
    }

    /// What it did so far.
    pub fn figures(&self) -> OnlineFigures {
        self.figures
    }

    /// `client` called `input` on `key` at `at`: no earlier than any event before, as every
    /// event is. A violation if a window of another key closes now and no order explains it.
    pub fn call(
        &mut self,
        key: &str,
        client: u64,
        input: M::Input,
        at: Time,
    ) -> Result<OpId, OnlineViolation<M::Input, M::Output>> {
        self.advance(at)?;
        let id = OpId(self.next);
        self.next += 1;
        self.figures.operations += 1;
        let place = match self.keys.get(key) {
            Some(&place) => place,
            None => {
                self.keys.insert(key.to_string(), self.checks.len());
                self.checks.push(KeyCheck {
                    key: key.to_string(),
                    memo: closure::new_memo(),
                    frontier: vec![Entry {
                        state: self.model.init(),
                        unapplied: Carried::default(),
                    }],
                    carried: Vec::new(),
                    window: Vec::new(),
                    open: 0,
                    quiet_since: None,
                    checked_at: at,
                    deferred: false,
                });
                self.checks.len() - 1
            }
        };
        let check = &mut self.checks[place];
        let index = if check.deferred {
            self.figures.operations_deferred += 1;
            None
        } else {
            if check.window.is_empty() {
                check.checked_at = at;
            }
            check.window.push(Operation::unknown(client, input, at));
            check.open += 1;
            check.quiet_since = None;
            Some(check.window.len() - 1)
        };
        let flight = InFlight { key: place, index };
        self.in_flight.insert(id.0, flight);
        self.check_if_due(place, at)?;
        Ok(id)
    }

    /// Closes the windows of the keys that went quiet before `at`, the time of a new event.
    fn advance(&mut self, at: Time) -> Result<(), OnlineViolation<M::Input, M::Output>> {
        assert!(
            at >= self.now,
            "events come in time order: {at} after {}",
            self.now
        );
        self.now = at;
        while let Some((since, _)) = self.quiet.front() {
            if *since >= at {
                break;
            }
            let (since, place) = self.quiet.pop_front().expect("a front");
            let check = &mut self.checks[place];
            if check.deferred || check.quiet_since != Some(since) {
                continue;
            }
            check.quiet_since = None;
            close(&self.model, check, at, &mut self.figures)?;
            if check.deferred {
                self.figures.keys_deferred += 1;
            }
        }
        Ok(())
    }

    /// The operation `id` returned `output` at `at`. A violation if it closes a window that no
    /// order explains.
    pub fn returned(
        &mut self,
        id: OpId,
        output: M::Output,
        at: Time,
    ) -> Result<(), OnlineViolation<M::Input, M::Output>> {
        self.ended(id, Some(output), at)
    }

    /// The operation `id`'s client gave up on it at `at`: its outcome is unknown.
    pub fn gave_up(
        &mut self,
        id: OpId,
        at: Time,
    ) -> Result<(), OnlineViolation<M::Input, M::Output>> {
        self.ended(id, None, at)
    }

    fn ended(
        &mut self,
        id: OpId,
        output: Option<M::Output>,
        at: Time,
    ) -> Result<(), OnlineViolation<M::Input, M::Output>> {
        self.advance(at)?;
        let flight = self
            .in_flight
            .remove(&id.0)
            .expect("an operation ends once, after its call");
        let check = &mut self.checks[flight.key];
        let Some(index) = flight.index.filter(|_| !check.deferred) else {
            return Ok(());
        };
        let operation = &mut check.window[index];
        if let Some(output) = output {
            assert!(operation.call <= at, "an operation returns after its call");
            operation.outcome = Outcome::Returned(output);
            operation.ret = Some(at);
        }
        check.open -= 1;
        if check.open == 0 {
            check.quiet_since = Some(at);
            self.quiet.push_back((at, flight.key));
            return Ok(());
        }
        self.check_if_due(flight.key, at)
    }

    /// Checks the open window of the key at `place` as it stands at `at`, if due.
    fn check_if_due(
        &mut self,
        place: usize,
        at: Time,
    ) -> Result<(), OnlineViolation<M::Input, M::Output>> {
        let check = &mut self.checks[place];
        let due = (self.check_open_every)
            .is_some_and(|period| !check.deferred && at >= check.checked_at.saturating_add(period));
        if !due {
            return Ok(());
        }
        check.checked_at = at;
        self.figures.open_windows_checked += 1;
        check_as_it_stands(&self.model, check, at)
    }

    /// The end of the run: every window still open is checked, its operations in flight
    /// counted as of unknown outcome. Keys deferred are the whole history check's.
    pub fn finish(&mut self, at: Time) -> Result<(), OnlineViolation<M::Input, M::Output>> {
        self.advance(at)?;
        self.in_flight.clear();
        self.quiet.clear();
        for check in &mut self.checks {
            if check.deferred || check.window.is_empty() {
                continue;
            }
            check.open = 0;
            check.quiet_since = None;
            close(&self.model, check, at, &mut self.figures)?;
            if check.deferred {
                self.figures.keys_deferred += 1;
            }
        }
        Ok(())
    }
}

/// Closes `check`'s window at `at`: the next frontier, or the violation; a window past the
/// checker's limits defers the key instead.
fn close<M: Model>(
    model: &M,
    check: &mut KeyCheck<M>,
    at: Time,
    figures: &mut OnlineFigures,
) -> Result<(), OnlineViolation<M::Input, M::Output>> {
    figures.windows += 1;
    let mut operations = std::mem::take(&mut check.carried);
    let carried = operations.len();
    operations.append(&mut check.window);
    operations
        .retain(|operation| operation.ret.is_some() || !model.changes_nothing(&operation.input));
    figures.largest_window = figures.largest_window.max(operations.len());
    if operations.len() > MAX_OPERATIONS {
        return defer(check);
    }
    let closed = if carried == 0 && in_real_time_order(&operations) {
        close_in_order(model, check, &operations)
    } else {
        close_by_search(model, check, &operations, carried)
    };
    match closed {
        Closed::Next { frontier, carried } => {
            figures.largest_frontier = figures.largest_frontier.max(frontier.len());
            if frontier.len() > MAX_FRONTIER || carried.len() > MAX_CARRIED {
                return defer(check);
            }
            check.frontier = frontier;
            check.carried = carried
                .iter()
                .map(|&index| operations[index].clone())
                .collect();
            // The buffer serves the next window.
            operations.clear();
            check.window = operations;
            Ok(())
        }
        Closed::TooLarge => defer(check),
        Closed::Impossible => Err(violation(model, check, operations, carried, at)),
    }
}

/// Checks `check`'s open window at `at`, its operations in flight as of unknown outcome: a
/// violation if no order explains even that. Those that returned at `at` itself count as in
/// flight too: an operation called at `at`, concurrent with them, may not have come yet.
fn check_as_it_stands<M: Model>(
    model: &M,
    check: &mut KeyCheck<M>,
    at: Time,
) -> Result<(), OnlineViolation<M::Input, M::Output>> {
    let carried = check.carried.len();
    let as_of_now = |operation: &Operation<M::Input, M::Output>| match operation.ret {
        Some(ret) if ret >= at => Operation {
            outcome: Outcome::Unknown,
            ret: None,
            ..operation.clone()
        },
        _ => operation.clone(),
    };
    let operations: Vec<Operation<M::Input, M::Output>> = (check.carried.iter().cloned())
        .chain(check.window.iter().map(as_of_now).filter(|operation| {
            operation.ret.is_some() || !model.changes_nothing(&operation.input)
        }))
        .collect();
    if operations.len() > MAX_OPERATIONS {
        return Ok(());
    }
    let mut closure = Closure::new(model, &operations, carried, &mut check.memo);
    let explained = (check.frontier.iter()).any(|start| closure.ends(start, true, &mut |_, _| {}));
    if explained || closure.exhausted {
        return Ok(());
    }
    Err(violation(model, check, operations, carried, at))
}

/// The violation of `check`'s key found at `at`: `operations` (the first `carried` of them
/// carried) explained by no order from its frontier.
fn violation<M: Model>(
    model: &M,
    check: &KeyCheck<M>,
    operations: Vec<Operation<M::Input, M::Output>>,
    carried: usize,
    at: Time,
) -> OnlineViolation<M::Input, M::Output> {
    let impossible_from = first_impossible(model, &check.frontier, &operations, carried, at);
    OnlineViolation {
        key: check.key.clone(),
        operations,
        states_at_start: check.frontier.len(),
        impossible_from,
        found_at: at,
    }
}

/// What closing a window gave.
enum Closed<S> {
    /// The next frontier, and which of the window's operations are carried on (indices).
    Next {
        frontier: Vec<Entry<S>>,
        carried: Vec<usize>,
    },
    /// No order explains the window.
    Impossible,
    /// Past the checker's limits: the key goes to the whole history's check.
    TooLarge,
}

/// Closes a window of returned operations one after another, nothing carried: each start state
/// goes through them in turn.
fn close_in_order<M: Model>(
    model: &M,
    check: &KeyCheck<M>,
    operations: &[Operation<M::Input, M::Output>],
) -> Closed<M::State> {
    let mut frontier: Vec<Entry<M::State>> = Vec::with_capacity(check.frontier.len());
    for start in &check.frontier {
        let end = (operations.iter()).try_fold(start.state.clone(), |state, operation| {
            model.accept(
                &state,
                &operation.input,
                operation.output().expect("returned"),
            )
        });
        if let Some(state) = end {
            let entry = Entry {
                state,
                unapplied: Carried::default(),
            };
            if !frontier.contains(&entry) {
                frontier.push(entry);
            }
        }
    }
    if frontier.is_empty() {
        Closed::Impossible
    } else {
        Closed::Next {
            frontier,
            carried: Vec::new(),
        }
    }
}

/// Closes any window by a search of its orders from each start state ([`Closure`]).
fn close_by_search<M: Model>(
    model: &M,
    check: &mut KeyCheck<M>,
    operations: &[Operation<M::Input, M::Output>],
    carried: usize,
) -> Closed<M::State> {
    let mut ends: Vec<(M::State, Vec<usize>)> = Vec::new();
    let mut closure = Closure::new(model, operations, carried, &mut check.memo);
    for start in &check.frontier {
        closure.ends(start, false, &mut |state, unapplied| {
            ends.push((state.clone(), unapplied.to_vec()))
        });
        if closure.exhausted {
            return Closed::TooLarge;
        }
    }
    if ends.is_empty() {
        return Closed::Impossible;
    }
    // Carried on: the operations of unknown outcome some end leaves unapplied.
    let mut still: Vec<usize> = ends
        .iter()
        .flat_map(|(_, unapplied)| unapplied.clone())
        .collect();
    still.sort_unstable();
    still.dedup();
    if still.len() > MAX_CARRIED {
        return Closed::TooLarge;
    }
    let mut frontier: Vec<Entry<M::State>> = Vec::with_capacity(ends.len());
    let mut seen: EntrySet<M::State> = EntrySet::default();
    for (state, unapplied) in ends {
        let mut mask = Carried::default();
        for index in unapplied {
            mask.insert(
                still
                    .binary_search(&index)
                    .expect("every unapplied one is kept"),
            );
        }
        let entry = Entry {
            state,
            unapplied: mask,
        };
        if seen.insert(entry.clone()) {
            frontier.push(entry);
        }
    }
    // An entry whose state another has too, with fewer operations left to apply, can do no
    // more than that one: it goes.
    let dominated = |entry: &Entry<M::State>| {
        (frontier.iter()).any(|other| {
            other.state == entry.state
                && other.unapplied != entry.unapplied
                && entry.unapplied.within(other.unapplied)
        })
    };
    let frontier = (frontier.iter())
        .filter(|entry| !dominated(entry))
        .cloned()
        .collect();
    Closed::Next {
        frontier,
        carried: still,
    }
}

/// Whether every operation returned, each before the next was called.
fn in_real_time_order<I, O>(operations: &[Operation<I, O>]) -> bool {
    operations.iter().all(|operation| operation.ret.is_some())
        && operations.windows(2).all(|pair| pair[0].precedes(&pair[1]))
}

/// Leaves `check`'s key to the whole history's check from now on.
fn defer<M: Model>(check: &mut KeyCheck<M>) -> Result<(), OnlineViolation<M::Input, M::Output>> {
    check.deferred = true;
    check.frontier.clear();
    check.carried.clear();
    check.window.clear();
    check.memo = closure::new_memo();
    Ok(())
}

/// The first return time of `operations` (the carried ones first) after which no order from
/// `frontier` explains those called by then, the rest still in flight; `at` if none before it.
fn first_impossible<M: Model>(
    model: &M,
    frontier: &[Entry<M::State>],
    operations: &[Operation<M::Input, M::Output>],
    carried: usize,
    at: Time,
) -> Time {
    let mut returns: Vec<Time> = operations
        .iter()
        .filter_map(|operation| operation.ret)
        .collect();
    returns.sort_unstable();
    returns.dedup();
    for time in returns {
        let known: Vec<Operation<M::Input, M::Output>> = (operations.iter().enumerate())
            .filter(|(index, operation)| *index < carried || operation.call <= time)
            .map(|(_, operation)| match operation.ret {
                Some(ret) if ret > time => Operation {
                    outcome: Outcome::Unknown,
                    ret: None,
                    ..operation.clone()
                },
                _ => operation.clone(),
            })
            .collect();
        let mut memo = closure::new_memo();
        let mut closure = Closure::new(model, &known, carried, &mut memo);
        let explained = (frontier.iter()).any(|start| closure.ends(start, true, &mut |_, _| {}));
        if !explained && !closure.exhausted {
            return time;
        }
    }
    at
}
