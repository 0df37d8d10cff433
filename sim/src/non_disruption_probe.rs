//! The end of a chaos run, once the healed cluster has committed and before its availability
//! probe: one follower, drawn from the seed's own stream, cut off from the leader alone (both
//! ways, still hearing every other node) for many election timeouts, then reconnected; the same
//! leader must lead in the same term throughout (Raft thesis §4.2.3 and §9.6). The network is
//! reliable and healed by now, so nothing but a needless election can depose that leader: it
//! keeps a majority, and every other follower hears it and refuses the cut one's pre-votes. A
//! disruption panics with `disrupted: ...`, a failure of the run with replay and shrink: so a node
//! without pre-vote, or one that grants pre-votes while it hears a leader, fails plain chaos.

use crate::availability_probe::{the_leader, TRUE_TIME};
use crate::cluster::Cluster;
use crate::runner::Sim;
use crate::scenarios::non_disruption::assert_undisturbed;

/// The random stream of the follower the probe cuts off.
const PROBE_STREAM: u64 = 0xa7a1_0002;

/// How long the follower stays cut off, in longest election timeouts: it times out several
/// times, and each time asks the others for a pre-vote.
const CUT_OFF_FOR_TIMEOUTS: u32 = 5;

/// Probes a healed, caught-up `cluster` of three nodes or more (see the module's documentation).
pub fn probe(sim: &Sim, cluster: &Cluster) {
    let nodes = cluster.ids().len();
    assert!(
        nodes >= 3,
        "no follower can be cut off alone from {nodes} nodes"
    );
    for id in cluster.ids() {
        assert!(
            cluster.is_running(id),
            "{id} is down: the cluster is not healed"
        );
        cluster.set_clock_rate(id, TRUE_TIME);
    }
    let longest = cluster.config().node.election_timeout_max;
    cluster.sleep(longest);
    let leader = the_leader(cluster);
    let (term, _) = cluster.state(leader).expect("the leader is running");
    let followers = cluster.others(leader);
    let follower = followers[sim.rng(PROBE_STREAM).index(followers.len())];
    cluster.partition_one_way(leader, follower);
    cluster.partition_one_way(follower, leader);
    cluster.sleep(longest * CUT_OFF_FOR_TIMEOUTS);
    let what = format!("the end's probe cut {follower} off from {leader} alone");
    assert_undisturbed(cluster, leader, term, &what);
    cluster.heal();
    // The leader's next heartbeat reaches the follower, and its answer carries its term.
    cluster.sleep(longest);
    assert_undisturbed(cluster, leader, term, &format!("{what} and healed the cut"));
}
