//! Availability under one fault on the leader of a healthy cluster of five: how long from the
//! fault until a command submitted after it commits on a majority, and the bound each fault must
//! stay within, derived from the node's timing. Safety holds under every fault; this measures
//! what each one costs, and a window past its bound is a liveness failure.
//!
//! The bounds, for followers that last heard the leader at the fault (`t0`):
//! - **The leader crashed, paused, cut off with a minority, or mute** (it receives but cannot
//!   send): the followers stop hearing it at `t0`. A follower's election timer fires by
//!   `t0 + max`; the others' leases (`min` since they last heard the leader) have run out by then,
//!   so its pre-vote and vote win unless votes split, which costs one more `max`. Each round
//!   takes a message delay out and back, and the first append of the new leader one more round:
//!   `2 * max + 4 * rpc_timeout`.
//! - **The leader deaf** (it sends, but hears nothing): its heartbeats keep every follower from
//!   campaigning until it steps down. It checks its quorum every `min` and steps down once no
//!   majority answered for `leader_quorum_timeout`; then the same as above:
//!   `leader_quorum_timeout + min + 2 * max + 4 * rpc_timeout`.
//! - **The leader hears only one follower**, or **is the end of a chain** (each node hears and
//!   reaches only its neighbours in a line): the leader has no majority and steps down as the
//!   deaf one does, so the deaf leader's bound. (In the chain the middle of the line may win an
//!   election sooner.)
//! - **The leader's side of a bridge** (two pairs that cannot reach each other, and a fifth
//!   node that reaches all): the leader keeps a majority (itself, its pair, the bridge), and
//!   the far pair's pre-votes fail against the bridge's lease; commits need not stop at all, but
//!   the crashed leader's bound holds a fortiori.
//! - **The leader's links flapping** (cut off from everyone and back, each phase 100-700 ms):
//!   the other four always hear each other, so either the leader commits in a connected phase or
//!   they elect one of them: the crashed leader's bound.
//! - **The leader's clock slow** (at the drift bound, 0.9x): nothing is lost but lease reads'
//!   length; the crashed leader's bound.
//! - **The leader's disk fails** (its next save is torn and it stops): a crash at its next save,
//!   which the next command brings at once; the crashed leader's bound.

use super::cluster;
use crate::cluster::Cluster;
use crate::runner::Sim;
use node::{Command, Config, LogIndex, MutationSet, NodeId, Term};
use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;
use threadsim::clock::RatePpm;
use threadsim::time::Instant;

/// How long the measurement waits for a commit before it gives up.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(20);

/// How often the measurement looks for a leader to submit to and for the commit.
const POLL: Duration = Duration::from_millis(5);

/// One fault on the leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeaderFault {
    /// Crashed, not restarted.
    Crash,
    /// Paused (SIGSTOP), not resumed.
    Pause,
    /// Cut off with one follower; the other three make a majority.
    PartitionedWithMinority,
    /// Every link into it cut; it still sends.
    Deaf,
    /// Every link out of it cut; it still receives.
    Mute,
    /// Every link into it cut but one follower's.
    HearsOnlyOne,
    /// The five in a line, each hearing and reaching only its neighbours, the leader at one end.
    ChainEnd,
    /// Two pairs cut from each other, the leader in one, the fifth node the bridge between.
    BridgeSide,
    /// Cut off from everyone and reconnected, over and over, each phase 100-700 ms.
    Flapping,
    /// Its clock runs at 0.9x of true time, the most the drift bound allows.
    SlowClock,
    /// Its disk fails in the middle of its next save (the sectors after the tear never reach it),
    /// and the node stops itself.
    DiskFails,
}

impl LeaderFault {
    /// Every one.
    pub const ALL: [LeaderFault; 11] = [
        LeaderFault::Crash,
        LeaderFault::Pause,
        LeaderFault::PartitionedWithMinority,
        LeaderFault::Deaf,
        LeaderFault::Mute,
        LeaderFault::HearsOnlyOne,
        LeaderFault::ChainEnd,
        LeaderFault::BridgeSide,
        LeaderFault::Flapping,
        LeaderFault::SlowClock,
        LeaderFault::DiskFails,
    ];

    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            LeaderFault::Crash => "leader crashed",
            LeaderFault::Pause => "leader paused",
            LeaderFault::PartitionedWithMinority => "leader cut off with a minority",
            LeaderFault::Deaf => "leader deaf (sends, hears nothing)",
            LeaderFault::Mute => "leader mute (hears, cannot send)",
            LeaderFault::HearsOnlyOne => "leader hears only one follower",
            LeaderFault::ChainEnd => "leader at the end of a chain",
            LeaderFault::BridgeSide => "leader beside a bridge",
            LeaderFault::Flapping => "leader's links flapping",
            LeaderFault::SlowClock => "leader's clock slow (0.9x)",
            LeaderFault::DiskFails => "leader's disk fails (it stops)",
        }
    }

    /// The longest the cluster may go without committing after it (see the module's
    /// documentation and [`Config::commit_bound_leader_lost`]).
    pub fn bound(self, config: &Config) -> Duration {
        match self {
            LeaderFault::Deaf | LeaderFault::HearsOnlyOne | LeaderFault::ChainEnd => {
                config.commit_bound_leader_deaf()
            }
            LeaderFault::Crash
            | LeaderFault::Pause
            | LeaderFault::PartitionedWithMinority
            | LeaderFault::Mute
            | LeaderFault::BridgeSide
            | LeaderFault::Flapping
            | LeaderFault::SlowClock
            | LeaderFault::DiskFails => config.commit_bound_leader_lost(),
        }
    }

    fn inject(self, cluster: &Cluster, leader: NodeId) {
        let others = cluster.others(leader);
        match self {
            LeaderFault::Crash => cluster.crash(leader),
            LeaderFault::Pause => cluster.pause(leader),
            LeaderFault::PartitionedWithMinority => {
                // With as many companions as leave the leader's side short of a majority (one
                // of five, none of three).
                let companions = (others.len() / 2).saturating_sub(1);
                let (minority, majority) = others.split_at(companions);
                let mut cut_off = vec![leader];
                cut_off.extend_from_slice(minority);
                cluster.partition(&[cut_off, majority.to_vec()]);
            }
            LeaderFault::Deaf => {
                for other in others {
                    cluster.partition_one_way(other, leader);
                }
            }
            LeaderFault::Mute => {
                for other in others {
                    cluster.partition_one_way(leader, other);
                }
            }
            LeaderFault::HearsOnlyOne => {
                for &other in &others[1..] {
                    cluster.partition_one_way(other, leader);
                }
            }
            LeaderFault::ChainEnd => {
                let mut line = vec![leader];
                line.extend_from_slice(&others);
                for (i, &a) in line.iter().enumerate() {
                    for &b in line.iter().skip(i + 2) {
                        cluster.partition_one_way(a, b);
                        cluster.partition_one_way(b, a);
                    }
                }
            }
            LeaderFault::BridgeSide => {
                let (near, far) = ([leader, others[0]], [others[2], others[3]]);
                for a in near {
                    for b in far {
                        cluster.partition_one_way(a, b);
                        cluster.partition_one_way(b, a);
                    }
                }
            }
            LeaderFault::Flapping => cluster.disconnect(leader),
            LeaderFault::SlowClock => cluster.set_clock_rate(leader, SLOW_CLOCK),
            LeaderFault::DiskFails => cluster.tear_next_save(leader),
        }
    }

    /// What it does while it lasts, at each poll: flapping links change phase when theirs ends.
    fn evolve(
        self,
        cluster: &Cluster,
        leader: NodeId,
        phase: &mut Phase,
        phase_length: &mut impl FnMut() -> Duration,
    ) {
        if self != LeaderFault::Flapping || cluster.clock().now() < phase.ends {
            return;
        }
        phase.connected = !phase.connected;
        if phase.connected {
            cluster.connect(leader);
        } else {
            cluster.disconnect(leader);
        }
        phase.ends = cluster.clock().now() + phase_length();
    }
}

/// The slow clock's rate: the slowest the drift bound (`max_clock_drift_ppm`, 10%) allows.
const SLOW_CLOCK: RatePpm = RatePpm(900_000);

/// A phase of flapping links: whether the leader is connected, and until when.
struct Phase {
    connected: bool,
    ends: Instant,
}

/// The shortest and the longest phase of flapping links.
pub const FLAPPING_PHASE: (Duration, Duration) =
    (Duration::from_millis(100), Duration::from_millis(700));

/// How long one phase of flapping links lasts, from the harness's stream.
fn flapping_phase(cluster: &Cluster) -> Duration {
    cluster.random_duration(FLAPPING_PHASE.0, FLAPPING_PHASE.1)
}

impl fmt::Display for LeaderFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// On a healthy cluster of five with `mutations`, injects `fault` on the leader and returns how
/// long until a command submitted after it committed on a majority ([`GIVE_UP_AFTER`] if none
/// did), and the bound it must stay within.
pub fn unavailable_after(
    sim: &Sim,
    fault: LeaderFault,
    mutations: &MutationSet,
) -> (Duration, Duration) {
    let cluster = cluster(sim, 5, false, mutations);
    let bound = fault.bound(&cluster.config().node);
    cluster.one(Command::from_text("a0"), 5, true);
    let leader = cluster.check_one_leader();
    let window = fault.window(&cluster, leader, "a", || flapping_phase(&cluster));
    cluster.shutdown();
    (window, bound)
}

impl LeaderFault {
    /// Whether it has a shape on a cluster of `nodes` that leaves a majority able to commit: a
    /// bridge between two pairs needs five, and in a chain of six or more no node hears a
    /// majority (each hears two neighbours at most), so nothing can ever commit.
    pub fn fits(self, nodes: usize) -> bool {
        match self {
            LeaderFault::BridgeSide => nodes == 5,
            LeaderFault::ChainEnd => (3..=5).contains(&nodes),
            _ => nodes >= 3,
        }
    }

    /// Injects it on `leader` of a healthy `cluster` and returns how long until a command
    /// submitted after it (tagged `tag`) committed on a majority ([`GIVE_UP_AFTER`] if none
    /// did); then takes it back (links healed, threads resumed, clocks at true time, a torn save
    /// ended). Flapping links draw each phase's length from `phase_length`.
    pub fn window(
        self,
        cluster: &Cluster,
        leader: NodeId,
        tag: &str,
        mut phase_length: impl FnMut() -> Duration,
    ) -> Duration {
        assert!(
            self.fits(cluster.ids().len()),
            "{self} on {} nodes",
            cluster.ids().len()
        );
        self.inject(cluster, leader);
        let mut phase = Phase {
            connected: false,
            ends: cluster.clock().now() + phase_length(),
        };
        let window = time_to_commit(cluster, tag, |cluster| {
            self.evolve(cluster, leader, &mut phase, &mut phase_length)
        })
        .unwrap_or(GIVE_UP_AFTER);
        cluster.heal();
        cluster.resume_every_paused_node();
        if self == LeaderFault::SlowClock {
            cluster.set_clock_rate(leader, TRUE_TIME);
        }
        cluster.end_torn_save(leader);
        window
    }
}

/// A clock at the rate of true time.
const TRUE_TIME: RatePpm = RatePpm(1_000_000);

/// From now, how long until a command submitted from now on commits on a majority: every node
/// that says it leads is handed one command per term, and each is watched until a majority
/// applied it; `on_poll` runs before each look. `None` after [`GIVE_UP_AFTER`].
fn time_to_commit(
    cluster: &Cluster,
    tag: &str,
    mut on_poll: impl FnMut(&Cluster),
) -> Option<Duration> {
    let started = cluster.clock().now();
    let majority = cluster.ids().len() / 2 + 1;
    let mut asked: BTreeSet<(NodeId, Term)> = BTreeSet::new();
    let mut submitted: Vec<(LogIndex, Command)> = Vec::new();
    while cluster.clock().now() - started < GIVE_UP_AFTER {
        on_poll(cluster);
        for id in cluster.ids() {
            let Some((term, true)) = cluster.state(id) else {
                continue;
            };
            if cluster.is_connected(id) && asked.insert((id, term)) {
                let command = Command::from_text(&format!("{tag}{}", asked.len()));
                if let Some((index, _)) = cluster.start(id, command.clone()) {
                    submitted.push((index, command));
                }
            }
        }
        for (index, command) in &submitted {
            let (count, applied) = cluster.applied_at(*index);
            if count >= majority && applied.as_ref() == Some(command) {
                return Some(cluster.clock().now() - started);
            }
        }
        cluster.sleep(POLL);
    }
    None
}

/// The leader goes deaf and a command must commit within the deaf leader's bound: what a
/// leader without check-quorum (`no-check-quorum`) fails, holding its followers forever.
pub fn deaf_leader_replaced_within_its_bound(sim: &Sim, mutations: &MutationSet) {
    let (window, bound) = unavailable_after(sim, LeaderFault::Deaf, mutations);
    assert!(
        window <= bound,
        "liveness: no commit for {window:?} after the leader went deaf, past its bound of \
         {bound:?}"
    );
}
