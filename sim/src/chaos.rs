//! The chaos workload: an unreliable network, random crashes and restarts, symmetric and one-way
//! partitions, and commands submitted on every node, round after round, with every continuous
//! invariant on; then every fault heals and the cluster must commit again within a bound.

use crate::cluster::{Cluster, ClusterConfig};
use crate::runner::Sim;
use node::{Command, MutationSet, NodeId};
use std::time::Duration;

/// The shape of a chaos run.
#[derive(Clone, Debug)]
pub struct ChaosConfig {
    /// Cluster size.
    pub nodes: usize,
    /// Fault rounds.
    pub rounds: u32,
    /// Shortest simulated duration of a round.
    pub round_min: Duration,
    /// Longest simulated duration of a round.
    pub round_max: Duration,
    /// Whether the network loses 10% of requests and 10% of replies.
    pub unreliable: bool,
    /// Deliberately broken behaviours switched on in every node.
    pub mutations: MutationSet,
    /// Which kinds of fault are injected.
    pub faults: FaultMix,
    /// Stop the rounds once this much simulated time has passed (else run every round).
    pub duration: Option<Duration>,
}

/// The kinds of fault a chaos run injects (message loss is [`ChaosConfig::unreliable`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultMix {
    /// Crashes and restarts.
    pub crashes: bool,
    /// Symmetric partitions (including the leader cut off with a minority).
    pub partitions: bool,
    /// One-way link cuts.
    pub one_way: bool,
}

impl FaultMix {
    /// Every kind of fault.
    pub const ALL: FaultMix = FaultMix {
        crashes: true,
        partitions: true,
        one_way: true,
    };
}

impl Default for ChaosConfig {
    fn default() -> Self {
        ChaosConfig {
            nodes: 5,
            rounds: 200,
            round_min: Duration::from_millis(50),
            round_max: Duration::from_millis(500),
            unreliable: true,
            mutations: MutationSet::default(),
            faults: FaultMix::ALL,
            duration: None,
        }
    }
}

/// What a chaos run did: the evidence that it exercised what it claims to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChaosReport {
    /// Simulated time covered.
    pub simulated: Duration,
    /// Leaders elected (distinct terms with a leader).
    pub leaders_elected: u64,
    /// Highest index applied anywhere.
    pub highest_applied: u64,
    /// Crashes.
    pub crashes: u64,
    /// Crashes of a node whose log held entries not yet known committed.
    pub crashes_mid_replication: u64,
    /// Restarts.
    pub restarts: u64,
    /// Symmetric partitions.
    pub partitions: u64,
    /// Partitions that left the leader in a minority.
    pub leader_isolations: u64,
    /// One-way link cuts.
    pub one_way_cuts: u64,
    /// Rounds in which entries were committed while some fault was in force.
    pub rounds_committing_under_faults: u64,
    /// Commands offered to nodes.
    pub commands_offered: u64,
    /// Commands a node accepted as leader.
    pub commands_accepted: u64,
    /// Client operations checked for linearizability (key-value workload).
    pub operations_checked: u64,
}

/// Runs the chaos workload on a fresh cluster; panics (failing the simulation) on any invariant
/// violation or if the healed cluster cannot commit within 10 s of simulated time.
pub fn run_chaos(sim: &Sim, config: &ChaosConfig) -> ChaosReport {
    let mut cluster_config = ClusterConfig::new(config.nodes);
    cluster_config.net.unreliable = config.unreliable;
    cluster_config.node.mutations = config.mutations.clone();
    let cluster = Cluster::new(sim, cluster_config);
    let started = cluster.clock().now();
    let ids = cluster.ids();
    let mut report = ChaosReport::default();
    let mut faulty = false;
    let mut value = 0u64;
    for _ in 0..config.rounds {
        if config
            .duration
            .is_some_and(|duration| cluster.clock().now() - started >= duration)
        {
            break;
        }
        for &id in &ids {
            value += 1;
            report.commands_offered += 1;
            if cluster
                .start(id, Command::from_text(&format!("c{value}")))
                .is_some()
            {
                report.commands_accepted += 1;
            }
        }
        faulty |= inject_fault(&cluster, &ids, config.faults, &mut report);
        let applied_before = cluster.invariants().observed().highest_applied;
        cluster.sleep(cluster.random_duration(config.round_min, config.round_max));
        if faulty && cluster.invariants().observed().highest_applied > applied_before {
            report.rounds_committing_under_faults += 1;
        }
    }
    // Heal everything; the cluster must recover.
    cluster.heal();
    cluster.set_unreliable(false);
    for &id in &ids {
        if !cluster.is_running(id) {
            cluster
                .restart(id)
                .unwrap_or_else(|error| panic!("{id} cannot restart: {error}"));
            report.restarts += 1;
        }
    }
    cluster.one(Command::from_text("after-chaos"), config.nodes, true);
    let observed = cluster.invariants().observed();
    report.leaders_elected = observed.leaders_elected;
    report.highest_applied = observed.highest_applied.0;
    report.simulated = cluster.clock().now() - started;
    cluster.shutdown();
    report
}

/// Applies one random fault (or repair); returns whether a fault is now in force.
fn inject_fault(
    cluster: &Cluster,
    ids: &[NodeId],
    faults: FaultMix,
    report: &mut ChaosReport,
) -> bool {
    let pick = |nodes: &[NodeId]| nodes[cluster.random(nodes.len())];
    let running: Vec<NodeId> = ids
        .iter()
        .copied()
        .filter(|&id| cluster.is_running(id))
        .collect();
    let crashed: Vec<NodeId> = ids
        .iter()
        .copied()
        .filter(|&id| !cluster.is_running(id))
        .collect();
    match cluster.random(10) {
        0 | 1 if faults.crashes && running.len() > 1 => {
            let victim = pick(&running);
            if cluster
                .status(victim)
                .is_some_and(|s| s.last_log_index > s.commit_index)
            {
                report.crashes_mid_replication += 1;
            }
            cluster.crash(victim);
            report.crashes += 1;
        }
        2 | 3 if faults.crashes && !crashed.is_empty() => {
            let node = pick(&crashed);
            cluster
                .restart(node)
                .unwrap_or_else(|error| panic!("{node} cannot restart: {error}"));
            report.restarts += 1;
        }
        4 | 5 if faults.partitions => {
            let mut shuffled = ids.to_vec();
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, cluster.random(i + 1));
            }
            let split = 1 + cluster.random(ids.len() - 1);
            let (left, right) = shuffled.split_at(split);
            if let Some(leader) = cluster.current_leader() {
                let side = if left.contains(&leader) { left } else { right };
                if 2 * side.len() <= ids.len() {
                    report.leader_isolations += 1;
                }
            }
            cluster
                .network()
                .partition(&[left.to_vec(), right.to_vec()]);
            report.partitions += 1;
        }
        6 if faults.one_way => {
            let from = pick(ids);
            let to = pick(ids);
            if from != to {
                cluster.partition_one_way(from, to);
                report.one_way_cuts += 1;
            }
        }
        7 => cluster.heal(),
        8 if faults.partitions => {
            // Cut the current leader off with at most one companion: the partition that matters.
            if let Some(leader) = cluster.current_leader() {
                let companion = pick(ids);
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
                cluster.partition(&[minority, majority]);
                report.partitions += 1;
                report.leader_isolations += 1;
            }
        }
        _ => {}
    }
    let all_running = ids.iter().all(|&id| cluster.is_running(id));
    let all_reachable = ids.iter().all(|&a| {
        ids.iter().all(|&b| {
            cluster.network().reachable(a, b) || !cluster.is_running(a) || !cluster.is_running(b)
        })
    });
    !(all_running && all_reachable)
}
