//! The cluster scenarios shuttle explores. Each draws its seed from shuttle's random source, so
//! the schedule alone decides the run.

use models::Verdict;
use node::{Command, Membership, MembershipChange, MutationSet, NodeId, Term};
use shuttle::rand::{thread_rng, RngCore};
use sim::ClusterSettings;
use sim::{
    check_kv_history, run_kv_workload, Cluster, ClusterConfig, KvRun, KvWorkloadConfig, Sim,
};
use std::time::Duration;

/// Runs `body` on a fresh cluster of `config`, with this shuttle task registered as the
/// simulation's main thread; shuts the cluster down afterwards.
fn with_cluster(config: ClusterConfig, body: impl FnOnce(&Cluster)) {
    let sim = Sim::new(thread_rng().next_u64());
    let clock = sim.clock();
    let ticket = clock.thread_register("main");
    let cluster = Cluster::new(&sim, config);
    body(&cluster);
    cluster.shutdown();
    drop(cluster);
    clock.thread_unregister(ticket);
}

fn cmd(value: u64) -> Command {
    Command::from_text(&value.to_string())
}

/// An election, a commit, a follower crash and restart, and the leader cut off alone for a
/// second, on an unreliable network; every continuous invariant on.
pub fn elections_and_replication(nodes: usize, mutations: MutationSet) {
    let mut config = ClusterConfig::new(nodes);
    config.net.unreliable = true;
    config.node.mutations = mutations;
    with_cluster(config, |cluster| {
        let leader = cluster.check_one_leader();
        cluster.one(cmd(1), nodes, true);
        let follower = cluster.others(leader)[0];
        cluster.crash(follower);
        cluster.one(cmd(2), nodes - 1, true);
        cluster
            .restart(follower)
            .unwrap_or_else(|error| panic!("{follower} cannot restart: {error}"));
        let leader = cluster.check_one_leader();
        cluster
            .network()
            .partition(&[vec![leader], cluster.others(leader)]);
        cluster.sleep(Duration::from_secs(1));
        cluster.heal();
        cluster.one(cmd(3), nodes, true);
    });
}

/// Membership changes while a leader runs (its replicators, heartbeaters and ticker, and
/// proposals), on an unreliable network: a node outside the configuration joins as a learner
/// and must get the log (its replicator starts sending to it), is promoted once caught up, the
/// leadership is handed to it (TimeoutNow), and the first leader is removed (every replicator
/// stops sending to it); every continuous invariant on, configuration overlap among them.
pub fn membership_changes(mutations: MutationSet) {
    let mut config = ClusterConfig::new(4);
    config.net.unreliable = true;
    config.node.mutations = mutations;
    let first_three: Vec<NodeId> = (0..3).map(NodeId).collect();
    config.membership = Some(Membership::of_voters(first_three.iter().copied()));
    with_cluster(config, |cluster| {
        let (first_leader, _) =
            cluster.leader_among(&first_three, Term(0), Duration::from_secs(10));
        cluster.one_on_every_member(cmd(1));
        let newcomer = NodeId(3);
        reconfigure(cluster, MembershipChange::AddLearner(newcomer), |m| {
            m.contains(newcomer)
        });
        // Four members now: the learner must apply it too.
        cluster.one_on_every_member(cmd(2));
        reconfigure(cluster, MembershipChange::Promote(newcomer), |m| {
            m.is_voter(newcomer)
        });
        for attempt in 0.. {
            if cluster.current_leader() == Some(newcomer) {
                break;
            }
            assert!(
                attempt < 50,
                "liveness: the leadership never went to {newcomer}"
            );
            cluster.transfer_leadership(newcomer);
            cluster.sleep(Duration::from_millis(200));
        }
        // An entry of the new leader's term, which it commits before it takes a change.
        cluster.one_on_every_member(cmd(3));
        reconfigure(cluster, MembershipChange::Remove(first_leader), |m| {
            !m.contains(first_leader)
        });
        cluster.one_on_every_member(cmd(4));
    });
}

/// Asks the leader for `change` until the configuration it follows, committed, satisfies `done`.
fn reconfigure(cluster: &Cluster, change: MembershipChange, done: impl Fn(&Membership) -> bool) {
    for attempt in 0.. {
        let leader = cluster.current_leader();
        let membership = leader.and_then(|leader| cluster.membership(leader));
        let committed = leader
            .and_then(|leader| cluster.status(leader))
            .is_some_and(|status| status.commit_index >= status.last_log_index);
        if membership.as_ref().is_some_and(&done) && committed {
            return;
        }
        assert!(
            attempt < 100,
            "liveness: {change} never committed (leader {leader:?}: {:?}, {:?})",
            membership,
            leader.and_then(|leader| cluster.status(leader))
        );
        if !membership.as_ref().is_some_and(&done) {
            cluster.change_membership(change);
        }
        cluster.sleep(Duration::from_millis(100));
    }
}

/// Timers that coincide: election timeouts of 200-203 ms, heartbeats every 100 ms, a fixed 5 ms
/// delay and 20% loss, so when one heartbeat is lost the next often arrives at the very instant
/// the follower's election deadline passes, and the schedule decides which goes first. (The
/// small range still lets split votes resolve.)
pub fn coinciding_timers(mutations: MutationSet) {
    let mut config = ClusterConfig::new(3);
    config.net.unreliable = true;
    config.net.request_loss = 0.2;
    config.net.delay_min = Duration::from_millis(5);
    config.net.delay_max = Duration::from_millis(5);
    config.node.election_timeout_min = Duration::from_millis(200);
    config.node.election_timeout_max = Duration::from_millis(203);
    config.node.mutations = mutations;
    with_cluster(config, |cluster| {
        cluster.check_one_leader();
        cluster.sleep(Duration::from_secs(2));
        cluster.check_invariants();
    });
}

/// The key-value workload, small: 3 servers, 8 clerks over 2 keys for 3 simulated seconds with
/// a leader partition; returns the history checked for linearizability (panics if it is not).
pub fn kv_workload(mutations: MutationSet, apply_capacity: usize) {
    linearizable_kv_run(KvWorkloadConfig {
        apply_capacity: Some(apply_capacity),
        ..small_kv_workload(mutations)
    });
}

/// Snapshots every 128 bytes of log (a handful of entries) on an unreliable network: a follower
/// cut off while the others commit and compact past it catches up through an InstallSnapshot,
/// and a node crashed and restarted restores its own snapshot; every continuous invariant on
/// (snapshot agreement, in-order apply, Log Matching across compacted logs).
pub fn snapshots(mutations: MutationSet) {
    let mut config = ClusterConfig::new(3);
    config.net.unreliable = true;
    config.node.mutations = mutations;
    config.snapshot_threshold = Some(128);
    with_cluster(config, |cluster| {
        let leader = cluster.check_one_leader();
        let follower = cluster.others(leader)[0];
        for value in 1..=6 {
            cluster.one(cmd(value), 3, true);
        }
        cluster.disconnect(follower);
        for value in 7..=14 {
            cluster.one(cmd(value), 2, true);
        }
        cluster.connect(follower);
        cluster.one(cmd(15), 3, true);
        cluster.crash(follower);
        cluster
            .restart(follower)
            .unwrap_or_else(|error| panic!("{follower} cannot restart: {error}"));
        cluster.one(cmd(16), 3, true);
        let observed = cluster.invariants().observed();
        assert!(observed.snapshots_taken >= 3, "{observed:?}");
    });
}

/// [`kv_workload`] with snapshots every 256 bytes of log and a one-slot apply channel: the
/// servers snapshot from their apply loops while handlers install leaders' snapshots and the
/// appliers block on the full channel.
pub fn kv_snapshots(mutations: MutationSet) {
    let small = small_kv_workload(mutations);
    let run = linearizable_kv_run(KvWorkloadConfig {
        cluster: ClusterSettings {
            snapshot_threshold: Some(256),
            ..small.cluster.clone()
        },
        apply_capacity: Some(1),
        ..small
    });
    assert!(run.figures.snapshots_taken > 0, "no snapshot taken");
}

/// 3 servers, 8 clerks over 2 keys for 3 simulated seconds, one clerk with the old leader.
fn small_kv_workload(mutations: MutationSet) -> KvWorkloadConfig {
    KvWorkloadConfig {
        cluster: ClusterSettings {
            nodes: 3,
            mutations,
            ..ClusterSettings::default()
        },
        clients: 8,
        keys: 2,
        duration: Duration::from_secs(3),
        clients_with_old_leader: 1,
        ..KvWorkloadConfig::default()
    }
}

/// Runs the key-value workload with this shuttle task as the simulation's main thread; panics
/// unless the history is linearizable.
fn linearizable_kv_run(config: KvWorkloadConfig) -> KvRun {
    let sim = Sim::new(thread_rng().next_u64());
    let clock = sim.clock();
    let ticket = clock.thread_register("main");
    let run = run_kv_workload(&sim, &config);
    clock.thread_unregister(ticket);
    let report = check_kv_history(&run.history);
    assert_eq!(
        report.verdict,
        Verdict::Linearizable,
        "{} operations not linearizable",
        run.history.len()
    );
    run
}
