//! The nemesis at work on a running [`LocalCluster`]: the means every fault injects and heals
//! with (links, signals, restarts, the servers' own clock and disk faults), and which node a
//! fault hits, decided when it comes (the leader of the moment, say).

use super::error::{Finding, NemesisError};
use super::target::Target;
use crate::link_fault::LinkFault;
use crate::local_cluster::LocalCluster;
use crate::system::{Connection, Unreachable};
use node::NodeId;
use server::wire::kv::ClockChange;
use server::TcpKvTransport;
use std::collections::BTreeSet;
use std::time::Duration;
use threadsim::DetRng;

/// A clock running true, in millionths.
pub const TRUE_RATE_PPM: u64 = 1_000_000;

/// How far from true a clock may run within the nodes' drift bound, in millionths.
pub const DRIFT_BOUND_PPM: u64 = 100_000;

/// How long the nemesis waits for a server to answer it.
pub(super) const CONTROL_TIMEOUT: Duration = Duration::from_millis(300);

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
    pub(super) fn control(&self) -> Result<&TcpKvTransport, NemesisError> {
        self.connection
            .control()
            .ok_or(NemesisError::NotCooperating)
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
        let (node, named) = match target {
            Target::Node(node) => (node, node.to_string()),
            Target::Leader { otherwise } => match self.leader() {
                Some(leader) => {
                    self.hit_leader = Some(leader);
                    (leader, format!("{leader} (the leader)"))
                }
                None => (otherwise, format!("{otherwise} (no single leader)")),
            },
        };
        assert!(
            self.cluster.ids().contains(&node),
            "{target} resolved to {node}, not a node of the cluster"
        );
        (node, named)
    }

    /// Every node of the cluster but `node`.
    pub(super) fn others_than(&self, node: NodeId) -> Vec<NodeId> {
        let ids = self.cluster.ids();
        ids.into_iter().filter(|&other| other != node).collect()
    }

    /// Cuts every link between a node of `one` and a node of `other`, both ways.
    pub(super) fn cut_between(
        &mut self,
        one: &[NodeId],
        other: &[NodeId],
    ) -> Result<(), NemesisError> {
        assert!(
            one.iter().all(|node| !other.contains(node)),
            "a node on both sides of a cut: {one:?} and {other:?}"
        );
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

    /// Sets each directed link `(from, to)` to its fault.
    pub(super) fn set_links(
        &mut self,
        changes: &[(NodeId, NodeId, LinkFault)],
    ) -> Result<(), NemesisError> {
        self.cluster
            .set_links(changes)
            .map_err(NemesisError::io("the links"))
    }

    /// Sets every link into and out of `node` to `fault`.
    pub(super) fn isolate(&mut self, node: NodeId, fault: LinkFault) -> Result<(), NemesisError> {
        self.cluster
            .isolate(node, fault)
            .map_err(NemesisError::io(format!("the links of {node}")))
    }

    /// `kill -9` of each of `nodes` that runs.
    pub(super) fn kill(&mut self, nodes: &[NodeId]) -> Result<(), NemesisError> {
        for &node in nodes {
            if self.cluster.is_running(node) {
                self.cluster
                    .kill_9(node)
                    .map_err(NemesisError::io(format!("kill -9 {node}")))?;
            }
        }
        Ok(())
    }

    /// Starts each of `nodes` that does not run.
    pub(super) fn start(&mut self, nodes: &[NodeId]) -> Result<(), NemesisError> {
        for &node in nodes {
            if !self.cluster.is_running(node) {
                self.cluster
                    .start_node(node)
                    .map_err(NemesisError::io(format!("restarting {node}")))?;
            }
        }
        Ok(())
    }

    /// Asks `node` to change its clock as `change` says.
    pub(super) fn set_clock(&self, node: NodeId, change: ClockChange) -> Result<(), NemesisError> {
        (self.control()?.set_clock(node, change, CONTROL_TIMEOUT))
            .map(|_| ())
            .map_err(NemesisError::server(format!("the clock of {node}")))
    }

    /// Sets `node`'s clock to run true.
    pub(super) fn set_true_clock(&self, node: NodeId) -> Result<(), NemesisError> {
        let back = ClockChange {
            rate_ppm: TRUE_RATE_PPM,
            jump: Duration::ZERO,
        };
        self.set_clock(node, back)
    }

    /// Heals everything, whatever is injected: every link, every writer's reach, every paused
    /// node resumed, every stopped node started, every clock at 1x (the voters are the
    /// membership fault's to restore).
    pub fn heal_everything(&mut self) -> Vec<Finding> {
        let mut problems = Vec::new();
        if let Err(error) = self.cluster.heal_links() {
            problems.push(Finding(format!("healing the links: {error}")));
        }
        if self.cluster.has_lossy_disks() {
            for node in self.cluster.ids() {
                if let Err(error) = self.cluster.set_disk_full(node, false) {
                    problems.push(Finding(format!("the disk of {node}: {error}")));
                }
            }
        }
        self.writers_cut.lock().expect("not poisoned").clear();
        for node in self.cluster.ids() {
            if self.cluster.is_running(node) {
                let _ = self.cluster.signal(node, libc::SIGCONT);
            } else if let Err(problem) = self.start(&[node]) {
                problems.push(problem.into());
            }
        }
        for node in self.cluster.ids() {
            // A node just started runs true already and may not answer yet.
            let _ = self.set_true_clock(node);
        }
        problems
    }
}
