//! [`ClusterSettings`]: what every simulated run's cluster is, whatever runs on it (the raft
//! workload's commands or the key-value clients): its size, its network, its broken variants,
//! its faults, its storage and its snapshots. A workload's own settings hold one
//! ([`crate::ChaosConfig::cluster`], [`crate::KvWorkloadConfig::cluster`]), so the cluster is
//! read from a [`RunSpec`] and built in one place.

use crate::cluster::{drawn_apply_capacity, ClusterConfig};
use crate::runner::Sim;
use node::MutationSet;
use runspec::{FaultMix, RunSpec, SimStorage};

/// The cluster of a simulated run (see the module's documentation).
#[derive(Clone, Debug)]
pub struct ClusterSettings {
    /// Cluster size.
    pub nodes: usize,
    /// Whether the network loses 10% of requests and 10% of replies.
    pub unreliable: bool,
    /// Deliberately broken behaviours switched on in every node (and key-value server).
    pub mutations: MutationSet,
    /// Which kinds of fault are injected.
    pub faults: FaultMix,
    /// Where each node keeps its state.
    pub storage: SimStorage,
    /// Every node's service hands its node a snapshot once the log takes more than this many
    /// bytes (`None`: never).
    pub snapshot_threshold: Option<usize>,
    /// Configuration overlap is not checked (see [`runspec::RunSpec::overlap_unchecked`]).
    pub overlap_unchecked: bool,
}

impl Default for ClusterSettings {
    fn default() -> Self {
        ClusterSettings {
            nodes: 5,
            unreliable: true,
            mutations: MutationSet::default(),
            faults: FaultMix::DEFAULT,
            storage: SimStorage::Copies,
            snapshot_threshold: None,
            overlap_unchecked: false,
        }
    }
}

impl ClusterSettings {
    /// The cluster `spec` says.
    pub fn from_spec(spec: &RunSpec) -> ClusterSettings {
        ClusterSettings {
            nodes: spec.nodes as usize,
            unreliable: !spec.reliable,
            mutations: spec.mutations.iter().copied().collect(),
            faults: spec.faults,
            storage: spec.storage,
            snapshot_threshold: spec.snapshot_threshold.map(threshold_bytes),
            overlap_unchecked: spec.overlap_unchecked,
        }
    }

    /// The cluster's configuration in `sim`, whose fault points it arms if the faults say so:
    /// crashes that lose power or meet a read error, the starting configuration of a run whose
    /// membership changes, and an apply channel's capacity drawn from the seed.
    pub fn cluster_config(&self, sim: &Sim) -> ClusterConfig {
        if self.faults.fault_points {
            sim.arm_fault_points();
        }
        let mut config = ClusterConfig::new(self.nodes);
        config.net.unreliable = self.unreliable;
        config.node.mutations = self.mutations.clone();
        config.apply_capacity = drawn_apply_capacity(sim);
        config.snapshot_threshold = self.snapshot_threshold;
        config.power_loss_on_crash = self.faults.power_loss;
        config.read_error_after_crash = self.faults.read_errors;
        if self.faults.membership {
            config.membership = Some(crate::membership_changes::bootstrap(self.nodes));
        }
        config.overlap_unchecked = self.overlap_unchecked;
        config.storage = self.storage;
        assert_eq!(config.nodes, self.nodes, "the cluster is the size settled");
        config
    }
}

/// A snapshot threshold as a size in memory (at most 1 GiB, by `runspec::bounds`).
pub(crate) fn threshold_bytes(bytes: u64) -> usize {
    usize::try_from(bytes).expect("a snapshot threshold of at most 1 GiB")
}
