//! The end of a chaos run, once the healed cluster has committed: one fault on its leader, of a
//! shape drawn from the seed's own stream ([`LeaderFault`]), and a commit required within that
//! fault's bound. A window past the bound panics with `liveness: ...`, a failure of the run like
//! any other, with the same replay line, shrink and report: so every chaos seed checks one
//! availability bound, and a node that is safe but slow to give way (a leader without
//! check-quorum, say) fails plain chaos.

use crate::cluster::Cluster;
use crate::runner::Sim;
use crate::scenarios::availability::{LeaderFault, FLAPPING_PHASE};
use node::NodeId;
use runspec::FaultWindows;
use std::time::Duration;
use threadsim::clock::RatePpm;

/// The random stream of the probe's shape.
const PROBE_STREAM: u64 = 0xa7a1_0001;

/// A clock at the rate of true time.
pub(crate) const TRUE_TIME: RatePpm = RatePpm(1_000_000);

/// Probes a healed, caught-up `cluster` of three nodes or more (see the module's documentation)
/// and records the window in `windows`, as `probe: ` and the fault's name.
pub fn probe(sim: &Sim, cluster: &Cluster, windows: &mut FaultWindows) {
    let nodes = cluster.ids().len();
    let shapes: Vec<LeaderFault> = (LeaderFault::ALL.into_iter())
        .filter(|fault| fault.fits(nodes))
        .collect();
    assert!(!shapes.is_empty(), "no fault shape fits {nodes} nodes");
    // Every draw from the seed's own stream, none from the harness's: a run that follows a
    // recorded schedule has drawn less from the harness by now, and must probe the same.
    let mut draws = sim.rng(PROBE_STREAM);
    let fault = shapes[draws.index(shapes.len())];
    // The bounds are in true time for clocks at its rate; chaos may have left clocks drifting,
    // even beyond the drift bound. Healing puts them back.
    for id in cluster.ids() {
        if cluster.is_running(id) {
            cluster.set_clock_rate(id, TRUE_TIME);
        }
    }
    // A healthy cluster, as the bounds assume: a node restarted at the heal refuses votes for one
    // shortest election timeout after it starts, and the cluster has just committed, so let one
    // longest election timeout pass first.
    cluster.sleep(cluster.config().node.election_timeout_max);
    let leader = the_leader(cluster);
    let (shortest, longest) = FLAPPING_PHASE;
    let outage = fault.outage(cluster, leader, "probe", || {
        draws.duration_ms(shortest, longest)
    });
    windows.record(&format!("probe: {fault}"), Some(outage.window));
    let context = format!("the end's probe on {leader}");
    if let Err(failure) = outage.check(fault, &cluster.config().node, &context) {
        panic!("{failure}");
    }
}

/// The healed cluster's leader, looked for every 10 ms (no random pause: the probe draws nothing
/// from the harness's stream); a liveness failure if none appears within 5 s.
pub(crate) fn the_leader(cluster: &Cluster) -> NodeId {
    let started = cluster.clock().now();
    loop {
        if let Some(leader) = cluster.current_leader() {
            return leader;
        }
        let waited = cluster.clock().now() - started;
        assert!(
            waited < LEADER_WITHIN,
            "liveness: the healed cluster had no leader {waited:?} after it committed"
        );
        cluster.sleep(Duration::from_millis(10));
    }
}

/// How long the probe waits for the healed cluster's leader.
const LEADER_WITHIN: Duration = Duration::from_secs(5);
