//! Non-disruption (Raft thesis §9.6 and §4.2.3): a server that was cut off, or whose log is
//! behind, must not depose a healthy leader when it comes back. Safety does not depend on it;
//! availability does: every needless election stops commits for an election timeout. Pre-vote
//! keeps a cut-off node's term from rising; the lease (a follower that hears from a leader
//! refuses pre-votes) keeps a node cut off from the leader alone from winning one.

use super::{cluster, command};
use crate::cluster::Cluster;
use crate::runner::Sim;
use node::{MutationSet, NodeId, Term};
use std::time::Duration;

/// How long a node stays cut off: ten maximum election timeouts, so it times out many times.
const CUT_OFF_FOR: Duration = Duration::from_secs(6);

/// A follower disconnected from everyone for many election timeouts, while the others commit
/// without it, reconnects and catches up: the leader and its term are unchanged. Without
/// pre-vote (`no-pre-vote`), the follower comes back with a higher term and deposes the leader.
pub fn rejoining_follower(sim: &Sim, mutations: &MutationSet) {
    let cluster = cluster(sim, 5, false, mutations);
    cluster.one(command("j", 0), 5, true);
    let (leader, term) = healthy_leader(&cluster);
    let follower = cluster.others(leader)[0];
    cluster.disconnect(follower);
    commit_while(&cluster, "j", 1, 4);
    cluster.connect(follower);
    // The rejoined follower catches up: its log is behind and it must neither win nor disrupt.
    for value in 100..105 {
        cluster.one(command("j", value), 5, true);
    }
    assert_undisturbed(&cluster, leader, term, &format!("{follower} rejoined"));
    cluster.shutdown();
}

/// A follower cut off from the leader alone (both directions), still connected to every other
/// follower, for many election timeouts while nothing is committed: the others hear from the
/// leader, so they refuse its pre-votes and its term stays; after the cut heals the leader and its term are unchanged.
/// With pre-votes granted inside the lease (`pre-vote-ignores-lease`), or no pre-vote at all,
/// its term rises and the leader is deposed when the cut heals.
pub fn follower_cut_off_from_the_leader(sim: &Sim, mutations: &MutationSet) {
    let cluster = cluster(sim, 5, false, mutations);
    cluster.one(command("k", 0), 5, true);
    let (leader, term) = healthy_leader(&cluster);
    let follower = cluster.others(leader)[0];
    cluster.partition_one_way(leader, follower);
    cluster.partition_one_way(follower, leader);
    // Nothing is committed meanwhile, so its log stays as up to date as theirs: only the lease
    // stands between it and a pre-vote.
    cluster.sleep(CUT_OFF_FOR);
    cluster.heal();
    for value in 100..105 {
        cluster.one(command("k", value), 5, true);
    }
    assert_undisturbed(
        &cluster,
        leader,
        term,
        &format!("the cut between {leader} and {follower} healed"),
    );
    cluster.shutdown();
}

/// The leader, once the cluster has settled, and its term.
fn healthy_leader(cluster: &Cluster) -> (NodeId, Term) {
    let leader = cluster.check_one_leader();
    let (term, leads) = cluster.state(leader).expect("the leader is running");
    assert!(leads, "{leader} was reported as leader");
    (leader, term)
}

/// Commits a command every 300 ms on `on` nodes for [`CUT_OFF_FOR`]: the cluster keeps working
/// while one node is cut off.
fn commit_while(cluster: &Cluster, tag: &str, first: u64, on: usize) {
    let rounds = CUT_OFF_FOR.as_millis() / 300;
    for value in first..first + rounds as u64 {
        cluster.one(command(tag, value), on, true);
        cluster.sleep(Duration::from_millis(300));
    }
}

/// The same leader leads in the same term: nothing `what` did disrupted it.
pub(crate) fn assert_undisturbed(cluster: &Cluster, leader: NodeId, term: Term, what: &str) {
    let now = cluster.state(leader);
    assert_eq!(
        now,
        Some((term, true)),
        "disrupted: {leader} led {term} and after {what} it is {} ({:?} leads)",
        match now {
            Some((now_term, true)) => format!("leader of {now_term}"),
            Some((now_term, false)) => format!("a follower in {now_term}"),
            None => "down".to_string(),
        },
        cluster.current_leader(),
    );
}
