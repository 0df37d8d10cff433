//! Shrinking a failing schedule to the few events that cause its failure (after DEMi, Scott et
//! al., NSDI 2016: delta debugging of the external events while the internal schedule stays
//! under control).
//!
//! 0. **Cut** at the violation, when its time is known: events after it cannot have caused it,
//!    and a shorter run is faster to repeat.
//! 1. **ddmin** (Zeller and Hildebrandt, 2002) over the events: remove chunks, then halves of
//!    them, down to single events, keeping any removal after which the run still fails with the
//!    same kind of violation.
//! 2. **Shorten**: pull every event (and the end) earlier, halving each gap while the run still
//!    fails.
//! 3. **Simplify**: a partition into the partition that isolates one node of its smallest group.
//! 4. **Check**: remove each remaining event once more; the schedule is reported *minimal* only
//!    when no single removal still fails (1-minimal), not merely when the budget ran out.
//! 5. **Reroll** (after DEMi's exploration of internal schedules): once no single event can go
//!    with the run's own seed, try each removal with a few other seeds (the seed decides thread
//!    switches, message delays and timeouts, not the external events); a removal that fails
//!    under one of them is kept, with that seed, and the check starts over. A chaotic run
//!    forgets its failure when one early event goes, not because the event caused it but
//!    because everything after it moved.
//!
//! The caller says what "still fails" means (replaying the schedule on the deterministic engine
//! with the run's seed and comparing [`violation_kind`]s) and when time is up.

use crate::schedule::{Event, Schedule, Timed, SEED_NOTE};
use std::time::Duration;

/// What a shrink produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shrunk {
    /// The smallest failing schedule found.
    pub schedule: Schedule,
    /// Runs tried.
    pub tests: u64,
    /// Whether no single event can be removed from it with the run still failing (checked).
    pub minimal: bool,
    /// Whether the time budget ran out first.
    pub out_of_time: bool,
}

/// What the failing run's trace tells the shrinker before it starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    /// When the violation happened, since the run started, if known.
    pub violation_at: Option<Duration>,
    /// Events (indices into the full schedule's events) that probably did nothing, such as
    /// commands offered to a node that was not leading: all removed at once, first.
    pub inert: Vec<usize>,
}

/// The kind of a violation, for "fails the same way": the invariant's name (`Leader
/// Completeness`), a node-local invariant's text with its numbers blanked (`local invariant:
/// truncated committed entries from #_ (commit index #_)`), `client history NotLinearizable`,
/// `transactions not-serializable`, `deadlock`, `liveness`, `watchdog`.
pub fn violation_kind(failure: &str) -> String {
    let first = failure.lines().next().unwrap_or_default();
    if let Some(rest) = first.strip_prefix("invariant violated: ") {
        if let Some(local) = rest.strip_prefix("local invariant of ") {
            let what = local.splitn(3, ": ").nth(2).unwrap_or(local);
            return format!("local invariant: {}", stem(what));
        }
        return rest.split(':').next().unwrap_or(rest).to_string();
    }
    if let Some(rest) = first.strip_prefix("transactions ") {
        // `transactions not-serializable: ...`: the level broken, whatever the anomalies.
        return format!("transactions {}", rest.split(':').next().unwrap_or(rest));
    }
    if let Some(rest) = first.strip_prefix("client history ") {
        return format!(
            "client history {}",
            rest.split_whitespace().next().unwrap_or("")
        );
    }
    if first.starts_with("deadlock") {
        return "deadlock".into();
    }
    if first.starts_with("watchdog") {
        return "watchdog".into();
    }
    if first.starts_with("livelock") {
        return "livelock".into();
    }
    if first.contains("failed to reach agreement") || first.starts_with("liveness") {
        return "liveness".into();
    }
    stem(first)
}

/// `text` with every run of digits replaced by `_` (`saw t_ in a reply but stayed in t_`): what
/// stays the same from run to run whatever the nodes, terms and indices.
fn stem(text: &str) -> String {
    let mut stem = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            if !in_number {
                stem.push('_');
            }
            in_number = true;
        } else {
            stem.push(c);
            in_number = false;
        }
    }
    stem
}

/// The shrinker's state: the schedule's notes and end, the events kept, and the budget.
struct Shrinker<'a> {
    notes: Vec<(String, String)>,
    /// The seed candidates run with (rerolls change it), when the notes give one.
    seed: Option<u64>,
    end: Duration,
    still_fails: &'a mut dyn FnMut(&Schedule) -> bool,
    out_of_time: &'a dyn Fn() -> bool,
    tests: u64,
}

impl Shrinker<'_> {
    fn schedule(&self, events: &[Timed], end: Duration) -> Schedule {
        let mut all = events.to_vec();
        all.push(Timed {
            at: end,
            event: Event::End,
        });
        let mut schedule = Schedule {
            notes: self.notes.clone(),
            events: all,
        };
        if let Some(seed) = self.seed {
            schedule.set_note(SEED_NOTE, seed.to_string());
        }
        schedule
    }

    /// Whether `events` (with the end at `end`) still fail; false once time is up.
    fn fails(&mut self, events: &[Timed], end: Duration) -> bool {
        self.fails_with(events, end, self.seed)
    }

    /// Whether `events` still fail with `seed`; false once time is up.
    fn fails_with(&mut self, events: &[Timed], end: Duration, seed: Option<u64>) -> bool {
        if (self.out_of_time)() {
            return false;
        }
        self.tests += 1;
        let mut schedule = self.schedule(events, end);
        if let Some(seed) = seed {
            schedule.set_note(SEED_NOTE, seed.to_string());
        }
        (self.still_fails)(&schedule)
    }

    /// `events` without the `inert` ones, if that still fails.
    fn drop_inert(&mut self, events: Vec<Timed>, inert: &[usize]) -> Vec<Timed> {
        if inert.is_empty() {
            return events;
        }
        let active: Vec<Timed> = events
            .iter()
            .enumerate()
            .filter(|(index, _)| !inert.contains(index))
            .map(|(_, timed)| timed.clone())
            .collect();
        if self.fails(&active, self.end) {
            active
        } else {
            events
        }
    }

    /// The events up to `violation_at`, with the end just after it, if that still fails.
    fn cut(&mut self, events: Vec<Timed>, violation_at: Duration) -> Vec<Timed> {
        let end = Duration::from_millis(violation_at.as_millis() as u64 + 1);
        if end >= self.end {
            return events;
        }
        let before: Vec<Timed> = events
            .iter()
            .filter(|timed| timed.at <= violation_at)
            .cloned()
            .collect();
        if self.fails(&before, end) {
            self.end = end;
            before
        } else {
            events
        }
    }

    /// ddmin, sweeping: at each chunk size, remove each chunk in turn, keeping every removal
    /// after which the run still fails and going on from where it stopped; halve the chunks
    /// when a whole sweep removes nothing. (Classic ddmin starts over after every success, and
    /// also tries each chunk alone; a chaotic run almost never fails on a small slice of its
    /// events, so those tests are mostly wasted.)
    fn ddmin(&mut self, mut events: Vec<Timed>) -> Vec<Timed> {
        if !events.is_empty() && self.fails(&[], self.end) {
            return Vec::new();
        }
        let mut chunk = events.len().div_ceil(2);
        while chunk >= 1 && !events.is_empty() && !(self.out_of_time)() {
            let mut start = 0;
            let mut removed_any = false;
            while start < events.len() && !(self.out_of_time)() {
                let stop = (start + chunk).min(events.len());
                if stop - start == events.len() {
                    break;
                }
                let mut without = events[..start].to_vec();
                without.extend_from_slice(&events[stop..]);
                if self.fails(&without, self.end) {
                    events = without;
                    removed_any = true;
                } else {
                    start = stop;
                }
            }
            if !removed_any {
                if chunk == 1 {
                    break;
                }
                chunk = chunk.div_ceil(2);
            }
        }
        events
    }

    /// Pulls events (and the end) earlier, halving each gap while the run still fails.
    fn shorten(&mut self, mut events: Vec<Timed>) -> Vec<Timed> {
        for index in 0..=events.len() {
            loop {
                let previous = if index == 0 {
                    Duration::ZERO
                } else {
                    events[index - 1].at
                };
                let current = events.get(index).map_or(self.end, |timed| timed.at);
                let gap = current.saturating_sub(previous);
                if gap < Duration::from_millis(2) {
                    break;
                }
                // Whole milliseconds, so the shrunk schedule reads as the full one does.
                let shift = Duration::from_millis((gap / 2).as_millis() as u64);
                let mut shifted = events.clone();
                for timed in &mut shifted[index..] {
                    timed.at -= shift;
                }
                let end = self.end - shift;
                if self.fails(&shifted, end) {
                    events = shifted;
                    self.end = end;
                } else {
                    break;
                }
            }
        }
        events
    }

    /// Replaces each partition by one that isolates a single node of its smallest group.
    fn simplify(&mut self, mut events: Vec<Timed>) -> Vec<Timed> {
        for index in 0..events.len() {
            let Event::Partition(groups) = &events[index].event else {
                continue;
            };
            let smallest = groups.iter().min_by_key(|group| group.len()).cloned();
            let Some(smallest) = smallest.filter(|group| group.len() > 1) else {
                continue;
            };
            let everyone: Vec<_> = groups.iter().flatten().copied().collect();
            for &alone in &smallest {
                let rest: Vec<_> = everyone.iter().copied().filter(|&n| n != alone).collect();
                let mut simpler = events.clone();
                simpler[index].event = Event::partition(vec![vec![alone], rest]);
                if self.fails(&simpler, self.end) {
                    events = simpler;
                    break;
                }
            }
        }
        events
    }

    /// Whether no single event can be removed with the run still failing; removes any that can.
    fn check_minimal(&mut self, events: &mut Vec<Timed>) -> bool {
        let mut index = 0;
        let mut minimal = true;
        while index < events.len() {
            let mut without = events.clone();
            without.remove(index);
            if (self.out_of_time)() {
                return false;
            }
            if self.fails(&without, self.end) {
                *events = without;
                minimal = false;
            } else {
                index += 1;
            }
        }
        minimal || self.check_minimal(events)
    }

    /// Removes one event with another seed, if a removal fails under one of [`REROLLS`] others.
    fn reroll(&mut self, events: &mut Vec<Timed>) -> bool {
        let Some(seed) = self.seed else {
            return false;
        };
        for index in 0..events.len() {
            let mut without = events.clone();
            without.remove(index);
            for other in (1..=REROLLS).map(|k| other_seed(seed, k)) {
                if self.fails_with(&without, self.end, Some(other)) {
                    *events = without;
                    self.seed = Some(other);
                    return true;
                }
            }
        }
        false
    }
}

/// Other seeds a stuck removal is tried with.
const REROLLS: u64 = 3;

/// The `k`-th other seed after `seed`: `1000056` and `2000056` after `56`, recognisably its own.
fn other_seed(seed: u64, k: u64) -> u64 {
    seed.wrapping_add(k.wrapping_mul(1_000_000))
}

/// Shrinks `full`, a schedule that fails, with what its run's trace tells (`hints`), while
/// `still_fails` says a candidate fails the same way and until `out_of_time` says the budget is
/// spent.
pub fn shrink(
    full: &Schedule,
    hints: &Hints,
    still_fails: &mut dyn FnMut(&Schedule) -> bool,
    out_of_time: &dyn Fn() -> bool,
) -> Shrunk {
    let events: Vec<Timed> = full
        .events
        .iter()
        .filter(|timed| timed.event != Event::End)
        .cloned()
        .collect();
    let mut shrinker = Shrinker {
        notes: full.notes.clone(),
        seed: full.seed(),
        end: full.end(),
        still_fails,
        out_of_time,
        tests: 0,
    };
    let events = shrinker.drop_inert(events, &hints.inert);
    let events = match hints.violation_at {
        Some(at) => shrinker.cut(events, at),
        None => events,
    };
    let events = shrinker.ddmin(events);
    let events = shrinker.shorten(events);
    let mut events = shrinker.simplify(events);
    let mut minimal = shrinker.check_minimal(&mut events);
    while minimal && events.len() > 1 && shrinker.reroll(&mut events) {
        minimal = shrinker.check_minimal(&mut events);
    }
    let out_of_time = out_of_time();
    Shrunk {
        schedule: shrinker.schedule(&events, shrinker.end),
        tests: shrinker.tests,
        minimal: minimal && !out_of_time,
        out_of_time,
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use node::NodeId;

    fn schedule(events: Vec<Event>) -> Schedule {
        let mut timed: Vec<Timed> = events
            .into_iter()
            .enumerate()
            .map(|(i, event)| Timed {
                at: Duration::from_millis(100 * i as u64),
                event,
            })
            .collect();
        timed.push(Timed {
            at: Duration::from_secs(60),
            event: Event::End,
        });
        Schedule {
            notes: vec![("seed".into(), "1".into())],
            events: timed,
        }
    }

    fn crashes(schedule: &Schedule) -> Vec<u32> {
        schedule
            .events
            .iter()
            .filter_map(|t| match t.event {
                Event::Crash(node) => Some(node.0),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn ddmin_finds_the_two_events_that_together_cause_the_failure() {
        let full = schedule((0..40).map(|i| Event::Crash(NodeId(i))).collect());
        // Fails when both n7 and n31 crash, n7 first, and the end is after 3 s.
        let mut fails = |s: &Schedule| {
            let c = crashes(s);
            let seven = c.iter().position(|&n| n == 7);
            let thirty_one = c.iter().position(|&n| n == 31);
            matches!((seven, thirty_one), (Some(a), Some(b)) if a < b)
                && s.end() > Duration::from_secs(3)
        };
        let shrunk = shrink(&full, &Hints::default(), &mut fails, &|| false);
        assert_eq!(crashes(&shrunk.schedule), vec![7, 31]);
        assert!(shrunk.minimal && !shrunk.out_of_time);
        assert!(
            shrunk.schedule.end() <= Duration::from_secs(6),
            "{:?}",
            shrunk.schedule.end()
        );
        assert!(shrunk.schedule.end() > Duration::from_secs(3));
        assert_eq!(shrunk.schedule.notes, full.notes, "the notes stay");
    }

    #[test]
    fn a_stuck_removal_is_tried_with_other_seeds_and_kept_with_the_one_that_fails() {
        let full = schedule((0..10).map(|i| Event::Crash(NodeId(i))).collect());
        // Under its own seed (1) the run needs n3 and n7 to crash; under 2000001, n7 alone.
        let mut fails = |s: &Schedule| {
            let c = crashes(s);
            match s.seed() {
                Some(1) => c.contains(&3) && c.contains(&7),
                Some(2_000_001) => c.contains(&7),
                _ => false,
            }
        };
        let shrunk = shrink(&full, &Hints::default(), &mut fails, &|| false);
        assert_eq!(crashes(&shrunk.schedule), vec![7]);
        assert_eq!(shrunk.schedule.seed(), Some(2_000_001));
        assert!(shrunk.minimal);
    }

    #[test]
    fn the_inert_events_go_first_all_at_once() {
        let full = schedule((0..40).map(|i| Event::Crash(NodeId(i))).collect());
        let mut runs = Vec::new();
        let mut fails = |s: &Schedule| {
            runs.push(crashes(s));
            let c = crashes(s);
            c.contains(&7) && c.contains(&31)
        };
        let hints = Hints {
            violation_at: None,
            inert: (0..40).filter(|&i| i != 7 && i != 31).collect(),
        };
        let shrunk = shrink(&full, &hints, &mut fails, &|| false);
        assert_eq!(runs[0], vec![7, 31]);
        assert_eq!(crashes(&shrunk.schedule), vec![7, 31]);
    }

    #[test]
    fn events_after_the_violation_are_cut_first() {
        let full = schedule((0..40).map(|i| Event::Crash(NodeId(i))).collect());
        let mut runs = Vec::new();
        let mut fails = |s: &Schedule| {
            runs.push(s.removable());
            crashes(s).contains(&7)
        };
        let shrunk = shrink(
            &full,
            &Hints {
                violation_at: Some(Duration::from_millis(800)),
                inert: Vec::new(),
            },
            &mut fails,
            &|| false,
        );
        assert_eq!(crashes(&shrunk.schedule), vec![7]);
        assert_eq!(runs[0], 9, "the first candidate is the events up to 0.8 s");
        assert!(shrunk.schedule.end() <= Duration::from_millis(801));
    }

    #[test]
    fn a_partition_is_simplified_to_one_isolated_node_when_that_still_fails() {
        let groups = vec![
            vec![NodeId(0), NodeId(1)],
            vec![NodeId(2), NodeId(3), NodeId(4)],
        ];
        let full = schedule(vec![Event::Heal, Event::Partition(groups), Event::Heal]);
        let mut fails = |s: &Schedule| {
            s.events.iter().any(|t| match &t.event {
                Event::Partition(groups) => groups.iter().any(|g| g == &vec![NodeId(1)]),
                _ => false,
            })
        };
        let shrunk = shrink(&full, &Hints::default(), &mut fails, &|| false);
        let events: Vec<String> = shrunk
            .schedule
            .events
            .iter()
            .map(|t| t.event.to_string())
            .collect();
        assert_eq!(events, ["partition [n0 n2 n3 n4] [n1]", "end"]);
    }

    #[test]
    fn a_shrink_cut_short_by_its_budget_is_not_called_minimal() {
        let full = schedule((0..40).map(|i| Event::Crash(NodeId(i))).collect());
        let budget = std::cell::Cell::new(5u32);
        let mut fails = |_: &Schedule| true;
        let out_of_time = || {
            budget.set(budget.get().saturating_sub(1));
            budget.get() == 0
        };
        let shrunk = shrink(&full, &Hints::default(), &mut fails, &out_of_time);
        assert!(shrunk.out_of_time && !shrunk.minimal);
    }

    #[test]
    fn violations_of_one_kind_match_whatever_their_numbers() {
        for (a, b) in [
            (
                "invariant violated: Leader Completeness: n4 became leader of t17 without #82",
                "invariant violated: Leader Completeness: n1 became leader of t3 without #2",
            ),
            (
                "invariant violated: local invariant of n1: n1: truncated committed entries from #15 (commit index #17)",
                "invariant violated: local invariant of n3: n3: truncated committed entries from #2 (commit index #2)",
            ),
            (
                "client history NotLinearizable (key k2): 4906 operations, 32 reads served by deposed leaders",
                "client history NotLinearizable (key k7): 17 operations, 0 reads served by deposed leaders",
            ),
            (
                "transactions not-serializable: 391 anomalies (G-single, G0, incompatible-order) in 4662 transactions; first, G0: ...",
                "transactions not-serializable: 2 anomalies (G-single) in 310 transactions; first, G-single: ...",
            ),
            ("deadlock: no thread can run: 3 wait", "deadlock: all 5 threads wait on the clock"),
        ] {
            assert_eq!(violation_kind(a), violation_kind(b), "{a} / {b}");
        }
        assert_ne!(
            violation_kind("invariant violated: Log Matching: n0 and n2 both hold"),
            violation_kind("invariant violated: State Machine Safety: at index #9")
        );
        assert_eq!(
            violation_kind("invariant violated: local invariant of n1: n1: commit index #13 beyond last log index #9"),
            "local invariant: commit index #_ beyond last log index #_"
        );
        assert_eq!(
            violation_kind(
                "invariant violated: local invariant of n0: n0: saw t6 in a reply but stayed in t1"
            ),
            "local invariant: saw t_ in a reply but stayed in t_"
        );
    }
}
