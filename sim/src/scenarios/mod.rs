//! The fault scenarios: each builds a cluster (with the given mutations switched on in every
//! node), drives it through one kind of dangerous fault, and panics, failing the simulation, when
//! a safety invariant or a liveness bound breaks. The tests run them on the correct node and, to
//! prove each check can fail, on deliberately broken ones.

pub mod availability;
mod even_cluster;
mod lease;
mod membership;
pub(crate) mod non_disruption;
mod transfer;

pub use even_cluster::halves_of_an_even_cluster;
pub use lease::lease_after_a_step_down;
pub use membership::change_before_an_own_term_commit;
pub use non_disruption::{follower_cut_off_from_the_leader, rejoining_follower};
pub use transfer::transfer_to_a_follower_behind;

use crate::cluster::{Cluster, ClusterConfig};
use crate::runner::Sim;
use node::{Command, LogIndex, MutationSet, NodeId, Term};
use std::collections::BTreeMap;
use std::time::Duration;
use threadsim::clock::spawn;
use threadsim::sync::atomic::{AtomicBool, Ordering};
use threadsim::sync::{Arc, Mutex};

/// How long a healed cluster may take to elect a leader and commit a command: the liveness bound.
pub const RECOVERY_BOUND: Duration = Duration::from_secs(10);

fn cluster(sim: &Sim, nodes: usize, unreliable: bool, mutations: &MutationSet) -> Cluster {
    let mut config = ClusterConfig::new(nodes);
    config.net.unreliable = unreliable;
    config.node.mutations = mutations.clone();
    Cluster::new(sim, config)
}

fn command(tag: &str, value: u64) -> Command {
    Command::from_text(&format!("{tag}{value}"))
}

/// Heals every fault, restarts every node, and requires a command to commit on all of them
/// within [`RECOVERY_BOUND`] (`Cluster::one` enforces the bound).
fn recover(cluster: &Cluster, tag: &str) {
    cluster.heal();
    cluster.set_unreliable(false);
    for id in cluster.ids() {
        cluster.resume(id);
        if !cluster.is_running(id) || cluster.is_stopped(id) {
            cluster
                .restart(id)
                .unwrap_or_else(|error| panic!("{id} cannot restart: {error}"));
        }
    }
    cluster.one(command(tag, 999_999), cluster.ids().len(), true);
}

/// Raft's Figure 8: start a command on the leader and crash it shortly after (sometimes at once,
/// sometimes after a long pause), restarting nodes so a majority stays up. At the end every node
/// must agree.
pub fn figure8(sim: &Sim, unreliable: bool, iterations: u32, mutations: &MutationSet) {
    let cluster = cluster(sim, 5, unreliable, mutations);
    cluster.one(command("f", 0), 1, true);
    let ids = cluster.ids();
    for iteration in 0..iterations {
        let mut leader = None;
        for &id in &ids {
            if cluster.is_running(id)
                && cluster
                    .start(id, command("f", u64::from(iteration) + 1))
                    .is_some()
            {
                leader = Some(id);
            }
        }
        let pause = if cluster.random(10) == 0 {
            cluster.random_duration(Duration::ZERO, Duration::from_millis(500))
        } else {
            cluster.random_duration(Duration::ZERO, Duration::from_millis(13))
        };
        cluster.sleep(pause);
        if let Some(leader) = leader {
            cluster.crash(leader);
        }
        let down: Vec<NodeId> = ids
            .iter()
            .copied()
            .filter(|&id| !cluster.is_running(id))
            .collect();
        if ids.len() - down.len() < 3 {
            let node = down[cluster.random(down.len())];
            cluster
                .restart(node)
                .unwrap_or_else(|error| panic!("{node} cannot restart: {error}"));
        }
    }
    recover(&cluster, "f");
    cluster.shutdown();
}

/// Long reordering: two thirds of replies are held back for hundreds of milliseconds up to about
/// 2.2 s (callers wait up to 2.5 s), so stale replies arrive after fresher ones from other
/// peers and after terms change. Commands must still commit and nothing unsafe may happen.
/// Leaders wait as long as callers for a majority's answers before they step down, so replies
/// held back depose no healthy leader.
pub fn long_reordering(sim: &Sim, mutations: &MutationSet) {
    let mut config = ClusterConfig::new(5);
    config.net.long_reordering = true;
    config.node.rpc_timeout = Duration::from_millis(2500);
    config.node.leader_quorum_timeout = Duration::from_millis(2500);
    config.node.mutations = mutations.clone();
    let cluster = Cluster::new(sim, config);
    for value in 0..20 {
        cluster.one(command("r", value), 3, true);
    }
    let mut healed = cluster.network().config();
    healed.long_reordering = false;
    cluster.set_net_config(healed);
    recover(&cluster, "r");
    cluster.shutdown();
}

/// Clients submit concurrently on a network that loses 10% of requests and 10% of replies.
pub fn unreliable_agreement(sim: &Sim, rounds: u64, mutations: &MutationSet) {
    let cluster = Arc::new(cluster(sim, 5, true, mutations));
    for round in 0..rounds {
        let clients: Vec<_> = (0..4)
            .map(|client| {
                let cluster = cluster.clone();
                let clock = cluster.clock().clone();
                spawn(&clock, format!("client-{client}"), move || {
                    cluster.one(command("u", round * 10 + client), 1, true);
                })
            })
            .collect();
        for client in clients {
            client.join();
        }
    }
    cluster.set_unreliable(false);
    cluster.one(command("u", 1_000_000), 5, true);
    cluster.shutdown();
}

/// Twenty rounds of random disconnects, crashes and restarts while clients submit on every node;
/// every value a client saw committed must be in the final log at the index it saw.
pub fn churn(sim: &Sim, unreliable: bool, mutations: &MutationSet) {
    let cluster = Arc::new(cluster(sim, 5, unreliable, mutations));
    let stop = Arc::new(AtomicBool::new(false));
    let seen_committed: Arc<Mutex<BTreeMap<LogIndex, Command>>> =
        Arc::new(Mutex::new(BTreeMap::new()));
    let clients: Vec<_> = (0..3u64)
        .map(|client| {
            let (cluster, stop, seen) = (cluster.clone(), stop.clone(), seen_committed.clone());
            let clock = cluster.clock().clone();
            spawn(&clock, format!("client-{client}"), move || {
                let mut value = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    value += 1;
                    let cmd = command(&format!("c{client}-"), value);
                    let accepted = cluster
                        .ids()
                        .into_iter()
                        .find_map(|id| cluster.start(id, cmd.clone()));
                    let Some((index, _)) = accepted else {
                        cluster.clock().sleep(Duration::from_millis(50));
                        continue;
                    };
                    for _ in 0..50 {
                        if cluster.invariants().applied_at(index).1.as_ref() == Some(&cmd) {
                            seen.lock().insert(index, cmd.clone());
                            break;
                        }
                        cluster.clock().sleep(Duration::from_millis(20));
                    }
                }
            })
        })
        .collect();
    let ids = cluster.ids();
    for _ in 0..20 {
        let node = ids[cluster.random(ids.len())];
        match cluster.random(4) {
            0 => cluster.disconnect(node),
            1 => cluster.connect(node),
            2 if ids.iter().filter(|&&id| cluster.is_running(id)).count() > 3 => {
                cluster.crash(node)
            }
            _ => {
                if !cluster.is_running(node) {
                    cluster
                        .restart(node)
                        .unwrap_or_else(|error| panic!("{node} cannot restart: {error}"));
                }
            }
        }
        cluster
            .sleep(cluster.random_duration(Duration::from_millis(100), Duration::from_millis(700)));
    }
    recover(&cluster, "churn");
    stop.store(true, Ordering::SeqCst);
    for client in clients {
        client.join();
    }
    let committed = cluster.invariants().committed();
    let seen = seen_committed.lock().clone();
    assert!(
        !seen.is_empty(),
        "vacuous: no client saw a commit during churn"
    );
    for (index, cmd) in seen {
        assert_eq!(
            committed.get(&index),
            Some(&cmd),
            "a value a client saw committed at {index} is gone"
        );
    }
    cluster.shutdown();
}

/// The leader can send but not receive: the cluster must regain a working leader that commits.
pub fn leader_can_only_send(sim: &Sim, mutations: &MutationSet) {
    let cluster = cluster(sim, 5, false, mutations);
    let leader = cluster.check_one_leader();
    let (term, _) = cluster.state(leader).expect("leader running");
    for id in cluster.ids().into_iter().filter(|&id| id != leader) {
        cluster.partition_one_way(id, leader);
    }
    cluster.sleep(Duration::from_secs(2));
    let (new_leader, _) = cluster.leader_after(term, RECOVERY_BOUND);
    assert_ne!(new_leader, leader, "the deaf leader still leads");
    cluster.one(command("deaf", 1), 4, true);
    recover(&cluster, "deaf");
    cluster.shutdown();
}

/// A follower can receive but not send: the cluster keeps its leader and keeps committing.
pub fn follower_can_only_receive(sim: &Sim, mutations: &MutationSet) {
    let cluster = cluster(sim, 5, false, mutations);
    let leader = cluster.check_one_leader();
    let mute = cluster
        .ids()
        .into_iter()
        .find(|&id| id != leader)
        .expect("a follower");
    for id in cluster.ids().into_iter().filter(|&id| id != mute) {
        cluster.partition_one_way(mute, id);
    }
    for value in 0..5 {
        cluster.one(command("mute", value), 4, true);
        cluster.sleep(Duration::from_millis(300));
    }
    recover(&cluster, "mute");
    cluster.shutdown();
}

/// The leader is isolated with one follower for 2 s while commands keep arriving at it: nothing
/// it accepted then may be committed (the majority moved on), and after healing its entries are
/// replaced.
pub fn leader_isolated_with_minority(sim: &Sim, mutations: &MutationSet) {
    let cluster = cluster(sim, 5, false, mutations);
    cluster.one(command("m", 0), 5, true);
    let leader = cluster.check_one_leader();
    let others: Vec<NodeId> = cluster.others(leader);
    cluster
        .network()
        .partition(&[vec![leader, others[0]], others[1..].to_vec()]);
    let mut accepted = Vec::new();
    for value in 1..=40 {
        if let Some((index, _)) = cluster.start(leader, command("minority", value)) {
            accepted.push((index, command("minority", value)));
        }
        cluster.one(command("majority", value), 3, true);
        cluster.sleep(Duration::from_millis(50));
    }
    assert!(
        !accepted.is_empty(),
        "vacuous: the isolated leader accepted nothing"
    );
    recover(&cluster, "m");
    let committed = cluster.invariants().committed();
    for (index, cmd) in accepted {
        assert_ne!(
            committed.get(&index),
            Some(&cmd),
            "a command only the minority had was committed at {index}"
        );
    }
    cluster.shutdown();
}

/// Every thread of one node (the leader, or a follower) stops for longer than an election
/// timeout with its state intact, then resumes; its late messages must do no harm.
pub fn pause(sim: &Sim, pause_leader: bool, mutations: &MutationSet) {
    let cluster = cluster(sim, 5, false, mutations);
    cluster.one(command("p", 0), 5, true);
    let leader = cluster.check_one_leader();
    let target = if pause_leader {
        leader
    } else {
        cluster
            .ids()
            .into_iter()
            .find(|&id| id != leader)
            .expect("a follower")
    };
    cluster.start(target, command("p-before-pause", 1));
    cluster.pause(target);
    for value in 1..=10 {
        cluster.one(command("p", value), 4, true);
    }
    cluster.sleep(Duration::from_secs(2));
    cluster.resume(target);
    cluster.sleep(Duration::from_secs(1));
    recover(&cluster, "p");
    cluster.shutdown();
}

/// A follower that, with the leader, forms the only majority crashes in the middle of a persist;
/// the leader goes down too and the torn follower must lead the rest. It must come back with its
/// old or its new state (or refuse to start); with a half-written state it trusts, committed
/// entries are lost and State Machine Safety breaks.
pub fn torn_persistence(sim: &Sim, mutations: &MutationSet) {
    let cluster = cluster(sim, 3, false, mutations);
    cluster.one(command("t", 0), 3, true);
    let leader = cluster.check_one_leader();
    let others: Vec<NodeId> = cluster.others(leader);
    let (torn, behind) = (others[0], others[1]);
    cluster.crash(behind);
    for value in 1..=20 {
        cluster.one(command("t", value), 2, true);
    }
    cluster.disk(torn).tear_next_save(sim.rng(0x7e4));
    let mut value = 20;
    while !cluster.is_stopped(torn) {
        value += 1;
        cluster.start(leader, command("t", value));
        cluster.sleep(Duration::from_millis(20));
        assert!(value < 200, "the armed tear never happened");
    }
    cluster.crash(leader);
    cluster.crash(torn);
    match cluster.restart(torn) {
        Ok(()) => {}
        // Refusing to start on storage it cannot trust is allowed; then the leader must return.
        Err(error) => {
            eprintln!("{torn} refused to start after a torn write: {error}");
            cluster.disk(torn).reboot();
            cluster.restart(leader).expect("leader restarts");
        }
    }
    cluster.restart(behind).expect("restart");
    cluster.one(command("t-after", 1), 2, true);
    recover(&cluster, "t");
    assert_eq!(cluster.disk(torn).stats().torn, 1);
    cluster.shutdown();
}

/// Liveness: crash the leader again and again; each time a new leader must be elected within
/// 5 s. The network has a constant 5 ms latency (a quiet LAN), so nothing but the election
/// timeouts breaks the symmetry between nodes: the lockstep ticker fails this (split votes
/// forever).
pub fn repeated_leader_crashes(sim: &Sim, rounds: u32, mutations: &MutationSet) {
    let mut config = ClusterConfig::new(5);
    config.net.delay_min = Duration::from_millis(5);
    config.net.delay_max = Duration::from_millis(5);
    config.node.mutations = mutations.clone();
    let cluster = Cluster::new(sim, config);
    let (mut leader, mut term) = cluster.leader_after(Term(0), Duration::from_secs(5));
    for _ in 0..rounds {
        cluster.crash(leader);
        let (next, next_term) = cluster.leader_after(term, Duration::from_secs(5));
        cluster.restart(leader).expect("restart");
        (leader, term) = (next, next_term);
    }
    recover(&cluster, "l");
    cluster.shutdown();
}

/// Elections under a storm of voter restarts, on a 3-node cluster whose two other nodes cannot
/// hear each other: both compete for the one voter, which crashes and restarts while their vote
/// requests are in flight. A voter that forgets its vote across a restart votes twice in one
/// term, and Election Safety breaks.
pub fn vote_storm(sim: &Sim, rounds: u32, mutations: &MutationSet) {
    let cluster = cluster(sim, 3, false, mutations);
    let ids = cluster.ids();
    let (a, b, voter) = (ids[0], ids[1], ids[2]);
    cluster.partition_one_way(a, b);
    cluster.partition_one_way(b, a);
    for _ in 0..rounds {
        cluster.crash(voter);
        // Long enough for a leader to lose its quorum and step down (at most 0.9 s), so both
        // compete.
        cluster.sleep(
            cluster.random_duration(Duration::from_millis(2500), Duration::from_millis(3500)),
        );
        cluster
            .restart(voter)
            .unwrap_or_else(|error| panic!("{voter} cannot restart: {error}"));
        // A node that starts refuses (pre-)votes for one minimum election timeout, so the
        // candidacies come some time after it: restart again as soon as one has begun, while its
        // vote requests (and the other's) may be in flight.
        let term_of = |node| cluster.state(node).map(|(term, _)| term);
        let before = [term_of(a), term_of(b)];
        let deadline = cluster.clock().now() + Duration::from_secs(2);
        while cluster.clock().now() < deadline && [term_of(a), term_of(b)] == before {
            cluster.sleep(Duration::from_millis(1));
        }
        cluster.sleep(cluster.random_duration(Duration::from_millis(0), Duration::from_millis(10)));
        cluster
            .restart(voter)
            .unwrap_or_else(|error| panic!("{voter} cannot restart: {error}"));
        cluster
            .sleep(cluster.random_duration(Duration::from_millis(100), Duration::from_millis(600)));
    }
    recover(&cluster, "v");
    cluster.shutdown();
}

/// Raft's Figure 8, constructed step by step with partitions on 5 nodes: an entry of an old
/// term reaches a majority under a later leader, which must not commit it by counting, because
/// a node holding a conflicting entry of a newer term can still be elected and overwrite it.
pub fn figure8_constructed(sim: &Sim, mutations: &MutationSet) {
    let cluster = cluster(sim, 5, false, mutations);
    cluster.one(command("f8-", 1), 5, true);
    let (s1, term_a) = cluster.leader_after(Term(0), Duration::from_secs(5));
    let rest: Vec<NodeId> = cluster.others(s1);
    let s2 = rest[0];
    let others = rest[1..].to_vec();
    // (a) The leader replicates an entry of its term to one follower only.
    cluster.partition(&[vec![s1, s2], others.clone()]);
    cluster
        .start(s1, command("f8-old-term-", 2))
        .expect("s1 still leads");
    cluster.sleep(Duration::from_millis(200));
    // (b) The other three elect a leader, which takes an entry at the same index, alone.
    let (s5, term_b) = cluster.leader_among(&others, term_a, Duration::from_secs(5));
    let stay: Vec<NodeId> = others.iter().copied().filter(|&id| id != s5).collect();
    cluster
        .network()
        .partition(&[vec![s1, s2], vec![s5], stay.clone()]);
    cluster
        .start(s5, command("f8-newer-term-", 2))
        .expect("s5 just won");
    cluster.sleep(Duration::from_millis(100));
    // (c) s1 or s2 is elected by four nodes and replicates the old-term entry to a majority.
    let four = [vec![s1, s2], stay.clone()].concat();
    cluster.partition(&[four.clone(), vec![s5]]);
    let (_, term_c) = cluster.leader_among(&[s1, s2], term_b, Duration::from_secs(5));
    cluster.sleep(Duration::from_millis(600));
    // (d) s5, whose last entry has the newer term, is elected by the others and commits its own
    // entry at that index. A leader that committed the old-term entry in (c) lost it now.
    cluster
        .network()
        .partition(&[[vec![s5], stay.clone()].concat(), vec![s1, s2]]);
    cluster.leader_among(&[s5], term_c, Duration::from_secs(5));
    cluster
        .start(s5, command("f8-after-", 3))
        .expect("s5 leads");
    cluster.sleep(Duration::from_secs(1));
    recover(&cluster, "f8-");
    cluster.shutdown();
}
