//! How long each fault stopped the cluster's writes, read from the clients' history: from the
//! moment the fault was in place (its rules written, its signals sent) until a write (a put or
//! an append) called at or after that moment was acknowledged. An acknowledged write was committed by a leader with a majority, so this is
//! the time until the cluster committed again as its clients see it, timeouts and retries
//! included. A fault that stopped nothing (one on a follower, say) shows the time of one write.
//! Faults that hit the leader are counted apart from the others of their kind.

use super::fault::{FaultKind, Outage};
use super::run::FaultRecord;
use models::{History, KvInput, KvOutput, Outcome};
use node::kv::ClerkConfig;
use node::Config;
use std::collections::BTreeMap;
use std::time::Duration;

/// The longest a fault of `kind` on the leader of Interleave's server (default timing, `nodes`
/// of them) may stop its clients' writes, or `None` where the node's timing assumptions do not
/// hold (clocks beyond the drift bound). The node's own bound
/// ([`Config::commit_bound_leader_lost`], or [`Config::commit_bound_leader_deaf`] for a leader
/// that hears its followers late or not at all: one-way cuts, delays, jitter, reordering, loss),
/// then one round of the clients' retries, each server tried for the longest a call waits and a
/// pause: a client stuck on the old leader finds the new one within it.
pub fn bound_on_leader(kind: FaultKind, nodes: usize) -> Option<Duration> {
    let (node, clerk) = (Config::default(), ClerkConfig::default());
    let node_bound = match kind.outage() {
        Outage::Unbounded => return None,
        Outage::LeaderDeaf => node.commit_bound_leader_deaf(),
        Outage::LeaderLost => node.commit_bound_leader_lost(),
        Outage::Nothing => Duration::ZERO,
    };
    let retries = clerk.call_timeout * u32::try_from(nodes).unwrap_or(u32::MAX) + clerk.retry_pause;
    Some(node_bound + retries)
}

/// How long after `start` (microseconds from the clients' start) a write called at or after it
/// was acknowledged; `None` if none was before the history ends. `history` is in order of call.
pub fn writes_stopped_for(history: &History<KvInput, KvOutput>, start: u64) -> Option<u64> {
    let first = history.partition_point(|op| op.call < start);
    let mut soonest: Option<u64> = None;
    for op in &history[first..] {
        debug_assert!(op.call >= start, "the history is in order of call");
        // Nothing called later can be acknowledged before the soonest so far.
        if soonest.is_some_and(|soonest| op.call >= soonest) {
            break;
        }
        let is_write = matches!(op.input, KvInput::Put(..) | KvInput::Append(..));
        if let (true, Outcome::Returned(KvOutput::Done), Some(ret)) =
            (is_write, &op.outcome, op.ret)
        {
            soonest = Some(soonest.map_or(ret, |soonest: u64| soonest.min(ret)));
        }
    }
    soonest.map(|ret| ret - start)
}

/// Which faults a window is counted with: their kind, and whether they hit the leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FaultGroup {
    /// The kind.
    pub kind: FaultKind,
    /// Whether it was aimed at the leader and one led when it came.
    pub hit_leader: bool,
}

impl FaultGroup {
    /// Its name: the kind's, with `-leader` when it hit the leader (`partition-leader`).
    pub fn name(self) -> String {
        if self.hit_leader {
            format!("{}-leader", self.kind.name())
        } else {
            self.kind.name().to_string()
        }
    }
}

/// For each group of faults injected, how long each one stopped the writes (microseconds,
/// sorted), and how many stopped them past the end of the history.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WritesStopped {
    /// By group: the windows, sorted, and the count of faults after which no write came back.
    pub by_group: BTreeMap<FaultGroup, (Vec<u64>, usize)>,
}

impl WritesStopped {
    /// The windows of every injected fault of `faults` in `history`.
    pub fn of(history: &History<KvInput, KvOutput>, faults: &[FaultRecord]) -> WritesStopped {
        let mut by_group: BTreeMap<FaultGroup, (Vec<u64>, usize)> = BTreeMap::new();
        for fault in faults.iter().filter(|fault| fault.injected) {
            let group = FaultGroup {
                kind: fault.kind,
                hit_leader: fault.hit_leader,
            };
            let entry = by_group.entry(group).or_default();
            match writes_stopped_for(history, fault.in_place) {
                Some(window) => entry.0.push(window),
                None => entry.1 += 1,
            }
        }
        for (windows, _) in by_group.values_mut() {
            windows.sort_unstable();
        }
        WritesStopped { by_group }
    }

    /// Per group of faults that hit the leader, how many windows (microseconds) passed `bound`
    /// of their kind, faults after which no write came back counted too. Groups without a bound
    /// are left out, and so are faults elsewhere: a fault on every node at once (`kill -9` of
    /// all, a power cut to all) stops the writes for as long as it lasts, by design.
    pub fn past_bound(
        &self,
        bound: impl Fn(FaultKind) -> Option<Duration>,
    ) -> BTreeMap<FaultGroup, usize> {
        (self.by_group.iter())
            .filter(|(group, _)| group.hit_leader)
            .filter_map(|(group, (windows, never))| {
                let bound = bound(group.kind)?.as_micros();
                let past = windows.iter().filter(|&&w| u128::from(w) > bound).count();
                Some((*group, past + never))
            })
            .collect()
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn kind(name: &str) -> FaultKind {
        name.parse().expect("a kind")
    }
    use models::Operation;

    fn write(call: u64, ret: u64) -> Operation<KvInput, KvOutput> {
        let input = KvInput::Append("k".into(), "v".into());
        Operation::returned(0, input, KvOutput::Done, call, ret)
    }

    fn read(call: u64, ret: u64) -> Operation<KvInput, KvOutput> {
        Operation::returned(
            1,
            KvInput::Get("k".into()),
            KvOutput::Value(String::new()),
            call,
            ret,
        )
    }

    fn lost(call: u64) -> Operation<KvInput, KvOutput> {
        Operation::unknown(2, KvInput::Put("k".into(), "v".into()), call)
    }

    fn record(kind: FaultKind, start: u64, injected: bool, hit_leader: bool) -> FaultRecord {
        FaultRecord {
            kind,
            start: start.saturating_sub(1),
            in_place: start,
            end: start + 1,
            what: String::new(),
            outcome: String::new(),
            injected,
            hit_leader,
            new_leader_after: None,
        }
    }

    #[test]
    fn the_window_ends_at_the_first_write_called_after_the_start_that_was_acknowledged() {
        // A write called before the start does not count, nor a read, nor a write whose outcome
        // is unknown; of those called after, the soonest acknowledgement wins, whichever was
        // called first.
        let history = vec![
            write(10, 1_000),
            read(120, 130),
            lost(150),
            write(200, 900),
            write(300, 400),
            write(500, 510),
        ];
        assert_eq!(writes_stopped_for(&history, 100), Some(300));
        assert_eq!(writes_stopped_for(&history, 450), Some(60));
        assert_eq!(writes_stopped_for(&history, 600), None);
    }

    #[test]
    fn windows_are_grouped_by_kind_and_faults_not_injected_are_left_out() {
        let history = vec![write(0, 5), write(100, 150), write(2_000, 2_400)];
        let faults = [
            record(kind("partition"), 50, true, false),
            record(kind("partition"), 0, true, false),
            record(kind("kill"), 1_000, true, true),
            record(kind("kill"), 3_000, true, true),
            record(kind("kill"), 1_000, true, false),
            record(kind("pause"), 0, false, false),
        ];
        let group = |kind, hit_leader| FaultGroup { kind, hit_leader };
        let stopped = WritesStopped::of(&history, &faults);
        let by = &stopped.by_group;
        assert_eq!(by[&group(kind("partition"), false)], (vec![5, 100], 0));
        assert_eq!(by[&group(kind("kill"), true)], (vec![1_400], 1));
        assert_eq!(by[&group(kind("kill"), false)], (vec![1_400], 0));
        assert_eq!(group(kind("kill"), true).name(), "kill-leader");
        assert_eq!(by.len(), 3, "the fault not injected is left out");
        // A bound of 1 ms on kills: the kill-leader window of 1.4 ms and the one that never
        // closed are past it; faults elsewhere are not held to it.
        let bound = |kind: FaultKind| (kind.name() == "kill").then_some(Duration::from_millis(1));
        let past = stopped.past_bound(bound);
        assert_eq!(past[&group(kind("kill"), true)], 2);
        assert!(!past.contains_key(&group(kind("kill"), false)));
        assert!(!past.contains_key(&group(kind("partition"), false)));
    }

    #[test]
    fn a_leader_that_hears_late_has_the_longer_bound_and_clocks_beyond_the_drift_bound_none() {
        let kill = bound_on_leader(kind("kill"), 3).expect("a bound");
        let delay = bound_on_leader(kind("delay"), 3).expect("a bound");
        // 2 * 600 ms + 4 * 100 ms, then three servers tried for 200 ms each and a pause of 50.
        assert_eq!(kill, Duration::from_millis(1_600 + 650));
        // The quorum window (600 ms) and one check (300 ms) more.
        assert_eq!(delay, kill + Duration::from_millis(900));
        assert_eq!(bound_on_leader(kind("clock-beyond"), 3), None);
        assert!(bound_on_leader(kind("kill"), 5) > Some(kill));
    }
}
