//! Leader election (6.5840 lab 3A and beyond).

use crate::support::{ELECTION_SETTLE, SEEDS};
use node::Term;
use sim::{run_seeds, Cluster, ClusterConfig};
use std::time::Duration;

#[test]
fn initial_election() {
    run_seeds("election::initial_election", SEEDS, |sim| {
        let cluster = Cluster::new(sim, ClusterConfig::new(3));
        cluster.check_one_leader();
        cluster.sleep(Duration::from_millis(50));
        let term = cluster.check_terms().expect("a term");
        assert!(term.0 >= 1, "term is {term}, expected at least 1");
        // A quiet cluster keeps its leader and its term.
        cluster.sleep(2 * ELECTION_SETTLE);
        assert_eq!(
            cluster.check_terms(),
            Some(term),
            "term changed with no failures"
        );
        cluster.check_one_leader();
        assert!(cluster.invariants().observed().leaders_elected >= 1);
        cluster.shutdown();
    });
}

#[test]
fn reelection_after_the_leader_is_cut_off() {
    run_seeds(
        "election::reelection_after_the_leader_is_cut_off",
        SEEDS,
        |sim| {
            let cluster = Cluster::new(sim, ClusterConfig::new(3));
            let leader1 = cluster.check_one_leader();
            cluster.disconnect(leader1);
            let leader2 = cluster.check_one_leader();
            assert_ne!(leader1, leader2);
            // The old leader rejoins: still exactly one leader.
            cluster.connect(leader1);
            let leader3 = cluster.check_one_leader();
            // No quorum: no leader may be elected.
            let other = cluster
                .ids()
                .into_iter()
                .find(|&id| id != leader3)
                .expect("another node");
            cluster.disconnect(leader3);
            cluster.disconnect(other);
            cluster.sleep(ELECTION_SETTLE);
            cluster.check_no_leader();
            // A quorum again: a leader.
            cluster.connect(other);
            cluster.check_one_leader();
            cluster.connect(leader3);
            cluster.check_one_leader();
            cluster.shutdown();
        },
    );
}

#[test]
fn no_leader_while_a_majority_is_down_then_one_when_it_returns() {
    run_seeds(
        "election::no_leader_while_a_majority_is_down_then_one_when_it_returns",
        SEEDS,
        |sim| {
            let cluster = Cluster::new(sim, ClusterConfig::new(5));
            let leader = cluster.check_one_leader();
            let down: Vec<_> = cluster
                .ids()
                .into_iter()
                .filter(|&id| id != leader)
                .take(3)
                .collect();
            for &id in &down {
                cluster.crash(id);
            }
            cluster.sleep(ELECTION_SETTLE);
            // The old leader may still think it leads (it hears no higher term), but nobody else is
            // elected and nothing commits.
            for id in cluster
                .ids()
                .into_iter()
                .filter(|&id| id != leader && cluster.is_running(id))
            {
                assert_eq!(
                    cluster.state(id).map(|(_, leads)| leads),
                    Some(false),
                    "{id} leads without a quorum"
                );
            }
            for &id in &down {
                cluster.restart(id).expect("restart");
            }
            cluster.check_one_leader();
            cluster.shutdown();
        },
    );
}

#[test]
fn two_hundred_elections_in_a_row() {
    run_seeds("election::two_hundred_elections_in_a_row", &[1], |sim| {
        let cluster = Cluster::new(sim, ClusterConfig::new(5));
        let (mut leader, mut term) = cluster.leader_after(Term(0), Duration::from_secs(5));
        for _ in 0..200 {
            cluster.disconnect(leader);
            let (next, next_term) = cluster.leader_after(term, Duration::from_secs(5));
            cluster.connect(leader);
            (leader, term) = (next, next_term);
        }
        let elected = cluster.invariants().observed().leaders_elected;
        assert!(elected >= 201, "only {elected} leaders elected");
        cluster.shutdown();
    });
}

#[test]
fn a_follower_cut_off_for_many_timeouts_rejoins_without_deposing_the_leader() {
    run_seeds(
        "election::a_follower_cut_off_for_many_timeouts_rejoins_without_deposing_the_leader",
        SEEDS,
        |sim| sim::scenarios::rejoining_follower(sim, &node::MutationSet::default()),
    );
}

#[test]
fn a_follower_cut_off_from_the_leader_alone_does_not_depose_it() {
    run_seeds(
        "election::a_follower_cut_off_from_the_leader_alone_does_not_depose_it",
        SEEDS,
        |sim| sim::scenarios::follower_cut_off_from_the_leader(sim, &node::MutationSet::default()),
    );
}

#[test]
fn the_halves_of_an_even_cluster_elect_and_commit_nothing_they_later_lose() {
    run_seeds(
        "election::the_halves_of_an_even_cluster_elect_and_commit_nothing_they_later_lose",
        SEEDS,
        |sim| sim::scenarios::halves_of_an_even_cluster(sim, &node::MutationSet::default()),
    );
}
