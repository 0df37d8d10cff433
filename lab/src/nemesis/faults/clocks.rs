//! Clock faults, made by the servers themselves at the nemesis's request: every node's clock
//! run fast or slow within the nodes' drift bound (clock), or far beyond it with a jump
//! (clock-beyond, unsafe for leases). Either lasts through the fault after it; healing sets
//! every rate back to 1x (a jump stays).

use super::millis;
use crate::nemesis::error::{Finding, NemesisError};
use crate::nemesis::fault::{fault_boilerplate, Fault, Injected, Injection};
use crate::nemesis::fault::{FaultKind, KindSpec, Outage};
use crate::nemesis::inject::{Nemesis, DRIFT_BOUND_PPM, TRUE_RATE_PPM};
use node::NodeId;
use server::wire::kv::ClockChange;
use std::fmt;
use std::time::{Duration, Instant};
use threadsim::DetRng;

/// Every node's clock run fast or slow within the nodes' drift bound (0.9x to 1.1x), half of
/// the time the worst case for leases (the leader slowest, the others fastest), through the
/// fault that comes next.
pub static CLOCK: KindSpec = KindSpec {
    name: "clock",
    describe: "clocks at 0.9x-1.1x (the drift bound), often a slow leader, for two faults",
    needs_cooperation: true,
    draw: |rng, _, nodes| {
        // Half of the time the worst case the bound allows: the leader slowest, the others
        // fastest.
        let fault = if rng.chance(0.5) {
            Clock {
                rates_ppm: rates(rng, nodes, (1_080_000, 1_100_000)),
                leader_ppm: Some(rng.range_inclusive(900_000, 920_000)),
                jump: None,
            }
        } else {
            Clock {
                rates_ppm: rates(rng, nodes, (900_000, 1_100_000)),
                leader_ppm: None,
                jump: None,
            }
        };
        (Box::new(fault), millis(rng, 2000, 6000))
    },
    ..KindSpec::PLAIN
};

/// Clocks far beyond the drift bound, the worst case for leases (the leader at 0.25x-0.5x, the
/// others at 1.2x-1.5x), one clock jumped forward, through the fault that comes next:
/// deliberately unsafe for lease reads, so not part of `all`.
pub static CLOCK_BEYOND: KindSpec = KindSpec {
    name: "clock-beyond",
    describe: "the leader's clock at 0.25x-0.5x, the others' 1.2x-1.5x (unsafe for leases)",
    safe: false,
    in_all: false,
    needs_cooperation: true,
    outage: Outage::Unbounded,
    draw: |rng, _, nodes| {
        let rates_ppm = rates(rng, nodes, (1_200_000, 1_500_000));
        let leader_ppm = Some(rng.range_inclusive(250_000, 500_000));
        let jumping = NodeId(rng.index(nodes as usize) as u32);
        let jump = Some((jumping, millis(rng, 200, 2000)));
        let fault = Clock {
            rates_ppm,
            leader_ppm,
            jump,
        };
        (Box::new(fault), millis(rng, 2000, 6000))
    },
    ..KindSpec::PLAIN
};

/// Every node's clock set to run at its own rate, one node's also jumped forward; every rate is
/// set back to 1x when the fault after this one ends (a jump stays).
#[derive(Clone, Debug, PartialEq)]
pub struct Clock {
    /// Local seconds per true second, in millionths, of each node in order of id.
    pub rates_ppm: Vec<u64>,
    /// The rate of the node that leads when the fault comes, instead of its own in `rates_ppm`:
    /// the worst case for a lease is a slow leader among fast followers.
    pub leader_ppm: Option<u64>,
    /// A node whose clock jumps forward, and how far.
    pub jump: Option<(NodeId, Duration)>,
}

/// A clock rate for each of `nodes`, drawn from `range` (millionths).
fn rates(rng: &mut DetRng, nodes: u32, range: (u64, u64)) -> Vec<u64> {
    (0..nodes)
        .map(|_| rng.range_inclusive(range.0, range.1))
        .collect()
}

/// These nodes' clocks were changed: set their rates back to 1x.
pub struct Clocks(pub Vec<NodeId>);

impl Injected for Clocks {
    fn heal(self: Box<Self>, nemesis: &mut Nemesis<'_>, _: Instant) -> Result<String, Finding> {
        let restarted: Vec<String> = (self.0.into_iter())
            .filter(|&node| nemesis.set_true_clock(node).is_err())
            .map(|node| node.to_string())
            .collect();
        if restarted.is_empty() {
            return Ok("clocks back to 1x".into());
        }
        // A node restarted since the clocks were set runs true already, and may not answer
        // yet; one that does not come back is for the recovery check.
        Ok(format!(
            "clocks back to 1x ({} not answering: restarted since, so running true)",
            restarted.join(", ")
        ))
    }

    fn lasts_through_next_fault(&self) -> bool {
        true
    }
}

impl Fault for Clock {
    fn kind(&self) -> FaultKind {
        let within = (self.rates_ppm.iter().chain(&self.leader_ppm))
            .all(|rate| rate.abs_diff(TRUE_RATE_PPM) <= DRIFT_BOUND_PPM);
        if within && self.jump.is_none() {
            FaultKind::of(&CLOCK)
        } else {
            FaultKind::of(&CLOCK_BEYOND)
        }
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let nodes = nemesis.cluster.ids();
        assert_eq!(self.rates_ppm.len(), nodes.len(), "a rate for every node");
        let mut rates_ppm = self.rates_ppm.clone();
        let mut leader = String::new();
        if let (Some(rate), Some(node)) = (self.leader_ppm, nemesis.leader()) {
            rates_ppm[node.0 as usize] = rate;
            leader = format!(" ({node} the leader)");
        }
        for (&node, &rate_ppm) in nodes.iter().zip(&rates_ppm) {
            let jump = match self.jump {
                Some((jumping, by)) if jumping == node => by,
                _ => Duration::ZERO,
            };
            nemesis.set_clock(node, ClockChange { rate_ppm, jump })?;
        }
        let what = format!("{}{leader}", clocks_text(&rates_ppm, self.jump));
        Ok(Injection::new(what, Clocks(nodes)))
    }

    fault_boilerplate!();
}

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&clocks_text(&self.rates_ppm, self.jump))?;
        match self.leader_ppm {
            Some(rate) => write!(f, "; the leader {:.3}x", rate as f64 / 1e6),
            None => Ok(()),
        }
    }
}

/// Says what a clock fault does: each node's rate, and the jump.
pub fn clocks_text(rates_ppm: &[u64], jump: Option<(NodeId, Duration)>) -> String {
    let rates: Vec<String> = rates_ppm
        .iter()
        .enumerate()
        .map(|(node, rate)| format!("n{node} {:.3}x", *rate as f64 / 1e6))
        .collect();
    let mut text = format!("clocks at {}", rates.join(", "));
    if let Some((node, by)) = jump {
        text.push_str(&format!("; {node} jumped {by:?} forward"));
    }
    text
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_clock_fault_beyond_the_drift_bound_is_of_the_unsafe_kind() {
        let clock = |rates_ppm: &[u64], jump| Clock {
            rates_ppm: rates_ppm.to_vec(),
            leader_ppm: None,
            jump,
        };
        let (within, beyond) = (FaultKind::of(&CLOCK), FaultKind::of(&CLOCK_BEYOND));
        assert_eq!(clock(&[900_000, 1_100_000], None).kind(), within);
        assert_eq!(clock(&[900_000, 1_100_001], None).kind(), beyond);
        let jump = Some((NodeId(1), Duration::from_millis(1)));
        assert_eq!(clock(&[1_000_000, 1_000_000], jump).kind(), beyond);
        assert_eq!(
            clock(&[1_000_000, 1_500_000], jump).to_string(),
            "clocks at n0 1.000x, n1 1.500x; n1 jumped 1ms forward"
        );
        let slow_leader = Clock {
            rates_ppm: vec![1_100_000, 1_100_000],
            leader_ppm: Some(899_000),
            jump: None,
        };
        assert_eq!(slow_leader.kind(), beyond);
    }
}
