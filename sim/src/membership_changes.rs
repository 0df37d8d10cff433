//! Membership changes as a fault kind (`--membership`): where the cluster starts, and which
//! change the timeline asks the leader for next.
//!
//! The cluster starts with three voters and its other nodes outside the configuration (a
//! cluster of three or fewer with all but one voting). A change is drawn for a random node,
//! from the configuration the leader follows: a node outside joins as a learner; a learner is
//! promoted (three times in four) or removed; a voter is demoted or removed while at least as
//! many would still vote as at the start. The leader takes it only if it has committed an entry of
//! its term and nothing else is in flight; else the event does nothing, and a later one tries
//! again. One time in four, the leader is asked instead to hand its leadership to another voter.

use crate::cluster::Cluster;
use crate::schedule::Event;
use crate::timeline::Snapshot;
use node::{Membership, NodeId};

/// The most voters a cluster starts with.
pub const BOOTSTRAP_VOTERS: usize = 3;

/// How many of a cluster of `nodes` vote at the start: three, or all but one of a smaller
/// cluster (so that some node is outside, to be added). A drawn change never leaves fewer.
pub fn bootstrap_voters(nodes: usize) -> usize {
    BOOTSTRAP_VOTERS.min(nodes.saturating_sub(1)).max(1)
}

/// The configuration a cluster of `nodes` starts in: the first [`bootstrap_voters`] vote.
pub fn bootstrap(nodes: usize) -> Membership {
    Membership::of_voters((0..bootstrap_voters(nodes) as u32).map(NodeId))
}

/// The change to ask for now, if the cluster has a leader.
pub fn choose(cluster: &Cluster, snapshot: &Snapshot) -> Option<Event> {
    let ids = cluster.ids();
    let node = ids[cluster.random(ids.len())];
    // From the snapshot, which every run takes, not from the node: asking it would take its
    // lock, a step a run that follows the schedule would not take, and the two would diverge.
    let leader = snapshot.leader?;
    let membership = snapshot.memberships.get(&leader)?;
    let voters = membership.voters().len();
    if cluster.random(4) == 0 {
        let others: Vec<NodeId> = (membership.voters().iter().copied())
            .filter(|&voter| voter != leader)
            .collect();
        if others.is_empty() {
            return None;
        }
        return Some(Event::TransferLeadership(
            others[cluster.random(others.len())],
        ));
    }
    Some(if membership.is_voter(node) {
        if voters <= bootstrap_voters(ids.len()) {
            return None;
        }
        if cluster.random(2) == 0 {
            Event::Demote(node)
        } else {
            Event::RemoveMember(node)
        }
    } else if membership.contains(node) {
        if cluster.random(4) == 0 {
            Event::RemoveMember(node)
        } else {
            Event::Promote(node)
        }
    } else {
        Event::AddLearner(node)
    })
}
