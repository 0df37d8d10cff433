//! The end of a chaos run, once the healed cluster has committed: one fault on its leader, of a
//! shape drawn from the seed's own stream ([`LeaderFault`]), and a commit required within that
//! fault's bound. A window past the bound panics with `liveness: ...`, a failure of the run like
//! any other, with the same replay line, shrink and report: so every chaos seed checks one
//! availability bound, and a node that is safe but slow to give way (a leader without
//! check-quorum, say) fails plain chaos.

use crate::cluster::Cluster;
use crate::runner::Sim;
use crate::scenarios::availability::LeaderFault;
use runspec::FaultWindows;
use threadsim::clock::RatePpm;

/// The random stream of the probe's shape.
const PROBE_STREAM: u64 = 0xa7a1_0001;

/// A clock at the rate of true time.
const TRUE_TIME: RatePpm = RatePpm(1_000_000);

/// Probes a healed, caught-up `cluster` of three nodes or more (see the module's documentation)
/// and records the window in `windows`, as `probe: ` and the fault's name.
pub fn probe(sim: &Sim, cluster: &Cluster, windows: &mut FaultWindows) {
    let nodes = cluster.ids().len();
    let shapes: Vec<LeaderFault> = (LeaderFault::ALL.into_iter())
        .filter(|fault| fault.fits(nodes))
        .collect();
    assert!(!shapes.is_empty(), "no fault shape fits {nodes} nodes");
    let fault = shapes[sim.rng(PROBE_STREAM).index(shapes.len())];
    // The bounds are in true time for clocks at its rate; chaos may have left clocks drifting,
    // even beyond the drift bound. Healing puts them back.
    for id in cluster.ids() {
        if cluster.is_running(id) {
            cluster.set_clock_rate(id, TRUE_TIME);
        }
    }
    let leader = cluster.check_one_leader();
    let bound = fault.bound(&cluster.config().node);
    let window = fault.window(cluster, leader, "probe");
    windows.record(&format!("probe: {fault}"), Some(window));
    assert!(
        window <= bound,
        "liveness: no commit for {window:?} after the end's probe ({fault} on {leader}), past its \
         bound of {bound:?}"
    );
}
