//! The faults of a timeline that hit the leader, and how long each stopped the commits: from the
//! fault until a leader with a majority next committed (the run's [`crate::commit_timeline`]).
//! Faults elsewhere leave the leader its majority and are not counted. Chaos overlaps its faults,
//! so a window can include the next fault's cost; the bounds are checked on one fault at a time
//! (`scenarios::availability`), and these windows say what a range of seeds met.

use crate::cluster::Cluster;
use crate::schedule::Event;
use node::NodeId;
use runspec::FaultWindows;
use threadsim::time::Instant;

/// A kind of fault on the leader, as timelines inject them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaderFaultKind {
    /// The leader crashed.
    Crashed,
    /// The leader's threads were paused.
    Paused,
    /// A partition left the leader on a side without a majority.
    CutOffWithMinority,
    /// A one-way cut of a link into the leader (it no longer hears that peer).
    LinkInCut,
    /// A one-way cut of a link out of the leader (that peer no longer hears it).
    LinkOutCut,
    /// The leader's clock changed rate or jumped.
    ClockChanged,
    /// The end of a run: every fault healed at once.
    Healed,
}

impl LeaderFaultKind {
    /// Its name in tables and JSON (the one-fault scenarios use the same names for the same
    /// faults).
    pub fn name(self) -> &'static str {
        match self {
            LeaderFaultKind::Crashed => "leader crashed",
            LeaderFaultKind::Paused => "leader paused",
            LeaderFaultKind::CutOffWithMinority => "leader cut off with a minority",
            LeaderFaultKind::LinkInCut => "a link into the leader cut",
            LeaderFaultKind::LinkOutCut => "a link out of the leader cut",
            LeaderFaultKind::ClockChanged => "leader's clock changed",
            LeaderFaultKind::Healed => "every fault healed (the run's end)",
        }
    }

    /// The kind of `event` on a cluster of `nodes` led by `leader`, if it hits the leader.
    pub fn of(event: &Event, leader: Option<NodeId>, nodes: usize) -> Option<LeaderFaultKind> {
        let leader = leader?;
        match event {
            Event::Crash(node) if *node == leader => Some(LeaderFaultKind::Crashed),
            Event::Pause(node) if *node == leader => Some(LeaderFaultKind::Paused),
            Event::Partition(groups) => {
                let side = groups.iter().find(|group| group.contains(&leader));
                let with_leader = side.map_or(1, |group| {
                    group.iter().filter(|id| (id.0 as usize) < nodes).count()
                });
                (2 * with_leader <= nodes).then_some(LeaderFaultKind::CutOffWithMinority)
            }
            Event::Cut(_, to) if *to == leader => Some(LeaderFaultKind::LinkInCut),
            Event::Cut(from, _) if *from == leader => Some(LeaderFaultKind::LinkOutCut),
            Event::ClockRate(node, _) | Event::ClockJump(node, _) if *node == leader => {
                Some(LeaderFaultKind::ClockChanged)
            }
            _ => None,
        }
    }
}

/// The faults on the leader of one run, with when each began.
#[derive(Debug, Default)]
pub struct LeaderFaults {
    faults: Vec<(LeaderFaultKind, Instant)>,
}

impl LeaderFaults {
    /// A fault of `kind` began at `at`.
    pub fn record(&mut self, kind: LeaderFaultKind, at: Instant) {
        self.faults.push((kind, at));
    }

    /// Each fault's window on `cluster` as it committed so far.
    pub fn windows(&self, cluster: &Cluster) -> FaultWindows {
        let mut windows = FaultWindows::default();
        for &(kind, at) in &self.faults {
            let next = cluster.invariants().first_commit_after(at);
            windows.record(kind.name(), next.map(|next| next - at));
        }
        windows
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn only_faults_that_hit_the_leader_are_counted() {
        let kind = |event: &Event| LeaderFaultKind::of(event, Some(NodeId(0)), 5);
        assert_eq!(
            kind(&Event::Crash(NodeId(0))),
            Some(LeaderFaultKind::Crashed)
        );
        assert_eq!(kind(&Event::Crash(NodeId(1))), None);
        assert_eq!(
            kind(&Event::Pause(NodeId(0))),
            Some(LeaderFaultKind::Paused)
        );
        let minority = Event::partition(vec![
            vec![NodeId(0), NodeId(1)],
            vec![NodeId(2), NodeId(3), NodeId(4)],
        ]);
        assert_eq!(kind(&minority), Some(LeaderFaultKind::CutOffWithMinority));
        let majority = Event::partition(vec![
            vec![NodeId(0), NodeId(1), NodeId(2)],
            vec![NodeId(3), NodeId(4)],
        ]);
        assert_eq!(kind(&majority), None);
        assert_eq!(
            kind(&Event::Cut(NodeId(2), NodeId(0))),
            Some(LeaderFaultKind::LinkInCut)
        );
        assert_eq!(
            kind(&Event::Cut(NodeId(0), NodeId(2))),
            Some(LeaderFaultKind::LinkOutCut)
        );
        assert_eq!(kind(&Event::Cut(NodeId(1), NodeId(2))), None);
        assert_eq!(LeaderFaultKind::of(&Event::Crash(NodeId(0)), None, 5), None);
    }
}
