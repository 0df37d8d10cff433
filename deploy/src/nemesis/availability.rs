//! How long each fault stopped the cluster's writes, read from the clients' history: from the
//! moment the fault was in place (its rules written, its signals sent) until a write (a put or
//! an append) called at or after that moment was acknowledged. An acknowledged write was committed by a leader with a majority, so this is
//! the time until the cluster committed again as its clients see it, timeouts and retries
//! included. A fault that stopped nothing (one on a follower, say) shows the time of one write.
//! Faults that hit the leader are counted apart from the others of their kind.

use super::fault::FaultKind;
use super::run::FaultRecord;
use models::{History, KvInput, KvOutput, Outcome};
use std::collections::BTreeMap;

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
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
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
            record(FaultKind::Partition, 50, true, false),
            record(FaultKind::Partition, 0, true, false),
            record(FaultKind::Kill, 1_000, true, true),
            record(FaultKind::Kill, 3_000, true, true),
            record(FaultKind::Kill, 1_000, true, false),
            record(FaultKind::Pause, 0, false, false),
        ];
        let group = |kind, hit_leader| FaultGroup { kind, hit_leader };
        let stopped = WritesStopped::of(&history, &faults);
        let by = &stopped.by_group;
        assert_eq!(by[&group(FaultKind::Partition, false)], (vec![5, 100], 0));
        assert_eq!(by[&group(FaultKind::Kill, true)], (vec![1_400], 1));
        assert_eq!(by[&group(FaultKind::Kill, false)], (vec![1_400], 0));
        assert_eq!(group(FaultKind::Kill, true).name(), "kill-leader");
        assert_eq!(by.len(), 3, "the fault not injected is left out");
    }
}
