//! The chaos workload: an unreliable network, random crashes and restarts, symmetric and one-way
//! partitions, clocks drifting apart, and commands submitted on every node, round after round, with every continuous
//! invariant on; then every fault heals and the cluster must commit again within a bound, a
//! follower cut off from the leader alone must not depose it
//! ([`crate::non_disruption_probe`]), and one fault on its leader must cost no more than that
//! fault's bound ([`crate::availability_probe`]).

use crate::cluster::Cluster;
use crate::leader_faults::{LeaderFaultKind, LeaderFaults};
use crate::membership_changes;
use crate::run_end::{commit_after_healing, finish_run, heal_everything, probe_the_end};
use crate::runner::Sim;
use crate::schedule::{Event, Schedule, ScheduleRecorder};
use crate::settings::ClusterSettings;
use crate::skew::SkewDraws;
use crate::timeline::{execute, Following, Snapshot, Timeline};
use node::{Command, NodeId};
use runspec::RunSpec;
pub use runspec::{FaultMix, FaultWindows, RunFigures, SimStorage};
use std::time::Duration;

/// The shape of a chaos run.
#[derive(Clone, Debug)]
pub struct ChaosConfig {
    /// The cluster, its faults and its storage.
    pub cluster: ClusterSettings,
    /// Fault rounds.
    pub rounds: u32,
    /// Shortest simulated duration of a round.
    pub round_min: Duration,
    /// Longest simulated duration of a round.
    pub round_max: Duration,
    /// Stop the rounds once this much simulated time has passed (else run every round).
    pub duration: Option<Duration>,
}

impl Default for ChaosConfig {
    fn default() -> Self {
        ChaosConfig {
            cluster: ClusterSettings::default(),
            rounds: 200,
            round_min: Duration::from_millis(50),
            round_max: Duration::from_millis(500),
            duration: None,
        }
    }
}

impl ChaosConfig {
    /// The chaos run `spec` says (its seed is the simulation's).
    pub fn from_spec(spec: &RunSpec) -> ChaosConfig {
        ChaosConfig {
            cluster: ClusterSettings::from_spec(spec),
            rounds: spec.rounds,
            duration: spec.duration,
            ..ChaosConfig::default()
        }
    }
}

/// Where a chaos run's events come from.
pub enum ChaosEvents<'a> {
    /// Decided as the run goes, from the harness's random stream and the configuration.
    Generated,
    /// Exactly these (a recorded or shrunk schedule).
    Following(&'a Schedule),
}

/// Runs the chaos workload on a fresh cluster, its events generated and recorded in
/// `recorder`; panics (failing the simulation) on any invariant violation or if the healed
/// cluster cannot commit within 10 s of simulated time.
pub fn run_chaos(sim: &Sim, config: &ChaosConfig) -> RunFigures {
    run_chaos_with(
        sim,
        config,
        ChaosEvents::Generated,
        &ScheduleRecorder::default(),
    )
}

/// [`run_chaos`] with its events from `events`, recording what it does in `recorder`.
pub fn run_chaos_with(
    sim: &Sim,
    config: &ChaosConfig,
    events: ChaosEvents<'_>,
    recorder: &ScheduleRecorder,
) -> RunFigures {
    let cluster = Cluster::new(sim, config.cluster.cluster_config(sim));
    let started = cluster.clock().now();
    let ids = cluster.ids();
    let mut on_leader = LeaderFaults::default();
    let counts = match events {
        ChaosEvents::Generated => execute(
            &cluster,
            &mut Rounds::new(config, ids.len()),
            recorder,
            &mut on_leader,
        ),
        ChaosEvents::Following(schedule) => execute(
            &cluster,
            &mut Following::new(schedule),
            recorder,
            &mut on_leader,
        ),
    };
    let mut report = counts;
    let faults = config.cluster.faults;
    // Heal everything (in liveness mode, all but a minority failed for good); the cluster must
    // recover.
    let failed_for_good = if config.cluster.faults.liveness {
        minority_failed_for_good(sim, &ids, cluster.current_leader())
    } else {
        Vec::new()
    };
    on_leader.record(LeaderFaultKind::Healed, cluster.clock().now());
    let crashed_for_good: Vec<NodeId> = (failed_for_good.iter())
        .filter(|(_, how)| *how == FailedForGood::Crashed)
        .map(|&(id, _)| id)
        .collect();
    heal_everything(&cluster, faults, &crashed_for_good, &mut report);
    for &(id, how) in &failed_for_good {
        match how {
            FailedForGood::Crashed => cluster.crash(id),
            FailedForGood::CutOff => cluster.disconnect(id),
            FailedForGood::Deaf => {
                for other in cluster.others(id) {
                    cluster.partition_one_way(other, id);
                }
            }
        }
    }
    let live = config.cluster.nodes - failed_for_good.len();
    commit_after_healing(&cluster, faults, live, Command::from_text("after-chaos"));
    cluster.check_snapshot_policy(config.cluster.snapshot_threshold);
    let probed = probe_the_end(sim, &cluster, faults);
    finish_run(&cluster, started, &on_leader, &probed, report)
}

/// How a node of liveness mode's minority fails for good.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FailedForGood {
    /// Crashed, never restarted.
    Crashed,
    /// Running, but cut off from every other node.
    CutOff,
    /// Running and sending, but hearing nothing: as the leader, its heartbeats hold the others
    /// until check-quorum deposes it.
    Deaf,
}

/// Liveness mode's minority: 1 to (n - 1) / 2 of `ids` (none in a cluster of two), each
/// crashed, cut off or deaf, drawn from a stream of the seed's own so that a run following a
/// recorded or shrunk schedule fails the same nodes (given the same `leader`: half the time the
/// first one failed is the leader at the end of the rounds, where a failure costs the most).
fn minority_failed_for_good(
    sim: &Sim,
    ids: &[NodeId],
    leader: Option<NodeId>,
) -> Vec<(NodeId, FailedForGood)> {
    let mut draws = sim.rng(LIVENESS_STREAM);
    let largest = (ids.len() - 1) / 2;
    if largest == 0 {
        return Vec::new();
    }
    let count = 1 + draws.index(largest);
    let leader_first = draws.chance(0.5);
    let mut candidates = ids.to_vec();
    (0..count)
        .map(|_| {
            let position = match leader {
                Some(leader) if leader_first => candidates
                    .iter()
                    .position(|&id| id == leader)
                    .unwrap_or_else(|| draws.index(candidates.len())),
                _ => draws.index(candidates.len()),
            };
            let node = candidates.remove(position);
            let how = match draws.index(3) {
                0 => FailedForGood::Crashed,
                1 => FailedForGood::CutOff,
                _ => FailedForGood::Deaf,
            };
            (node, how)
        })
        .collect()
}

/// The random stream of liveness mode's minority.
const LIVENESS_STREAM: u64 = 0x11fe_0001;

/// The chaos generator: round after round, a command offered to every node and one random fault
/// (or repair), then a random pause; after the last round (or the configured duration), the end.
struct Rounds<'c> {
    config: &'c ChaosConfig,
    nodes: usize,
    round: u32,
    next_value: u64,
    pause: Duration,
    ended: bool,
    /// Nodes this generator paused and has not resumed (with `FaultMix::pauses`).
    paused: Vec<NodeId>,
}

impl<'c> Rounds<'c> {
    fn new(config: &'c ChaosConfig, nodes: usize) -> Rounds<'c> {
        Rounds {
            config,
            nodes,
            round: 0,
            next_value: 1,
            pause: Duration::ZERO,
            ended: false,
            paused: Vec::new(),
        }
    }

    /// With pauses in the mix, one time in four a running node that is not paused is paused
    /// (the leader, when there is one, half the time), one time in four a paused one resumed.
    /// Draws nothing without them, so seeds run as before.
    /// `crashing` is the node the round crashes, if any.
    fn pause_or_resume(
        &mut self,
        cluster: &Cluster,
        snapshot: &Snapshot,
        crashing: Option<NodeId>,
    ) -> Option<Event> {
        if !self.config.cluster.faults.pauses {
            return None;
        }
        match cluster.random(4) {
            0 => {
                let candidates: Vec<NodeId> = (snapshot.running.iter().copied())
                    .filter(|node| !self.paused.contains(node) && Some(*node) != crashing)
                    .collect();
                let leader = snapshot.leader.filter(|leader| candidates.contains(leader));
                let node = match leader {
                    Some(leader) if cluster.random(2) == 0 => leader,
                    _ if candidates.is_empty() => return None,
                    _ => candidates[cluster.random(candidates.len())],
                };
                self.paused.push(node);
                Some(Event::Pause(node))
            }
            1 if !self.paused.is_empty() => {
                let node = self.paused.remove(cluster.random(self.paused.len()));
                Some(Event::Resume(node))
            }
            _ => None,
        }
    }
}

impl Timeline for Rounds<'_> {
    fn wait(&mut self, _: &Cluster, _: Duration) -> Option<Duration> {
        (!self.ended).then_some(self.pause)
    }

    fn decide(&mut self, cluster: &Cluster, snapshot: &Snapshot, elapsed: Duration) -> Vec<Event> {
        let out_of_time = self
            .config
            .duration
            .is_some_and(|duration| elapsed >= duration);
        if self.round == self.config.rounds || out_of_time {
            self.ended = true;
            // Nodes still paused go on as the run heals (`resume_every_paused_node`).
            return vec![Event::End];
        }
        self.round += 1;
        let mut events: Vec<Event> = (0..self.nodes as u32)
            .map(|id| {
                let value = self.next_value;
                self.next_value += 1;
                Event::Offer {
                    to: NodeId(id),
                    value,
                }
            })
            .collect();
        // A node whose save a crash tore has stopped: its machine is down.
        let stopped: Vec<Event> = snapshot
            .stopped
            .iter()
            .map(|&node| Event::Crash(node))
            .collect();
        let fault = choose_fault(cluster, snapshot, self.config.cluster.faults);
        let crashing = match fault {
            Some(Event::Crash(node)) => Some(node),
            _ => None,
        };
        // A crashed node's next instance is not paused.
        self.paused
            .retain(|paused| Some(*paused) != crashing && !snapshot.stopped.contains(paused));
        events.extend(stopped);
        events.extend(fault);
        events.extend(self.pause_or_resume(cluster, snapshot, crashing));
        self.pause = cluster.random_duration(self.config.round_min, self.config.round_max);
        events
    }
}

/// One random fault (or repair) for a cluster as `snapshot` shows it.
fn choose_fault(cluster: &Cluster, snapshot: &Snapshot, faults: FaultMix) -> Option<Event> {
    let ids = cluster.ids();
    // Drawn only with membership changes on, so every other run draws what it did before.
    if faults.membership && cluster.random(4) == 0 {
        return membership_changes::choose(cluster, snapshot);
    }
    let pick = |nodes: &[NodeId]| nodes[cluster.random(nodes.len())];
    match cluster.random(10) {
        0 | 1 if faults.crashes && snapshot.running.len() > 1 => {
            let node = pick(&snapshot.running);
            // With torn writes, half of the crashes come in the middle of the node's next save;
            // with power losses, half of the rest in the middle of the leader's next sync of its
            // own entries (the window in which a leader's copy is sent and not yet durable);
            // with misdirected writes, half of the rest right after a misdirected save.
            if faults.torn_writes && cluster.random(2) == 0 {
                Some(Event::TearSave(node))
            } else if faults.power_loss && cluster.random(2) == 0 {
                let target = snapshot.leader.unwrap_or(node);
                // On the server's log, a third of these fail the sync instead of cutting the
                // power in it, and a sixth fill the disk (drawn only there, so the two-copy
                // disk's runs are unchanged).
                let on_log = cluster.storage() == SimStorage::Log;
                match if on_log { cluster.random(3) } else { 2 } {
                    0 => Some(Event::FailSync(target)),
                    1 if cluster.random(2) == 0 => Some(Event::FillDisk(target)),
                    _ => Some(Event::CutPowerInSync(target)),
                }
            } else if faults.misdirected_writes && cluster.random(2) == 0 {
                Some(Event::MisdirectSave(node))
            } else {
                Some(Event::Crash(node))
            }
        }
        2 | 3 if faults.crashes && !snapshot.crashed.is_empty() => {
            // With corruption, half of the restarts are put off by a bit flipped at rest in
            // one copy of a crashed node's state (its next restart reads the disk).
            if faults.corruption && cluster.random(2) == 0 {
                Some(Event::CorruptCopy(pick(&snapshot.crashed)))
            } else {
                Some(Event::Restart(pick(&snapshot.crashed)))
            }
        }
        4 | 5 if faults.partitions => {
            let mut shuffled = ids.clone();
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, cluster.random(i + 1));
            }
            let split = 1 + cluster.random(ids.len() - 1);
            let (left, right) = shuffled.split_at(split);
            Some(Event::partition(vec![left.to_vec(), right.to_vec()]))
        }
        6 if faults.one_way => {
            let (from, to) = (pick(&ids), pick(&ids));
            (from != to).then_some(Event::Cut(from, to))
        }
        7 => Some(Event::Heal),
        9 => faults.skew.random_event(cluster),
        8 if faults.partitions => {
            // Cut the current leader off with at most one companion: the partition that matters.
            let leader = snapshot.leader?;
            let companion = pick(&ids);
            let minority: Vec<NodeId> = if companion == leader {
                vec![leader]
            } else {
                vec![leader, companion]
            };
            let majority: Vec<NodeId> = ids
                .iter()
                .copied()
                .filter(|id| !minority.contains(id))
                .collect();
            // In a two-node cluster the leader and its companion are everyone: no partition.
            (!majority.is_empty()).then(|| Event::partition(vec![minority, majority]))
        }
        _ => None,
    }
}
