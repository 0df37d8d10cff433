//! Even-sized clusters: half of the nodes is not a majority. Odd clusters cannot tell `>` from
//! `>=` in the majority test; a partition of an even one into two halves can.

use super::{cluster, command, recover};
use crate::runner::Sim;
use node::{MutationSet, NodeId};
use std::time::Duration;

/// Four nodes split into two halves of two, the leader in one, for many election timeouts while
/// commands are offered to every node; then healed. Neither half is a majority: nothing may be
/// elected or committed that a later leader loses. Counting half as a majority
/// (`half-is-majority`) elects a leader in each half, both commit, and the continuous invariants
/// see the halves' logs disagree when the partition heals.
pub fn halves_of_an_even_cluster(sim: &Sim, mutations: &MutationSet) {
    let cluster = cluster(sim, 4, false, mutations);
    cluster.one(command("h", 0), 4, true);
    let leader = cluster.check_one_leader();
    let others = cluster.others(leader);
    let with_leader: Vec<NodeId> = vec![leader, others[0]];
    let without: Vec<NodeId> = others[1..].to_vec();
    cluster.partition(&[with_leader, without]);
    for value in 1..=30 {
        for id in cluster.ids() {
            cluster.start(id, command("h", value * 10 + u64::from(id.0)));
        }
        cluster.sleep(Duration::from_millis(200));
    }
    recover(&cluster, "h");
    cluster.shutdown();
}
