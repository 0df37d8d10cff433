//! Persistence across crashes (6.5840 lab 3C).

use crate::support::{cmd, SEEDS};
use node::LogIndex;
use sim::{run_seeds, Cluster, ClusterConfig};

#[test]
fn committed_entries_survive_crashes_of_followers_leaders_and_everyone() {
    run_seeds(
        "persistence::committed_entries_survive_crashes_of_followers_leaders_and_everyone",
        SEEDS,
        |sim| {
            let cluster = Cluster::new(sim, ClusterConfig::new(3));
            cluster.one(cmd(11), 3, true);
            // Every node at once.
            for id in cluster.ids() {
                cluster.crash(id);
            }
            for id in cluster.ids() {
                cluster.restart(id).expect("restart");
            }
            cluster.one(cmd(12), 3, true);
            // The leader.
            let leader1 = cluster.check_one_leader();
            cluster.restart(leader1).expect("restart");
            cluster.one(cmd(13), 3, true);
            let leader2 = cluster.check_one_leader();
            cluster.crash(leader2);
            cluster.one(cmd(14), 2, true);
            cluster.restart(leader2).expect("restart");
            cluster.wait_applied(LogIndex(4), 3, None);
            // A follower.
            let leader3 = cluster.check_one_leader();
            let follower = cluster
                .ids()
                .into_iter()
                .find(|&id| id != leader3)
                .expect("follower");
            cluster.crash(follower);
            cluster.one(cmd(15), 2, true);
            cluster.restart(follower).expect("restart");
            cluster.one(cmd(16), 3, true);
            let committed = cluster.invariants().committed();
            let values: Vec<_> = (1..=6)
                .map(|i| committed.get(&LogIndex(i)).cloned())
                .collect();
            assert_eq!(values, (11..=16).map(|v| Some(cmd(v))).collect::<Vec<_>>());
            cluster.shutdown();
        },
    );
}

#[test]
fn a_restarted_node_applies_its_log_again_from_index_one() {
    run_seeds(
        "persistence::a_restarted_node_applies_its_log_again_from_index_one",
        SEEDS,
        |sim| {
            let cluster = Cluster::new(sim, ClusterConfig::new(3));
            for value in 1..=5 {
                cluster.one(cmd(value), 3, true);
            }
            let node = cluster.ids()[0];
            cluster.restart(node).expect("restart");
            cluster.one(cmd(6), 3, true);
            // The restarted instance re-applied 1..=6 in order (checked continuously) and caught up.
            assert!(cluster.invariants().applied_upto(node) >= LogIndex(6));
            cluster.shutdown();
        },
    );
}
