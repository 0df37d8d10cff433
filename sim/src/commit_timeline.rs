//! When the cluster committed: each advance of the highest commit index any node reported, with
//! its simulated time. The first node to reach a new commit index is the leader that got a
//! majority for it, so the advances are the instants a leader with a majority committed; the
//! unavailability windows of faults are read from them.

use node::LogIndex;
use threadsim::time::Instant;

/// The advances of the highest commit index, in time order.
#[derive(Debug, Default)]
pub struct CommitTimeline {
    advances: Vec<(Instant, LogIndex)>,
}

impl CommitTimeline {
    /// A node reported commit index `index` at `at`: an advance if no node had reached it.
    pub fn on_commit(&mut self, at: Instant, index: LogIndex) {
        let highest = self.advances.last().map(|&(_, index)| index);
        if highest.is_none_or(|highest| index > highest) {
            assert!(
                self.advances.last().is_none_or(|&(last, _)| last <= at),
                "commit advances are reported in time order"
            );
            self.advances.push((at, index));
        }
    }

    /// The first advance strictly after `at`, if any: when the cluster next committed.
    pub fn first_after(&self, at: Instant) -> Option<Instant> {
        let next = self.advances.partition_point(|&(when, _)| when <= at);
        self.advances.get(next).map(|&(when, _)| when)
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::time::Duration;

    fn t(ms: u64) -> Instant {
        Instant::from_epoch(Duration::from_millis(ms))
    }

    #[test]
    fn the_next_commit_after_an_instant_is_the_first_higher_index_reported_after_it() {
        let mut timeline = CommitTimeline::default();
        timeline.on_commit(t(10), LogIndex(1));
        timeline.on_commit(t(20), LogIndex(1)); // a follower learning it: no advance
        timeline.on_commit(t(30), LogIndex(3));
        timeline.on_commit(t(40), LogIndex(2)); // behind: no advance
        assert_eq!(timeline.first_after(t(0)), Some(t(10)));
        assert_eq!(timeline.first_after(t(10)), Some(t(30)));
        assert_eq!(timeline.first_after(t(15)), Some(t(30)));
        assert_eq!(timeline.first_after(t(30)), None);
    }
}
