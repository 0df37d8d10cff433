//! The single-server change bug found after the dissertation (Ongaro, raft-dev, July 2015),
//! built step by step: a leader grows the configuration by one voter and is cut off with the new
//! voter before the change commits; the rest elect a leader of a later term, which shrinks the
//! old configuration by one (the old leader) before an entry of its own term commits. The two
//! configurations are each one voter from the one they started from, and two from each other:
//! their majorities ({n0 n3 n4} of five, {n1 n2} of three) share no node, so each side could
//! elect a leader of one term. A correct leader commits an entry of its term first, which
//! overwrites the cut-off leader's change, and only then changes anything.

use super::RECOVERY_BOUND;
use crate::cluster::{Cluster, ClusterConfig};
use crate::runner::Sim;
use node::{ChangeRefused, Command, Membership, MembershipChange, MutationSet, NodeId};
use std::time::Duration;

/// The scenario; panics (failing the simulation) when an invariant breaks.
pub fn change_before_an_own_term_commit(sim: &Sim, mutations: &MutationSet) {
    let mut config = ClusterConfig::new(5);
    config.node.mutations = mutations.clone();
    let first_four = (0..4).map(NodeId);
    config.membership = Some(Membership::of_voters(first_four.clone()));
    let cluster = Cluster::new(sim, config);
    let (old_leader, term) = cluster.leader_among(
        &first_four.collect::<Vec<_>>(),
        Default::default(),
        RECOVERY_BOUND,
    );
    let newcomer = NodeId(4);
    cluster.one_on_every_member(Command::from_text("before"));
    change_at(&cluster, old_leader, MembershipChange::AddLearner(newcomer));
    cluster.one_on_every_member(Command::from_text("learner added"));
    // Cut off with the newcomer, the old leader makes it a voter: only the newcomer hears.
    let rest: Vec<NodeId> = (0..4).map(NodeId).filter(|&id| id != old_leader).collect();
    cluster.partition(&[vec![old_leader, newcomer], rest.clone()]);
    change_at(&cluster, old_leader, MembershipChange::Promote(newcomer));
    cluster.sleep(Duration::from_millis(50));
    // The rest elect a leader of a later term, which takes the old leader out.
    let (new_leader, _) = cluster.leader_among(&rest, term, RECOVERY_BOUND);
    let started = cluster.clock().now();
    loop {
        match cluster.change_membership_at(new_leader, MembershipChange::Remove(old_leader)) {
            Ok(_) => break,
            Err(ChangeRefused::NoCommitInTerm | ChangeRefused::ChangeInFlight(_)) => {
                // Its first entry: the one a correct leader must commit before a change.
                cluster.start(new_leader, Command::from_text("own term"));
            }
            Err(refused) => panic!("{new_leader} refused to remove {old_leader}: {refused}"),
        }
        assert!(
            cluster.clock().now() - started < RECOVERY_BOUND,
            "liveness: {new_leader} never took the change"
        );
        cluster.sleep(Duration::from_millis(20));
    }
    cluster.sleep(Duration::from_millis(500));
    cluster.heal();
    cluster.one_on_every_member(Command::from_text("after"));
    cluster.check_invariants();
}

/// Asks `leader` for `change`, which it must take.
fn change_at(cluster: &Cluster, leader: NodeId, change: MembershipChange) {
    if let Err(refused) = cluster.change_membership_at(leader, change) {
        panic!("{leader} refused {change}: {refused}");
    }
}
