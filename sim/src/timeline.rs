//! [`Timeline`]: where a workload's external events come from, and [`execute`], the one loop
//! that carries them out.
//!
//! A timeline either decides its events as the run goes (a workload's generator, drawing from
//! the harness's random stream and looking at a [`Snapshot`] of the cluster), or follows a
//! [`Schedule`] ([`Following`]). The loop is the same for both: wait, take a snapshot, ask for
//! the events, apply and record them. The snapshot is taken in both modes whether it is needed or
//! not, so following the whole schedule a run recorded repeats the run exactly (on the
//! deterministic engine, thread switch for thread switch), and a schedule with events removed
//! differs only where the removed events acted.

use crate::cluster::{Cluster, Restarted};
use crate::leader_faults::{LeaderFaultKind, LeaderFaults};
use crate::schedule::{Event, Schedule, ScheduleRecorder, Timed};
use node::{Command, Membership, MembershipChange, NodeId};
use runspec::RunFigures;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The cluster as a timeline sees it when it decides the next events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Nodes with a running instance.
    pub running: Vec<NodeId>,
    /// Nodes without one.
    pub crashed: Vec<NodeId>,
    /// Running nodes whose instance stopped itself (a save crashed under it).
    pub stopped: Vec<NodeId>,
    /// The running, connected node that leads in the highest term.
    pub leader: Option<NodeId>,
    /// Running nodes whose log holds entries not yet known committed.
    pub uncommitted: BTreeSet<NodeId>,
    /// The configuration each running node follows.
    pub memberships: BTreeMap<NodeId, Membership>,
}

impl Snapshot {
    /// Looks at every node of `cluster`.
    pub fn take(cluster: &Cluster) -> Snapshot {
        let mut snapshot = Snapshot {
            leader: cluster.current_leader(),
            ..Snapshot::default()
        };
        for id in cluster.ids() {
            match cluster.status(id) {
                Some(status) => {
                    snapshot.running.push(id);
                    if cluster.is_stopped(id) {
                        snapshot.stopped.push(id);
                    }
                    if status.last_log_index > status.commit_index {
                        snapshot.uncommitted.insert(id);
                    }
                    snapshot.memberships.insert(id, status.membership);
                }
                None => snapshot.crashed.push(id),
            }
        }
        snapshot
    }
}

/// A source of external events.
pub trait Timeline {
    /// How long to wait before the next group of events (`elapsed` since the run started), or
    /// `None` when the timeline has ended.
    fn wait(&mut self, cluster: &Cluster, elapsed: Duration) -> Option<Duration>;
    /// The next group of events, decided at `elapsed` with the cluster as `snapshot` shows it.
    fn decide(&mut self, cluster: &Cluster, snapshot: &Snapshot, elapsed: Duration) -> Vec<Event>;
}

/// Follows a schedule: each group of events at its time.
pub struct Following {
    events: std::vec::IntoIter<Timed>,
    pending: Option<Timed>,
}

impl Following {
    /// Follows `schedule`'s events.
    pub fn new(schedule: &Schedule) -> Following {
        Following {
            events: schedule.events.clone().into_iter(),
            pending: None,
        }
    }

    fn peek(&mut self) -> Option<&Timed> {
        if self.pending.is_none() {
            self.pending = self.events.next();
        }
        self.pending.as_ref()
    }
}

impl Timeline for Following {
    fn wait(&mut self, _: &Cluster, elapsed: Duration) -> Option<Duration> {
        self.peek().map(|next| next.at.saturating_sub(elapsed))
    }

    /// Every event due at `elapsed`, as one group. Following the schedule its own run recorded,
    /// that is exactly the group the run decided at that instant; a schedule edited by hand or
    /// by the shrinker can have events that are overdue (their cluster took longer to carry out
    /// the ones before), and they come together.
    fn decide(&mut self, _: &Cluster, _: &Snapshot, elapsed: Duration) -> Vec<Event> {
        let mut group = Vec::new();
        while self.peek().is_some_and(|next| next.at <= elapsed) {
            group.push(self.pending.take().expect("peeked").event);
        }
        group
    }
}

/// The wait between two groups of events when the second one is already due: one microsecond,
/// the resolution of a schedule file's times.
const SMALLEST_WAIT: Duration = Duration::from_micros(1);

/// Runs `timeline` on `cluster` until it ends: wait (with the invariants checked), look, decide,
/// apply, record; each fault that hits the leader goes into `on_leader` with its time. Returns
/// what the faults amounted to.
pub fn execute(
    cluster: &Cluster,
    timeline: &mut dyn Timeline,
    recorder: &ScheduleRecorder,
    on_leader: &mut LeaderFaults,
) -> RunFigures {
    let started = cluster.clock().now();
    let mut counts = RunFigures::default();
    let mut faulty = false;
    let mut applied_before = None;
    let mut first = true;
    while let Some(wait) = timeline.wait(cluster, cluster.clock().now() - started) {
        // One group per instant: a run that follows the recorded events groups them by time, and
        // must wake exactly when this one did. Carrying out a group takes simulated time (a
        // crash joins the node's threads), so a timeline can find its next time already passed:
        // it then waits the smallest step, in both modes alike.
        let wait = if first { wait } else { wait.max(SMALLEST_WAIT) };
        first = false;
        cluster.sleep(wait);
        let elapsed = cluster.clock().now() - started;
        if let Some(before) = applied_before.take() {
            if faulty && cluster.invariants().observed().highest_applied > before {
                counts.rounds_committing_under_faults += 1;
            }
        }
        let snapshot = Snapshot::take(cluster);
        for event in timeline.decide(cluster, &snapshot, elapsed) {
            let nodes = cluster.ids().len();
            count(&mut counts, &event, &snapshot, nodes);
            if let Some(kind) = LeaderFaultKind::of(&event, snapshot.leader, nodes) {
                on_leader.record(kind, cluster.clock().now());
            }
            apply(cluster, &event, &mut counts);
            recorder.record(elapsed, event);
        }
        faulty = fault_in_force(cluster);
        applied_before = Some(cluster.invariants().observed().highest_applied);
    }
    counts
}

/// Carries out one event.
pub fn apply(cluster: &Cluster, event: &Event, counts: &mut RunFigures) {
    match event {
        Event::Offer { to, value } => {
            if cluster
                .start(*to, Command::from_text(&format!("c{value}")))
                .is_some()
            {
                counts.commands_accepted += 1;
            }
        }
        Event::Crash(node) => cluster.crash(*node),
        Event::TearSave(node) => cluster.tear_next_save(*node),
        Event::CutPowerInSync(node) => cluster.cut_power_in_next_sync(*node),
        Event::FailSync(node) => cluster.fail_next_sync(*node),
        Event::FillDisk(node) => cluster.fill_disk(*node),
        Event::MisdirectSave(node) => cluster.misdirect_next_save(*node),
        Event::CorruptCopy(node) => cluster.corrupt_one_copy(*node),
        Event::Restart(node) => {
            let restarted = cluster
                .restart_unless_unreadable(*node)
                .unwrap_or_else(|error| panic!("{node} cannot restart: {error}"));
            if restarted == Restarted::Refused {
                counts.refused_starts += 1;
            }
        }
        Event::Pause(node) => cluster.pause(*node),
        Event::Resume(node) => cluster.resume(*node),
        Event::Partition(groups) => cluster.partition(groups),
        Event::Cut(from, to) => cluster.partition_one_way(*from, *to),
        Event::Heal => cluster.heal(),
        Event::Unreliable(on) => cluster.set_unreliable(*on),
        Event::ClockRate(node, rate) => cluster.set_clock_rate(*node, *rate),
        Event::ClockJump(node, by) => cluster.jump_clock(*node, *by),
        Event::AddLearner(node) => change(cluster, MembershipChange::AddLearner(*node), counts),
        Event::Promote(node) => change(cluster, MembershipChange::Promote(*node), counts),
        Event::Demote(node) => change(cluster, MembershipChange::Demote(*node), counts),
        Event::RemoveMember(node) => change(cluster, MembershipChange::Remove(*node), counts),
        Event::TransferLeadership(node) => {
            if cluster.transfer_leadership(*node) {
                counts.leadership_transfers += 1;
            }
        }
        Event::End => {}
    }
}

/// Asks the leader to make `change`, counting it if taken (a refusal, or no leader, is
/// nothing: the timeline asks again another time).
fn change(cluster: &Cluster, change: MembershipChange, counts: &mut RunFigures) {
    if cluster.change_membership(change).is_some() {
        counts.membership_changes += 1;
    }
}

fn count(counts: &mut RunFigures, event: &Event, snapshot: &Snapshot, nodes: usize) {
    match event {
        Event::Offer { .. } => counts.commands_offered += 1,
        Event::Crash(node) => {
            counts.crashes += 1;
            if snapshot.uncommitted.contains(node) {
                counts.crashes_mid_replication += 1;
            }
        }
        Event::Restart(_) => counts.restarts += 1,
        Event::Partition(_) => {
            counts.partitions += 1;
            if LeaderFaultKind::of(event, snapshot.leader, nodes)
                == Some(LeaderFaultKind::CutOffWithMinority)
            {
                counts.leader_isolations += 1;
            }
        }
        Event::Cut(..) => counts.one_way_cuts += 1,
        Event::Pause(_) => counts.pauses += 1,
        Event::ClockRate(..) | Event::ClockJump(..) => counts.clock_changes += 1,
        _ => {}
    }
}

/// Whether some node is down or some pair of running nodes cannot reach each other.
fn fault_in_force(cluster: &Cluster) -> bool {
    let ids = cluster.ids();
    let all_running = ids.iter().all(|&id| cluster.is_running(id));
    let all_reachable = ids.iter().all(|&a| {
        ids.iter().all(|&b| {
            cluster.network().reachable(a, b) || !cluster.is_running(a) || !cluster.is_running(b)
        })
    });
    !(all_running && all_reachable)
}
