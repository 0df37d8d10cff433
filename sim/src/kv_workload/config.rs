//! [`KvWorkloadConfig`]: the shape of a key-value run (its cluster, clients, keys, read mode,
//! faults' pace and sessions), the presets the tests and the catalogue hunt with, and the run a
//! [`RunSpec`] says.

use crate::cluster::ClusterConfig;
use crate::runner::Sim;
use crate::settings::ClusterSettings;
use crate::skew::ClockSkew;

use node::kv::{KvServerConfig, ReadMode, SessionPolicy};
use runspec::{FaultMix, RunSpec};
use std::time::Duration;

/// The shape of one key-value run.
#[derive(Clone, Debug)]
pub struct KvWorkloadConfig {
    /// The servers' cluster, its faults and its storage. Of the faults, the key-value timeline
    /// draws its own shapes (the leader cut off with some clients, paused, two followers cut
    /// off) whatever `partitions`, `one_way` and `pauses` say, and takes from the mix:
    /// `crashes` (now and then a node crashed and restarted), `skew` (new rates at every
    /// isolation of the leader), `fault_points` (armed from the seed), `power_loss` (a crash
    /// loses what was not synced), `read_errors` (a restart refused once, tried again), and
    /// `membership` (the configuration changing under the clients: the cluster starts with
    /// three voters and the rest outside, and at every step of the timeline, one time in two,
    /// a node joins, is promoted, demoted or removed, or the leadership is handed over; the
    /// clerks know every server and find the leader as it moves). Liveness mode and the copies
    /// disk's own faults are the raft workload's.
    pub cluster: ClusterSettings,
    /// Concurrent clerks, one operation in flight each.
    pub clients: usize,
    /// Keys the operations touch (few, so operations on a key overlap).
    pub keys: usize,
    /// How gets are served.
    pub read_mode: ReadMode,
    /// Simulated time the clients run for.
    pub duration: Duration,
    /// A clerk gives up on an operation after this long (its outcome is then unknown).
    pub op_deadline: Duration,
    /// Clients kept on the old leader's side of each partition.
    pub clients_with_old_leader: usize,
    /// Clients that only read (the first ones): a client whose write hangs at a cut-off leader
    /// waits for its deadline, while a reader keeps asking, so the readers are what sees a
    /// stale read late in a partition.
    pub read_only_clients: usize,
    /// Capacity of each node's apply channel; `None` draws it from the seed
    /// ([`crate::cluster::drawn_apply_capacity`]), so some runs have a service that falls
    /// behind and fills it (backpressure on the node's applier).
    pub apply_capacity: Option<usize>,
    /// The drift bound the nodes assume (their `max_clock_drift_ppm`), which
    /// [`ClockSkew::WithinBound`] keeps to: wider than a real deployment's, so that the margin a
    /// lease needs is wide and a lease without it is caught.
    pub max_clock_drift_ppm: u64,
    /// The nodes' election timeout range (shortest, longest).
    pub election_timeout: (Duration, Duration),
    /// The quiet spell between two faults (shortest, longest).
    pub quiet_between_faults: (Duration, Duration),
    /// When the servers expire client sessions.
    pub sessions: SessionPolicy,
    /// Whether the clients run list-append transactions (`txn_client`) instead of single
    /// operations: the run's history is then [`KvRun::transactions`], checked for strict
    /// serializability.
    pub transactions: bool,
}

impl KvWorkloadConfig {
    /// The workload shaped to hunt lease bugs with lease reads: clocks drifting within the
    /// bound, a reliable network, and election timeouts of 1-1.05 s. A lease without the drift
    /// margin outlives the followers' refusal by a share of the election timeout (at 25% drift,
    /// 1/0.75 - 1/1.25 of it), while an election and the first writes on the new side take a
    /// roughly fixed 0.1-0.3 s: with 0.3-0.6 s timeouts the new side is rarely ready before the
    /// stale lease ends, with 1 s it mostly is.
    pub fn lease_hunt() -> KvWorkloadConfig {
        KvWorkloadConfig {
            cluster: ClusterSettings {
                unreliable: false,
                faults: FaultMix {
                    skew: ClockSkew::WithinBound,
                    fault_points: false,
                    power_loss: false,
                    ..FaultMix::DEFAULT
                },
                ..ClusterSettings::default()
            },
            read_mode: ReadMode::Lease,
            election_timeout: (Duration::from_millis(1000), Duration::from_millis(1050)),
            duration: Duration::from_secs(30),
            clients: 20,
            read_only_clients: 8,
            keys: 30,
            quiet_between_faults: (Duration::from_millis(500), Duration::from_millis(1000)),
            ..KvWorkloadConfig::default()
        }
    }
}

impl KvWorkloadConfig {
    /// The key-value run `spec` says (its seed is the simulation's): its cluster size, read
    /// mode, broken variants, length, message loss, crashes, clock skew, snapshots and session
    /// churn; the rest as [`KvWorkloadConfig::default`].
    pub fn from_spec(spec: &RunSpec) -> KvWorkloadConfig {
        let defaults = KvWorkloadConfig::default();
        KvWorkloadConfig {
            cluster: ClusterSettings::from_spec(spec),
            read_mode: spec.read_mode,
            duration: spec.duration.unwrap_or(defaults.duration),
            sessions: if spec.faults.session_churn {
                SESSION_CHURN
            } else {
                defaults.sessions
            },
            transactions: spec.workload == runspec::Workload::ListAppend,
            keys: if spec.workload == runspec::Workload::ListAppend {
                KvWorkloadConfig::list_append().keys
            } else {
                defaults.keys
            },
            ..defaults
        }
    }

    /// The workload with its clients running list-append transactions on
    /// [`LIST_APPEND_KEYS`] keys at once.
    pub fn list_append() -> KvWorkloadConfig {
        KvWorkloadConfig {
            transactions: true,
            keys: LIST_APPEND_KEYS,
            ..KvWorkloadConfig::default()
        }
    }

    /// The workload with sessions that expire all the time ([`SESSION_CHURN`]).
    pub fn session_churn() -> KvWorkloadConfig {
        KvWorkloadConfig {
            sessions: SESSION_CHURN,
            ..KvWorkloadConfig::default()
        }
    }
}

/// Keys in use at once by the list-append workload's transactions: few, so that concurrent
/// transactions read and append to the same lists.
pub const LIST_APPEND_KEYS: usize = 5;

/// Sessions that expire all the time (`--session-churn`): at most 20 for the workload's 30
/// clients, and 2 s of the log's clock unused. Every registration expires another client's
/// session, so retries keep meeting sessions that are gone.
pub const SESSION_CHURN: SessionPolicy = SessionPolicy {
    timeout: Duration::from_secs(2),
    max_sessions: 20,
};

impl KvWorkloadConfig {
    /// The cluster of a run of these settings in `sim`: the shared settings' cluster
    /// ([`ClusterSettings::cluster_config`]) with a key-value server on every node, and the
    /// workload's own clock-drift bound, election timeouts and apply channel.
    pub fn cluster_config(&self, sim: &Sim) -> ClusterConfig {
        let mut config = self.cluster.cluster_config(sim);
        config.node.max_clock_drift_ppm = self.max_clock_drift_ppm;
        let (min, max) = self.election_timeout;
        config.node.set_election_timeouts(min, max);
        if let Some(capacity) = self.apply_capacity {
            config.apply_capacity = capacity;
        }
        config.kv = Some(KvServerConfig {
            read_mode: self.read_mode,
            mutations: self.cluster.mutations.clone(),
            sessions: self.sessions,
            ..KvServerConfig::default()
        });
        config
    }
}

impl Default for KvWorkloadConfig {
    fn default() -> Self {
        KvWorkloadConfig {
            cluster: ClusterSettings::default(),
            clients: 30,
            keys: 10,
            read_mode: ReadMode::Log,
            duration: Duration::from_secs(27),
            op_deadline: Duration::from_millis(1000),
            clients_with_old_leader: 6,
            read_only_clients: 10,
            apply_capacity: None,
            max_clock_drift_ppm: 250_000,
            election_timeout: (Duration::from_millis(300), Duration::from_millis(600)),
            quiet_between_faults: (Duration::from_millis(1000), Duration::from_millis(3000)),
            sessions: SessionPolicy::default(),
            transactions: false,
        }
    }
}
