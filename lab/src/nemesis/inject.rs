//! Injecting one planned fault into a running [`LocalCluster`] and healing it: which node a
//! fault hits is decided here, when it comes (the leader of the moment, say).

use super::fault::{clocks_text, Direction, Fault, Target};
use super::forger::{Forger, Targets};
use crate::lossy_fs::Corruption;
use crate::system::{Connection, Unreachable};
use crate::{LinkFault, LocalCluster};
use node::NodeId;
use server::real_time::now;
use server::wire::kv::ClockChange;
use server::TcpKvTransport;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use threadsim::DetRng;

/// How long the nemesis waits for a server to answer it.
const CONTROL_TIMEOUT: Duration = Duration::from_millis(300);

/// A clock running true.
const TRUE_RATE_PPM: u64 = 1_000_000;

/// What healing an injected fault takes.
#[derive(Debug)]
pub enum Injected {
    /// Links were cut or slowed (and the writers cut from a minority): heal every link.
    Links,
    /// These nodes were killed: start them again.
    Killed(Vec<NodeId>),
    /// This node was stopped with SIGSTOP: resume it.
    Paused(NodeId),
    /// These nodes' clocks were changed: set their rates back to 1x.
    Clocks(Vec<NodeId>),
    /// This node was stopped, one of its files damaged (if it had one) and the node started
    /// again: if it refused to start, undo the damage and start it once more.
    Corrupted(NodeId, Option<Corruption>),
    /// This node's disk was made to fail (or full) at this time: it must exit; start it again
    /// on a working disk.
    Disk(NodeId, Instant),
    /// The configuration was changed: make these changes to undo it.
    Reconfigured(Vec<node::MembershipChange>),
    /// A stranger sends forged messages: stop it, and count what came of them.
    Forging(Forger),
}

/// The cluster a nemesis works on, and the means it works with.
pub struct Nemesis<'a> {
    /// The servers.
    pub cluster: &'a mut LocalCluster,
    /// The nemesis's own connection to the servers (who leads; clock and disk faults, for a
    /// system that cooperates).
    pub connection: &'a dyn Connection,
    /// The nodes the writing clients cannot reach.
    pub writers_cut: &'a Unreachable,
    /// Decides which nodes join a partition's minority.
    pub rng: DetRng,
    /// The leader the last fault injected was aimed at, when it was aimed at the leader and
    /// one led.
    pub hit_leader: Option<NodeId>,
    /// The nodes a membership fault took out of the voters and has not made voters again.
    pub reconfigured: BTreeSet<NodeId>,
}

impl Nemesis<'_> {
    /// The one node that says it leads, if exactly one does.
    pub fn leader(&self) -> Option<NodeId> {
        match self.connection.leaders(CONTROL_TIMEOUT)[..] {
            [leader] => Some(leader),
            _ => None,
        }
    }

    /// The servers' own fault requests: an error for a system that does not cooperate.
    pub(super) fn control(&self) -> Result<&TcpKvTransport, String> {
        self.connection.control().ok_or_else(|| {
            "the system does not make clock or disk faults, or change its membership, itself"
                .to_string()
        })
    }

    /// Whether a node other than `old` says it leads.
    pub fn led_by_other_than(&self, old: NodeId) -> bool {
        self.connection
            .leaders(CONTROL_TIMEOUT)
            .iter()
            .any(|&leader| leader != old)
    }

    /// The node `target` names now, and how to say which it was.
    pub(super) fn resolve(&mut self, target: Target) -> (NodeId, String) {
        match target {
            Target::Node(node) => (node, node.to_string()),
            Target::Leader { otherwise } => match self.leader() {
                Some(leader) => {
                    self.hit_leader = Some(leader);
                    (leader, format!("{leader} (the leader)"))
                }
                None => (otherwise, format!("{otherwise} (no single leader)")),
            },
        }
    }

    /// Injects `fault`; says what was done, and what healing it takes.
    pub fn inject(&mut self, fault: &Fault) -> Result<(String, Injected), String> {
        self.hit_leader = None;
        match *fault {
            Fault::Partition { target, size } => {
                let (first, named) = self.resolve(target);
                let mut minority = vec![first];
                let mut others: Vec<NodeId> = self
                    .cluster
                    .ids()
                    .into_iter()
                    .filter(|&n| n != first)
                    .collect();
                while minority.len() < size as usize && !others.is_empty() {
                    minority.push(others.remove(self.rng.index(others.len())));
                }
                self.cut_between(&minority, &others)?;
                self.writers_cut
                    .lock()
                    .expect("not poisoned")
                    .extend(&minority);
                let rest: Vec<String> = minority[1..].iter().map(NodeId::to_string).collect();
                let also = if rest.is_empty() {
                    String::new()
                } else {
                    format!(" and {}", rest.join(", "))
                };
                Ok((format!("partition: {named}{also} cut off"), Injected::Links))
            }
            Fault::OneWay { target, direction } => {
                let (node, named) = self.resolve(target);
                let changes: Vec<(NodeId, NodeId, LinkFault)> = self
                    .cluster
                    .ids()
                    .into_iter()
                    .filter(|&other| other != node)
                    .map(|other| match direction {
                        Direction::Outgoing => (node, other, LinkFault::Cut),
                        Direction::Incoming => (other, node, LinkFault::Cut),
                    })
                    .collect();
                self.set_links(&changes)?;
                let which = match direction {
                    Direction::Outgoing => "out of",
                    Direction::Incoming => "into",
                };
                Ok((
                    format!("one-way: every link {which} {named} cut"),
                    Injected::Links,
                ))
            }
            Fault::Delay { target, by } => {
                let (node, named) = self.resolve(target);
                self.isolate(node, LinkFault::Delayed(by))?;
                Ok((
                    format!("delay: every link of {named} slowed by {by:?}"),
                    Injected::Links,
                ))
            }
            Fault::Jitter { target, by, jitter } => {
                let (node, named) = self.resolve(target);
                self.isolate(node, LinkFault::Jittery { by, jitter })?;
                Ok((
                    format!("jitter: every link of {named} holds each packet {by:?} ± {jitter:?}"),
                    Injected::Links,
                ))
            }
            Fault::Reorder {
                target,
                percent,
                by,
            } => {
                let (node, named) = self.resolve(target);
                self.isolate(node, LinkFault::Reordered { percent, by })?;
                Ok((
                    format!(
                        "reorder: every link of {named} holds {percent}% of its packets {by:?}"
                    ),
                    Injected::Links,
                ))
            }
            Fault::PacketLoss { target, percent } => {
                let (node, named) = self.resolve(target);
                self.isolate(node, LinkFault::Lossy { percent })?;
                Ok((
                    format!("loss: every link of {named} drops {percent}% of its packets"),
                    Injected::Links,
                ))
            }
            Fault::Duplicate { target, percent } => {
                let (node, named) = self.resolve(target);
                self.isolate(node, LinkFault::Duplicated { percent })?;
                Ok((
                    format!(
                        "duplicate: every link of {named} sends {percent}% of its packets twice"
                    ),
                    Injected::Links,
                ))
            }
            Fault::Bridge { target } => {
                let (middle, named) = self.resolve(target);
                let mut others: Vec<NodeId> = self
                    .cluster
                    .ids()
                    .into_iter()
                    .filter(|&n| n != middle)
                    .collect();
                let mut half = Vec::new();
                while 2 * half.len() < others.len() {
                    half.push(others.remove(self.rng.index(others.len())));
                }
                self.cut_between(&half, &others)?;
                Ok((
                    format!(
                        "bridge: {named} in the middle of {} and {}",
                        names(&half),
                        names(&others)
                    ),
                    Injected::Links,
                ))
            }
            Fault::Ring { ref order } => {
                let far_apart = ring_cuts(order);
                let changes: Vec<(NodeId, NodeId, LinkFault)> = far_apart
                    .iter()
                    .flat_map(|&(a, b)| [(a, b, LinkFault::Cut), (b, a, LinkFault::Cut)])
                    .collect();
                self.set_links(&changes)?;
                let cut: Vec<String> = far_apart.iter().map(|(a, b)| format!("{a}-{b}")).collect();
                Ok((
                    format!("ring {}: cut {}", names(order), cut.join(", ")),
                    Injected::Links,
                ))
            }
            Fault::Kill { target } => {
                let (node, named) = self.resolve(target);
                self.kill(&[node])?;
                Ok((format!("kill -9 {named}"), Injected::Killed(vec![node])))
            }
            Fault::KillAll => {
                let nodes = self.cluster.ids();
                self.kill(&nodes)?;
                Ok(("kill -9 every node".to_string(), Injected::Killed(nodes)))
            }
            Fault::Pause { target } => {
                let (node, named) = self.resolve(target);
                self.cluster
                    .signal(node, libc::SIGSTOP)
                    .map_err(|error| format!("SIGSTOP {node}: {error}"))?;
                Ok((format!("SIGSTOP {named}"), Injected::Paused(node)))
            }
            Fault::Clock {
                ref rates_ppm,
                leader_ppm,
                jump,
            } => {
                let nodes = self.cluster.ids();
                let mut rates_ppm = rates_ppm.clone();
                let mut leader = String::new();
                if let (Some(rate), Some(node)) = (leader_ppm, self.leader()) {
                    rates_ppm[node.0 as usize] = rate;
                    leader = format!(" ({node} the leader)");
                }
                for (&node, &rate_ppm) in nodes.iter().zip(&rates_ppm) {
                    let jump = match jump {
                        Some((jumping, by)) if jumping == node => by,
                        _ => Duration::ZERO,
                    };
                    self.control()?
                        .set_clock(node, ClockChange { rate_ppm, jump }, CONTROL_TIMEOUT)
                        .map_err(|why| format!("the clock of {node}: {why}"))?;
                }
                let what = format!("{}{leader}", clocks_text(&rates_ppm, jump));
                Ok((what, Injected::Clocks(nodes)))
            }
            Fault::PowerLoss { target, mode } => {
                let (node, named) = self.resolve(target);
                let reports = self
                    .cluster
                    .power_loss(&[node], mode, &mut self.rng)
                    .map_err(|error| format!("power cut to {node}: {error}"))?;
                Ok((
                    format!("power cut to {named}: {}", reports[0]),
                    Injected::Killed(vec![node]),
                ))
            }
            Fault::PowerLossAll { mode } => {
                let nodes = self.cluster.ids();
                let reports = self
                    .cluster
                    .power_loss(&nodes, mode, &mut self.rng)
                    .map_err(|error| format!("power cut: {error}"))?;
                let lost: Vec<String> = nodes
                    .iter()
                    .zip(&reports)
                    .map(|(node, report)| format!("{node} {}", report.bytes_lost))
                    .collect();
                Ok((
                    format!(
                        "power cut to every node ({mode}): unsynced bytes lost {}",
                        lost.join(", ")
                    ),
                    Injected::Killed(nodes),
                ))
            }
            Fault::DiskFull { target } => {
                let (node, named) = self.resolve(target);
                self.cluster
                    .set_disk_full(node, true)
                    .map_err(|error| format!("the disk of {node}: {error}"))?;
                Ok((format!("disk of {named} full"), Injected::Disk(node, now())))
            }
            Fault::Corrupt {
                target,
                zero_sector,
            } => {
                let (node, named) = self.resolve(target);
                self.kill(&[node])?;
                let corruption = self
                    .cluster
                    .corrupt(node, &mut self.rng, zero_sector)
                    .map_err(|error| format!("damaging a file of {node}: {error}"))?;
                self.start(&[node])?;
                let what = match &corruption {
                    Some(corruption) => format!("{named} stopped, {corruption}, started"),
                    None => format!("{named} stopped and started: it had no file to damage"),
                };
                Ok((what, Injected::Corrupted(node, corruption)))
            }
            Fault::Disk { target } => {
                let (node, named) = self.resolve(target);
                self.control()?
                    .fail_disk(node, CONTROL_TIMEOUT)
                    .map_err(|why| format!("the disk of {node}: {why}"))?;
                Ok((
                    format!("disk of {named} fails every write"),
                    Injected::Disk(node, now()),
                ))
            }
            Fault::Reconfigure(change) => self.reconfigure(change),
            Fault::Forged { target } => {
                let (_, named) = self.resolve(target);
                let forger = Forger::start(Targets::of(self.cluster))
                    .map_err(|error| format!("cannot start the forger: {error}"))?;
                Ok((
                    format!("forged: a stranger's messages to every node ({named} watched)"),
                    Injected::Forging(forger),
                ))
            }
        }
    }

    /// Cuts every link between a node of `one` and a node of `other`, both ways.
    fn cut_between(&mut self, one: &[NodeId], other: &[NodeId]) -> Result<(), String> {
        let changes: Vec<(NodeId, NodeId, LinkFault)> = one
            .iter()
            .flat_map(|&a| {
                other
                    .iter()
                    .flat_map(move |&b| [(a, b, LinkFault::Cut), (b, a, LinkFault::Cut)])
            })
            .collect();
        self.set_links(&changes)
    }

    fn set_links(&mut self, changes: &[(NodeId, NodeId, LinkFault)]) -> Result<(), String> {
        self.cluster
            .set_links(changes)
            .map_err(|error| format!("the links: {error}"))
    }

    fn isolate(&mut self, node: NodeId, fault: LinkFault) -> Result<(), String> {
        self.cluster
            .isolate(node, fault)
            .map_err(|error| format!("the links of {node}: {error}"))
    }

    fn kill(&mut self, nodes: &[NodeId]) -> Result<(), String> {
        for &node in nodes {
            if self.cluster.is_running(node) {
                self.cluster
                    .kill_9(node)
                    .map_err(|error| format!("kill -9 {node}: {error}"))?;
            }
        }
        Ok(())
    }

    /// Heals `injected`: returns what came of it, or what the servers did wrong. A node whose
    /// disk failed has until `limit` to exit.
    pub fn heal(&mut self, injected: Injected, limit: Instant) -> Result<String, String> {
        match injected {
            Injected::Links => {
                self.writers_cut.lock().expect("not poisoned").clear();
                self.cluster
                    .heal_links()
                    .map_err(|error| format!("healing the links: {error}"))?;
                Ok("healed".into())
            }
            Injected::Killed(nodes) => {
                self.start(&nodes)?;
                Ok("restarted".into())
            }
            Injected::Paused(node) => {
                self.cluster
                    .signal(node, libc::SIGCONT)
                    .map_err(|error| format!("SIGCONT {node}: {error}"))?;
                Ok("resumed".into())
            }
            Injected::Clocks(nodes) => {
                let mut restarted = Vec::new();
                for node in nodes {
                    if self.set_true_clock(node).is_err() {
                        restarted.push(node.to_string());
                    }
                }
                if restarted.is_empty() {
                    Ok("clocks back to 1x".into())
                } else {
                    // A node restarted since the clocks were set runs true already, and may
                    // not answer yet; one that does not come back is for the recovery check.
                    Ok(format!(
                        "clocks back to 1x ({} not answering: restarted since, so running true)",
                        restarted.join(", ")
                    ))
                }
            }
            Injected::Corrupted(node, corruption) => self.after_corruption(node, corruption),
            Injected::Reconfigured(changes) => self.reconfigure_back(&changes),
            Injected::Forging(forger) => {
                let tally = forger.stop();
                if tally.taken.is_empty() && tally.refused > 0 {
                    Ok(tally.describe())
                } else if tally.taken.is_empty() {
                    Err(format!("{}: none reached a node", tally.describe()))
                } else {
                    Err(format!("{}: {}", tally.describe(), tally.taken.join("; ")))
                }
            }
            Injected::Disk(node, since) => {
                let exited = self
                    .cluster
                    .wait_for_exit(node, limit.saturating_duration_since(now()))
                    .map_err(|error| format!("waiting for {node}: {error}"))?;
                let after = now().saturating_duration_since(since);
                let outcome = match exited {
                    Some(status) if status.code() == Some(1) => Ok(format!(
                        "{node} stopped (exit status 1) {after:.1?} after its disk failed; \
                         restarted on a working disk"
                    )),
                    Some(status) => Err(format!(
                        "{node}'s disk failed and it exited with {status}, not with 1 and a message"
                    )),
                    None => {
                        let _ = self.cluster.kill_9(node);
                        Err(format!(
                            "{node} kept running {after:.1?} after its disk failed: it went on as \
                             if its writes had been made"
                        ))
                    }
                };
                if self.cluster.has_lossy_disks() {
                    self.cluster
                        .set_disk_full(node, false)
                        .map_err(|error| format!("the disk of {node}: {error}"))?;
                }
                self.start(&[node])?;
                outcome
            }
        }
    }

    /// What came of damaging `node`'s file: a node that runs took it (it was in nothing the
    /// node needed, or cut as a torn tail; the history says whether it served it); one that
    /// exited must have said what was damaged, and is started again on the undamaged file.
    fn after_corruption(
        &mut self,
        node: NodeId,
        corruption: Option<Corruption>,
    ) -> Result<String, String> {
        let exited = self
            .cluster
            .wait_for_exit(node, Duration::ZERO)
            .map_err(|error| format!("waiting for {node}: {error}"))?;
        let Some(status) = exited else {
            return Ok(format!("{node} ran on it"));
        };
        let log = self.cluster.log(node);
        let said = log.lines().rev().find(|line| line.contains("damaged"));
        let outcome = match (said, &corruption) {
            (Some(line), Some(corruption)) => {
                self.cluster
                    .repair(node, corruption)
                    .map_err(|error| format!("undoing the damage to {node}: {error}"))?;
                Ok(format!(
                    "{node} refused it ({status}: {}); the bytes put back, restarted",
                    line.trim()
                ))
            }
            _ => Err(format!(
                "{node} exited with {status} after a file was damaged, without saying what was \
                 damaged"
            )),
        };
        self.start(&[node])?;
        outcome
    }

    fn start(&mut self, nodes: &[NodeId]) -> Result<(), String> {
        for &node in nodes {
            if !self.cluster.is_running(node) {
                self.cluster
                    .start_node(node)
                    .map_err(|error| format!("restarting {node}: {error}"))?;
            }
        }
        Ok(())
    }

    /// Heals everything, whatever is injected: every link, every writer's reach, every paused
    /// node resumed, every stopped node started, every clock at 1x.
    pub fn heal_everything(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Err(error) = self.cluster.heal_links() {
            problems.push(format!("healing the links: {error}"));
        }
        if self.cluster.has_lossy_disks() {
            for node in self.cluster.ids() {
                if let Err(error) = self.cluster.set_disk_full(node, false) {
                    problems.push(format!("the disk of {node}: {error}"));
                }
            }
        }
        self.writers_cut.lock().expect("not poisoned").clear();
        for node in self.cluster.ids() {
            if self.cluster.is_running(node) {
                let _ = self.cluster.signal(node, libc::SIGCONT);
            } else if let Err(problem) = self.start(&[node]) {
                problems.push(problem);
            }
        }
        for node in self.cluster.ids() {
            // A node just started runs true already and may not answer yet.
            let _ = self.set_true_clock(node);
        }
        problems.extend(self.restore_voters());
        problems
    }

    /// Sets `node`'s clock to run true.
    fn set_true_clock(&self, node: NodeId) -> Result<(), String> {
        let back = ClockChange {
            rate_ppm: TRUE_RATE_PPM,
            jump: Duration::ZERO,
        };
        self.control()?
            .set_clock(node, back, CONTROL_TIMEOUT)
            .map(|_| ())
    }
}

/// The nodes, as `n0, n2`.
fn names(nodes: &[NodeId]) -> String {
    let names: Vec<String> = nodes.iter().map(NodeId::to_string).collect();
    names.join(", ")
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
