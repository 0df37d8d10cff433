//! Every link into and out of a node made worse for a while, packet by packet: slowed (delay),
//! each packet held a different time (jitter), some held while the rest overtake (reorder),
//! some dropped (loss), some sent twice (duplicate). Healing heals every link.

use super::{millis, usual_hold};
use crate::link_fault::LinkFault;
use crate::nemesis::error::NemesisError;
use crate::nemesis::fault::{fault_boilerplate, Fault, Injection};
use crate::nemesis::fault::{FaultKind, KindSpec, NetworkNeed, Outage};
use crate::nemesis::faults::cuts::LinksChanged;
use crate::nemesis::inject::Nemesis;
use crate::nemesis::target::Target;
use std::fmt;

/// Every link into and out of a node slowed by tens to hundreds of milliseconds.
pub static DELAY: KindSpec = KindSpec {
    name: "delay",
    describe: "every link of a node slowed by 20-300 ms",
    network: NetworkNeed::Links,
    holds_packets: true,
    outage: Outage::LeaderDeaf,
    draw: |rng, target, _| {
        let by = millis(rng, 20, 300);
        let fault = NodeLinks::new(target, LinkFault::Delayed(by));
        (Box::new(fault), usual_hold(rng))
    },
    ..KindSpec::PLAIN
};

/// Every link into and out of a node holding each packet a delay drawn around a middle, so
/// packets overtake one another (network namespaces).
pub static JITTER: KindSpec = KindSpec {
    name: "jitter",
    describe: "every link of a node holds each packet 20-200 ms give or take up to all of it, \
               reordering them (network namespaces)",
    network: NetworkNeed::Packets,
    holds_packets: true,
    outage: Outage::LeaderDeaf,
    draw: |rng, target, _| {
        let by = millis(rng, 20, 200);
        let jitter = millis(rng, 10, by.as_millis() as u64);
        let fault = NodeLinks::new(target, LinkFault::Jittery { by, jitter });
        (Box::new(fault), usual_hold(rng))
    },
    ..KindSpec::PLAIN
};

/// Every link into and out of a node holding a share of its packets while the rest go at once
/// (network namespaces).
pub static REORDER: KindSpec = KindSpec {
    name: "reorder",
    describe: "every link of a node holds 10-50% of its packets 10-100 ms, the rest overtaking \
               them (network namespaces)",
    network: NetworkNeed::Packets,
    holds_packets: true,
    outage: Outage::LeaderDeaf,
    draw: |rng, target, _| {
        let percent = rng.range_inclusive(10, 50) as u8;
        let by = millis(rng, 10, 100);
        let fault = NodeLinks::new(target, LinkFault::Reordered { percent, by });
        (Box::new(fault), usual_hold(rng))
    },
    ..KindSpec::PLAIN
};

/// Every link into and out of a node drops a share of its packets (network namespaces).
pub static LOSS: KindSpec = KindSpec {
    name: "loss",
    describe: "every link of a node drops 5-40% of its packets (network namespaces)",
    network: NetworkNeed::Packets,
    outage: Outage::LeaderDeaf,
    draw: |rng, target, _| {
        let percent = rng.range_inclusive(5, 40) as u8;
        let fault = NodeLinks::new(target, LinkFault::Lossy { percent });
        (Box::new(fault), usual_hold(rng))
    },
    ..KindSpec::PLAIN
};

/// Every link into and out of a node sends a share of its packets twice (network namespaces).
pub static DUPLICATE: KindSpec = KindSpec {
    name: "duplicate",
    describe: "every link of a node sends 20-100% of its packets twice (network namespaces)",
    network: NetworkNeed::Packets,
    draw: |rng, target, _| {
        let percent = rng.range_inclusive(20, 100) as u8;
        let fault = NodeLinks::new(target, LinkFault::Duplicated { percent });
        (Box::new(fault), usual_hold(rng))
    },
    ..KindSpec::PLAIN
};

/// Every link into and out of the target made worse as `fault` says.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeLinks {
    /// The node.
    pub target: Target,
    /// What each of its links does (neither healthy nor cut).
    pub fault: LinkFault,
}

impl NodeLinks {
    /// Every link of `target` made worse as `fault` says.
    pub fn new(target: Target, fault: LinkFault) -> NodeLinks {
        assert!(
            !matches!(fault, LinkFault::Healthy | LinkFault::Cut),
            "a packet fault neither heals nor cuts: {fault}"
        );
        NodeLinks { target, fault }
    }

    /// What it does to every link of `node`, as a line.
    fn describe(&self, node: &dyn fmt::Display) -> String {
        match self.fault {
            LinkFault::Delayed(by) => format!("delay: every link of {node} slowed by {by:?}"),
            LinkFault::Jittery { by, jitter } => {
                format!("jitter: every link of {node} holds each packet {by:?} ± {jitter:?}")
            }
            LinkFault::Reordered { percent, by } => {
                format!("reorder: every link of {node} holds {percent}% of its packets {by:?}")
            }
            LinkFault::Lossy { percent } => {
                format!("loss: every link of {node} drops {percent}% of its packets")
            }
            LinkFault::Duplicated { percent } => {
                format!("duplicate: every link of {node} sends {percent}% of its packets twice")
            }
            LinkFault::Healthy | LinkFault::Cut => unreachable!("refused by NodeLinks::new"),
        }
    }
}

impl Fault for NodeLinks {
    fn kind(&self) -> FaultKind {
        FaultKind::of(match self.fault {
            LinkFault::Delayed(_) => &DELAY,
            LinkFault::Jittery { .. } => &JITTER,
            LinkFault::Reordered { .. } => &REORDER,
            LinkFault::Lossy { .. } => &LOSS,
            LinkFault::Duplicated { .. } => &DUPLICATE,
            LinkFault::Healthy | LinkFault::Cut => unreachable!("refused by NodeLinks::new"),
        })
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let (node, named) = nemesis.resolve(self.target);
        nemesis.isolate(node, self.fault)?;
        Ok(Injection::new(self.describe(&named), LinksChanged))
    }

    fault_boilerplate!();
}

impl fmt::Display for NodeLinks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe(&self.target))
    }
}
