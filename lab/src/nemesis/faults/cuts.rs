//! Cut links: a minority cut off (partition), every link out of or into a node (one-way), two
//! halves with a node in both (bridge), and a majorities ring. Healing heals every link, and
//! gives the writing clients back the nodes they were cut from.

use super::usual_hold;
use crate::link_fault::LinkFault;
use crate::nemesis::error::{Finding, NemesisError};
use crate::nemesis::fault::{fault_boilerplate, Fault, Injected, Injection};
use crate::nemesis::fault::{FaultKind, KindSpec, NetworkNeed, Outage};
use crate::nemesis::inject::Nemesis;
use crate::nemesis::target::{names, Target};
use node::NodeId;
use std::fmt;
use std::time::Instant;
use threadsim::DetRng;

/// A minority (the leader, often) cut off from the rest: every link into and out of it cut,
/// and the writing clients on the majority's side.
pub static PARTITION: KindSpec = KindSpec {
    name: "partition",
    describe: "a minority, often the leader, cut off from the rest",
    network: NetworkNeed::Links,
    draw: |rng, target, nodes| {
        let largest_minority = (nodes.saturating_sub(1) / 2).max(1);
        let size = rng.range_inclusive(1, largest_minority.into()) as u32;
        (Box::new(Partition { target, size }), usual_hold(rng))
    },
    ..KindSpec::PLAIN
};

/// Every link out of a node (or into it) cut, the other direction working.
pub static ONE_WAY: KindSpec = KindSpec {
    name: "one-way",
    describe: "every link out of (or into) a node cut",
    network: NetworkNeed::Links,
    outage: Outage::LeaderDeaf,
    draw: |rng, target, _| {
        let direction = if rng.chance(0.5) {
            Direction::Outgoing
        } else {
            Direction::Incoming
        };
        (Box::new(OneWay { target, direction }), usual_hold(rng))
    },
    ..KindSpec::PLAIN
};

/// The nodes split in two halves and one node in both: every link between the halves cut, the
/// node in the middle (the leader, often) reaching every other (after Jepsen).
pub static BRIDGE: KindSpec = KindSpec {
    name: "bridge",
    describe: "two halves cut apart, one node (often the leader) in both",
    network: NetworkNeed::Links,
    draw: |rng, target, _| (Box::new(Bridge { target }), usual_hold(rng)),
    ..KindSpec::PLAIN
};

/// Each node reaching a majority, its neighbours on a ring drawn from the seed, and no two nodes
/// the same majority: every link between nodes far apart on the ring cut (Jepsen's majorities
/// ring).
pub static RING: KindSpec = KindSpec {
    name: "ring",
    describe: "each node reaching a different majority (a majorities ring)",
    network: NetworkNeed::Links,
    draw: |rng: &mut DetRng, _, nodes| {
        let mut order: Vec<NodeId> = (0..nodes).map(NodeId).collect();
        for end in (1..order.len()).rev() {
            order.swap(end, rng.index(end + 1));
        }
        (Box::new(Ring { order }), usual_hold(rng))
    },
    ..KindSpec::PLAIN
};

/// The target and `size - 1` other nodes cut off from the rest.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    /// The first node of the minority.
    pub target: Target,
    /// How many nodes the minority has (less than half).
    pub size: u32,
}

/// Which links of a node a one-way cut takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The node's calls to the others (and their answers) fail; theirs to it go through.
    Outgoing,
    /// The others' calls to the node fail; its calls to them go through.
    Incoming,
}

/// The target's links in one direction cut.
#[derive(Clone, Debug, PartialEq)]
pub struct OneWay {
    /// The node.
    pub target: Target,
    /// Which links.
    pub direction: Direction,
}

/// The target reaching every node, the others split in two halves that do not reach each
/// other; which node goes to which half is drawn when the fault comes.
#[derive(Clone, Debug, PartialEq)]
pub struct Bridge {
    /// The node in the middle.
    pub target: Target,
}

/// Every link between nodes far apart on the ring `order` cut, so each node reaches a majority
/// (its neighbours) and no two the same one; on 3 nodes, the ring's first and last node cut
/// apart (a line: each end reaches a majority through the middle).
#[derive(Clone, Debug, PartialEq)]
pub struct Ring {
    /// The nodes around the ring.
    pub order: Vec<NodeId>,
}

/// Links were cut or slowed (and the writers perhaps cut from a minority): heal every link.
pub struct LinksChanged;

impl Injected for LinksChanged {
    fn heal(self: Box<Self>, nemesis: &mut Nemesis<'_>, _: Instant) -> Result<String, Finding> {
        nemesis.writers_cut.lock().expect("not poisoned").clear();
        nemesis
            .cluster
            .heal_links()
            .map_err(|error| Finding(format!("healing the links: {error}")))?;
        Ok("healed".into())
    }
}

impl Fault for Partition {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&PARTITION)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        assert!(self.size >= 1, "a minority has a node");
        let (first, named) = nemesis.resolve(self.target);
        let mut minority = vec![first];
        let mut others = nemesis.others_than(first);
        while minority.len() < self.size as usize && !others.is_empty() {
            minority.push(others.remove(nemesis.rng.index(others.len())));
        }
        nemesis.cut_between(&minority, &others)?;
        (nemesis.writers_cut.lock().expect("not poisoned")).extend(&minority);
        let also = match &minority[1..] {
            [] => String::new(),
            rest => format!(" and {}", names(rest)),
        };
        let what = format!("partition: {named}{also} cut off");
        Ok(Injection::new(what, LinksChanged))
    }

    fault_boilerplate!();
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.size {
            1 => write!(f, "partition: {} cut off", self.target),
            size => write!(
                f,
                "partition: {} and {} more cut off",
                self.target,
                size - 1
            ),
        }
    }
}

impl Fault for OneWay {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&ONE_WAY)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let (node, named) = nemesis.resolve(self.target);
        let changes: Vec<(NodeId, NodeId, LinkFault)> = (nemesis.others_than(node).into_iter())
            .map(|other| match self.direction {
                Direction::Outgoing => (node, other, LinkFault::Cut),
                Direction::Incoming => (other, node, LinkFault::Cut),
            })
            .collect();
        nemesis.set_links(&changes)?;
        let which = self.direction.preposition();
        let what = format!("one-way: every link {which} {named} cut");
        Ok(Injection::new(what, LinksChanged))
    }

    fault_boilerplate!();
}

impl Direction {
    /// "out of" or "into".
    fn preposition(self) -> &'static str {
        match self {
            Direction::Outgoing => "out of",
            Direction::Incoming => "into",
        }
    }
}

impl fmt::Display for OneWay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let which = self.direction.preposition();
        write!(f, "one-way: every link {which} {} cut", self.target)
    }
}

impl Fault for Bridge {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&BRIDGE)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let (middle, named) = nemesis.resolve(self.target);
        let mut others = nemesis.others_than(middle);
        let mut half = Vec::new();
        while 2 * half.len() < others.len() {
            half.push(others.remove(nemesis.rng.index(others.len())));
        }
        nemesis.cut_between(&half, &others)?;
        let what = format!(
            "bridge: {named} in the middle of {} and {}",
            names(&half),
            names(&others)
        );
        Ok(Injection::new(what, LinksChanged))
    }

    fault_boilerplate!();
}

impl fmt::Display for Bridge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bridge: {} in the middle of two halves", self.target)
    }
}

impl Fault for Ring {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&RING)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let far_apart = ring_cuts(&self.order);
        let changes: Vec<(NodeId, NodeId, LinkFault)> = far_apart
            .iter()
            .flat_map(|&(a, b)| [(a, b, LinkFault::Cut), (b, a, LinkFault::Cut)])
            .collect();
        nemesis.set_links(&changes)?;
        let cut: Vec<String> = far_apart.iter().map(|(a, b)| format!("{a}-{b}")).collect();
        let what = format!("ring {}: cut {}", names(&self.order), cut.join(", "));
        Ok(Injection::new(what, LinksChanged))
    }

    fault_boilerplate!();
}

impl fmt::Display for Ring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ring: Vec<String> = self.order.iter().map(NodeId::to_string).collect();
        write!(
            f,
            "ring: each node reaches its neighbours on {}",
            ring.join("-")
        )
    }
}

/// The pairs of nodes a majorities ring over `order` cuts apart: those farther apart around
/// the ring than each node's reach, the fewest neighbours on each side that make a majority
/// with the node itself. On 3 nodes every pair is neighbours, so the ring's first and last are
/// cut apart instead (a line).
fn ring_cuts(order: &[NodeId]) -> Vec<(NodeId, NodeId)> {
    let nodes = order.len();
    let majority = nodes / 2 + 1;
    let reach = majority / 2;
    let mut cuts = Vec::new();
    for i in 0..nodes {
        for j in i + 1..nodes {
            let apart = (j - i).min(nodes - (j - i));
            if apart > reach {
                cuts.push((order[i], order[j]));
            }
        }
    }
    if cuts.is_empty() && nodes >= 3 {
        cuts.push((order[0], order[nodes - 1]));
    }
    cuts
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    /// Whom each node reaches (itself included) when `cuts` are cut.
    fn reached(nodes: usize, cuts: &[(NodeId, NodeId)]) -> Vec<Vec<NodeId>> {
        (0..nodes as u32)
            .map(|a| {
                (0..nodes as u32)
                    .filter(|&b| {
                        !cuts.contains(&(NodeId(a), NodeId(b)))
                            && !cuts.contains(&(NodeId(b), NodeId(a)))
                    })
                    .map(NodeId)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn in_a_ring_each_node_reaches_a_majority_and_no_two_the_same() {
        for nodes in 3..=9usize {
            let order: Vec<NodeId> = (0..nodes as u32).map(NodeId).collect();
            let cuts = ring_cuts(&order);
            assert!(!cuts.is_empty(), "{nodes} nodes: nothing cut");
            let reached = reached(nodes, &cuts);
            for (node, sees) in reached.iter().enumerate() {
                assert!(
                    2 * sees.len() > nodes,
                    "{nodes} nodes: n{node} sees {sees:?}"
                );
            }
            // Not one majority that everybody shares: the cut is not a plain partition.
            let everyone_sees_all = reached.iter().all(|sees| sees.len() == nodes);
            assert!(!everyone_sees_all);
            if nodes >= 4 {
                let mut distinct = reached.clone();
                distinct.sort();
                distinct.dedup();
                assert_eq!(distinct.len(), nodes, "{nodes} nodes: {reached:?}");
            }
        }
    }
}
