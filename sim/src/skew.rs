//! Clock skew as a fault: each node's clock runs at its own rate, drawn from the seed and changed
//! during a run, and (beyond the bound) jumps forward.
//!
//! Raft's safety does not depend on clocks, only its liveness does; lease reads do depend on
//! them (`node/src/core/lease.rs`). So skew comes in two settings: within the drift bound the
//! nodes are configured with (`max_clock_drift_ppm`: every rate within `1 ± d`), under which
//! every read mode must stay linearizable, and beyond it (rates from 0.5x to 1.5x, and forward
//! jumps of up to a second, an unbounded rate for an instant), under which a correct lease can
//! serve stale reads: the setting shows the workload can see the failure the bound prevents.

use crate::cluster::Cluster;
use crate::schedule::Event;
use node::NodeId;
pub use runspec::{ClockSkew, UnknownClockSkew};
use std::time::Duration;
use threadsim::clock::RatePpm;

/// The slowest and fastest rates of [`ClockSkew::BeyondBound`].
const BEYOND: (RatePpm, RatePpm) = (RatePpm(500_000), RatePpm(1_500_000));

/// Rates are drawn in steps of 1,000 ppm (0.1%).
const STEP_PPM: u64 = 1_000;

/// The longest forward jump of [`ClockSkew::BeyondBound`], in milliseconds.
const LONGEST_JUMP_MS: u64 = 1_000;

/// What a skew setting draws on a cluster.
pub trait SkewDraws {
    /// One skew event for a random node (the chaos fault mix's draw): a new rate or, beyond
    /// the bound, one time in four a jump forward.
    fn random_event(self, cluster: &Cluster) -> Option<Event>;

    /// New rates for every node as `isolated` (the leader, cut off) loses touch with
    /// `majority`: half the time the worst case for a lease (the leader's clock at the slowest
    /// rate, every other at the fastest), else a rate drawn for each; beyond the bound, one node
    /// of the majority also jumps forward.
    fn at_isolation(self, cluster: &Cluster, isolated: NodeId, majority: &[NodeId]) -> Vec<Event>;
}

/// The slowest and fastest rates a clock may run at on `cluster` (None when off).
fn range(skew: ClockSkew, cluster: &Cluster) -> Option<(RatePpm, RatePpm)> {
    let drift = cluster.config().node.max_clock_drift_ppm;
    match skew {
        ClockSkew::Off => None,
        ClockSkew::WithinBound => Some((RatePpm(1_000_000 - drift), RatePpm(1_000_000 + drift))),
        ClockSkew::BeyondBound => Some(BEYOND),
    }
}

impl SkewDraws for ClockSkew {
    fn random_event(self, cluster: &Cluster) -> Option<Event> {
        let range = range(self, cluster)?;
        let ids = cluster.ids();
        let node = ids[cluster.random(ids.len())];
        if self == ClockSkew::BeyondBound && cluster.random(4) == 0 {
            return Some(Event::ClockJump(node, jump(cluster)));
        }
        Some(Event::ClockRate(node, draw_rate(cluster, range)))
    }

    fn at_isolation(self, cluster: &Cluster, isolated: NodeId, majority: &[NodeId]) -> Vec<Event> {
        let Some(range) = range(self, cluster) else {
            return Vec::new();
        };
        let worst_case = cluster.random(2) == 0;
        let mut events: Vec<Event> = cluster
            .ids()
            .into_iter()
            .map(|node| {
                let rate = match (worst_case, node == isolated) {
                    (true, true) => range.0,
                    (true, false) => range.1,
                    (false, _) => draw_rate(cluster, range),
                };
                Event::ClockRate(node, rate)
            })
            .collect();
        if self == ClockSkew::BeyondBound && !majority.is_empty() {
            let node = majority[cluster.random(majority.len())];
            events.push(Event::ClockJump(node, jump(cluster)));
        }
        events
    }
}

/// A rate drawn uniformly (in 0.1% steps) from `slowest..=fastest`.
fn draw_rate(cluster: &Cluster, (slowest, fastest): (RatePpm, RatePpm)) -> RatePpm {
    let steps = (fastest.0 - slowest.0) / STEP_PPM;
    RatePpm(slowest.0 + STEP_PPM * cluster.random(steps as usize + 1) as u64)
}

/// A forward jump of 1 ms to [`LONGEST_JUMP_MS`].
fn jump(cluster: &Cluster) -> Duration {
    Duration::from_millis(1 + cluster.random(LONGEST_JUMP_MS as usize) as u64)
}
