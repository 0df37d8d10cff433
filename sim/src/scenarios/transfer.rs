//! A transfer of leadership to a follower that is behind (Raft thesis §3.10): a follower cut off
//! while the leader commits 20 entries comes back, and the leader is at once asked to hand over
//! to it (the leader sends at most 4 entries an append, so catching up takes several rounds). A
//! correct leader brings the follower's log up to its own before TimeoutNow, and the follower
//! wins the election it starts. A leader that sends TimeoutNow at once has the follower
//! campaign with a log behind the others': it cannot win, its term has deposed the leader, and
//! the cluster waits for another election.

use super::command;
use crate::cluster::{Cluster, ClusterConfig};
use crate::runner::Sim;
use node::{MutationSet, NodeId, Term};
use std::time::Duration;

/// How many times the leader is asked to hand over: a transfer whose target has not caught up
/// within a minimum election timeout is abandoned, and asked for again.
const ATTEMPTS: usize = 3;

/// The scenario; panics (failing the simulation) when an invariant breaks or the leadership
/// does not land on the follower it was handed to.
pub fn transfer_to_a_follower_behind(sim: &Sim, mutations: &MutationSet) {
    let mut config = ClusterConfig::new(3);
    config.node.mutations = mutations.clone();
    // Four entries an append: the follower takes several round trips to catch up, so an
    // append already on its way when the transfer is asked for cannot catch it up alone.
    config.node.max_entries_per_append = 4;
    let cluster = Cluster::new(sim, config);
    let leader = cluster.check_one_leader();
    let (term, _) = cluster.state(leader).expect("the leader runs");
    let target = cluster.others(leader)[0];
    cluster.one(command("before", 0), 3, true);
    cluster.disconnect(target);
    for value in 0..20 {
        cluster.start(leader, command("while cut off", value));
    }
    cluster.sleep(Duration::from_millis(300));
    cluster.connect(target);
    let last_index = |node: NodeId| cluster.status(node).map(|status| status.last_log_index);
    assert!(
        last_index(target) < last_index(leader),
        "vacuous: {target} is not behind {leader}"
    );
    let timeout = cluster.config().node.election_timeout_min;
    for _ in 0..ATTEMPTS {
        if let Err(refused) = cluster.transfer_leadership_at(leader, target) {
            panic!("{leader} refused to hand over to {target}: {refused}");
        }
        let started = cluster.clock().now();
        while cluster.clock().now() - started < timeout * 2 {
            cluster.sleep(Duration::from_millis(10));
            if let Some((now_leading, in_term)) = leader_after(&cluster, term) {
                assert_eq!(
                    now_leading, target,
                    "the transfer to {target} did not land: {now_leading} leads {in_term}"
                );
                cluster.one(command("after", 0), 3, true);
                return;
            }
        }
        assert_eq!(
            cluster.state(leader),
            Some((term, true)),
            "{leader} neither leads nor handed over"
        );
    }
    panic!("liveness: {leader} never handed over to {target} in {ATTEMPTS} tries");
}

/// The node that leads in a term after `term`, if one does.
fn leader_after(cluster: &Cluster, term: Term) -> Option<(NodeId, Term)> {
    cluster
        .ids()
        .into_iter()
        .find_map(|id| match cluster.state(id) {
            Some((in_term, true)) if in_term > term => Some((id, in_term)),
            _ => None,
        })
}
