//! Log replication and commitment (6.5840 lab 3B).

use crate::support::{cmd, concurrent_starts, ELECTION_SETTLE, SEEDS};
use node::LogIndex;
use sim::{run_seeds, Cluster, ClusterConfig};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn basic_agreement() {
    run_seeds("agreement::basic_agreement", SEEDS, |sim| {
        let cluster = Cluster::new(sim, ClusterConfig::new(3));
        for expected in 1..=3u64 {
            let (count, _) = cluster.applied_at(LogIndex(expected));
            assert_eq!(count, 0, "entry {expected} applied before start()");
            assert_eq!(
                cluster.one(cmd(expected * 100), 3, false),
                LogIndex(expected)
            );
        }
        cluster.shutdown();
    });
}

#[test]
fn follower_failure() {
    run_seeds("agreement::follower_failure", SEEDS, |sim| {
        let cluster = Cluster::new(sim, ClusterConfig::new(3));
        cluster.one(cmd(101), 3, false);
        let leader = cluster.check_one_leader();
        let follower = cluster
            .ids()
            .into_iter()
            .find(|&id| id != leader)
            .expect("follower");
        cluster.disconnect(follower);
        cluster.one(cmd(102), 2, false);
        cluster.sleep(ELECTION_SETTLE);
        cluster.one(cmd(103), 2, false);
        // Disconnect the other two: the leader alone cannot commit.
        let leader = cluster.check_one_leader();
        for id in cluster.ids().into_iter().filter(|&id| id != follower) {
            cluster.disconnect(id);
        }
        let (index, _) = cluster.start(leader, cmd(104)).expect("leader accepts");
        assert_eq!(index, LogIndex(4));
        cluster.sleep(ELECTION_SETTLE);
        assert_eq!(
            cluster.applied_at(index).0,
            0,
            "committed without a majority"
        );
        cluster.shutdown();
    });
}

#[test]
fn leader_failure() {
    run_seeds("agreement::leader_failure", SEEDS, |sim| {
        let cluster = Cluster::new(sim, ClusterConfig::new(3));
        cluster.one(cmd(101), 3, false);
        let leader1 = cluster.check_one_leader();
        cluster.disconnect(leader1);
        cluster.one(cmd(102), 2, false);
        cluster.sleep(ELECTION_SETTLE);
        cluster.one(cmd(103), 2, false);
        let leader2 = cluster.check_one_leader();
        cluster.disconnect(leader2);
        for id in cluster.ids() {
            cluster.start(id, cmd(104));
        }
        cluster.sleep(ELECTION_SETTLE);
        assert_eq!(
            cluster.applied_at(LogIndex(4)).0,
            0,
            "committed without a majority"
        );
        cluster.shutdown();
    });
}

#[test]
fn a_minority_cannot_commit_and_its_entries_are_overwritten() {
    run_seeds(
        "agreement::a_minority_cannot_commit_and_its_entries_are_overwritten",
        SEEDS,
        |sim| {
            let cluster = Cluster::new(sim, ClusterConfig::new(5));
            cluster.one(cmd(10), 5, false);
            let leader = cluster.check_one_leader();
            let (old_term, _) = cluster.state(leader).expect("leader running");
            let others: Vec<_> = cluster
                .ids()
                .into_iter()
                .filter(|&id| id != leader)
                .collect();
            let minority = vec![leader, others[0]];
            let majority = others[1..].to_vec();
            cluster.partition(&[minority, majority.clone()]);
            let (index, _) = cluster.start(leader, cmd(20)).expect("leader accepts");
            assert_eq!(index, LogIndex(2));
            // The majority elects its own leader and commits at the same index.
            let (leader2, _) = cluster.leader_after(old_term, ELECTION_SETTLE * 4);
            assert!(
                majority.contains(&leader2),
                "{leader2} leads from the minority"
            );
            assert_eq!(
                cluster.start(leader2, cmd(30)).map(|(i, _)| i),
                Some(LogIndex(2))
            );
            cluster.wait_applied(LogIndex(2), 3, None);
            assert_eq!(cluster.applied_at(index).1, Some(cmd(30)));
            cluster.heal();
            cluster.one(cmd(1000), 5, true);
            // Every node, the old leader included, applied 30 at index 2 (State Machine Safety is
            // checked on every applied entry, so a node applying 20 there would have failed the run).
            assert_eq!(cluster.applied_at(index).0, 5);
            cluster.shutdown();
        },
    );
}

#[test]
fn concurrent_starts_in_one_term() {
    run_seeds("agreement::concurrent_starts_in_one_term", SEEDS, |sim| {
        let cluster = Arc::new(Cluster::new(sim, ClusterConfig::new(3)));
        'attempt: for _ in 0..5 {
            let leader = cluster.check_one_leader();
            let (_, term) = cluster.start(leader, cmd(1)).expect("leader accepts");
            let indices = concurrent_starts(&cluster, leader, 5);
            let mut expected = BTreeSet::new();
            for (i, index) in indices.into_iter().enumerate() {
                let Some(index) = index else {
                    continue 'attempt;
                };
                expected.insert(cmd(100 + i as u64));
                if cluster
                    .wait_applied(LogIndex(index), 3, Some(term))
                    .is_none()
                {
                    continue 'attempt;
                }
            }
            let committed: BTreeSet<_> = cluster.invariants().committed().into_values().collect();
            assert!(
                expected.is_subset(&committed),
                "missing concurrent commands"
            );
            cluster.shutdown();
            return;
        }
        panic!("term changed too often");
    });
}

#[test]
fn a_partitioned_leader_rejoins_and_its_entries_are_replaced() {
    run_seeds(
        "agreement::a_partitioned_leader_rejoins_and_its_entries_are_replaced",
        SEEDS,
        |sim| {
            let cluster = Cluster::new(sim, ClusterConfig::new(3));
            cluster.one(cmd(101), 3, true);
            let leader1 = cluster.check_one_leader();
            cluster.disconnect(leader1);
            for value in [102, 103, 104] {
                cluster.start(leader1, cmd(value));
            }
            cluster.one(cmd(103), 2, true);
            let leader2 = cluster.check_one_leader();
            cluster.disconnect(leader2);
            cluster.connect(leader1);
            cluster.one(cmd(104), 2, true);
            cluster.connect(leader2);
            cluster.one(cmd(105), 3, true);
            let committed = cluster.invariants().committed();
            assert_eq!(committed.get(&LogIndex(2)), Some(&cmd(103)));
            cluster.shutdown();
        },
    );
}

#[test]
fn fast_backtracking_over_two_partitioned_leaders() {
    run_seeds(
        "agreement::fast_backtracking_over_two_partitioned_leaders",
        SEEDS,
        |sim| {
            let cluster = Cluster::new(sim, ClusterConfig::new(5));
            let mut value = 0u64;
            let mut next = || {
                value += 1;
                cmd(value)
            };
            cluster.one(next(), 5, true);
            // Leader and one follower in a minority: 50 entries that never commit.
            let leader1 = cluster.check_one_leader();
            let ids = cluster.ids();
            let others: Vec<_> = ids.iter().copied().filter(|&id| id != leader1).collect();
            cluster
                .network()
                .partition(&[vec![leader1, others[0]], others[1..].to_vec()]);
            for _ in 0..50 {
                cluster.start(leader1, next());
            }
            cluster.sleep(Duration::from_millis(600));
            // The majority commits 50 entries of its own.
            let majority = others[1..].to_vec();
            for _ in 0..50 {
                cluster.one(next(), 3, true);
            }
            // A new leader of two in the majority's side, cut again: 50 more uncommitted entries.
            // (The old leader, cut off, keeps bumping its own term: look in the majority.)
            let leader2 = majority
                .iter()
                .copied()
                .find(|&id| cluster.state(id).is_some_and(|(_, leads)| leads))
                .expect("the majority has a leader after committing 50 entries");
            let stay = majority
                .iter()
                .copied()
                .find(|&id| id != leader2)
                .expect("another");
            let gone = majority
                .iter()
                .copied()
                .find(|&id| id != leader2 && id != stay)
                .expect("third");
            cluster.partition(&[vec![leader2, stay], vec![gone], vec![leader1, others[0]]]);
            for _ in 0..50 {
                cluster.start(leader2, next());
            }
            cluster.sleep(Duration::from_millis(600));
            // The first minority plus the isolated node form a majority and must replace 50 entries.
            cluster
                .network()
                .partition(&[vec![leader1, others[0], gone], vec![leader2, stay]]);
            for _ in 0..50 {
                cluster.one(next(), 3, true);
            }
            cluster.heal();
            cluster.one(next(), 5, true);
            cluster.shutdown();
        },
    );
}

/// Starts ten commands on the leader back to back (the first round is in flight while the rest
/// arrive) and returns what its replicators sent to carry them.
fn sent_for_ten_back_to_back_starts(
    sim: &sim::Sim,
    config: ClusterConfig,
) -> node::ReplicationStats {
    let cluster = Cluster::new(sim, config);
    cluster.one(cmd(1), 3, false);
    let leader = cluster.check_one_leader();
    let before = cluster.status(leader).expect("leader runs").sent;
    let mut last = None;
    for n in 0..10 {
        last = Some(cluster.start(leader, cmd(100 + n)).expect("still leader"));
    }
    let (index, term) = last.expect("ten starts");
    cluster
        .wait_applied(index, 3, Some(term))
        .expect("committed in the same term");
    let after = cluster.status(leader).expect("leader runs").sent;
    cluster.shutdown();
    after.since(&before)
}

#[test]
fn entries_started_during_a_round_share_the_next_append() {
    run_seeds(
        "agreement::entries_started_during_a_round_share_the_next_append",
        SEEDS,
        |sim| {
            let sent = sent_for_ten_back_to_back_starts(sim, ClusterConfig::new(3));
            assert_eq!(sent.entries, 20, "each entry sent once to each follower");
            assert!(
                sent.appends <= 4,
                "ten entries took {} AppendEntries for two followers: the leader did not batch",
                sent.appends
            );
        },
    );
}

#[test]
fn the_batching_check_rejects_one_entry_per_append() {
    // The check above must be able to fail: limiting AppendEntries to one entry is the node
    // without batching.
    run_seeds(
        "agreement::the_batching_check_rejects_one_entry_per_append",
        SEEDS,
        |sim| {
            let mut config = ClusterConfig::new(3);
            config.node.max_entries_per_append = 1;
            let sent = sent_for_ten_back_to_back_starts(sim, config);
            assert!(
                sent.appends > 4,
                "one entry per append went unnoticed: {sent:?}"
            );
        },
    );
}
