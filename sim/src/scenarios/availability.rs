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

use super::cluster;
use crate::cluster::Cluster;
use crate::runner::Sim;
use node::{Command, Config, LogIndex, MutationSet, NodeId, Term};
use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

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
}

impl LeaderFault {
    /// Every one.
    pub const ALL: [LeaderFault; 5] = [
        LeaderFault::Crash,
        LeaderFault::Pause,
        LeaderFault::PartitionedWithMinority,
        LeaderFault::Deaf,
        LeaderFault::Mute,
    ];

    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            LeaderFault::Crash => "leader crashed",
            LeaderFault::Pause => "leader paused",
            LeaderFault::PartitionedWithMinority => "leader cut off with a minority",
            LeaderFault::Deaf => "leader deaf (sends, hears nothing)",
            LeaderFault::Mute => "leader mute (hears, cannot send)",
        }
    }

    /// The longest the cluster may go without committing after it (see the module's
    /// documentation).
    pub fn bound(self, config: &Config) -> Duration {
        let elect = 2 * config.election_timeout_max + 4 * config.rpc_timeout;
        match self {
            LeaderFault::Deaf => config.leader_quorum_timeout + config.election_timeout_min + elect,
            _ => elect,
        }
    }

    fn inject(self, cluster: &Cluster, leader: NodeId) {
        let others = cluster.others(leader);
        match self {
            LeaderFault::Crash => cluster.crash(leader),
            LeaderFault::Pause => cluster.pause(leader),
            LeaderFault::PartitionedWithMinority => {
                let (minority, majority) = others.split_at(1);
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
        }
    }
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
    fault.inject(&cluster, leader);
    let window = time_to_commit(&cluster, "a").unwrap_or(GIVE_UP_AFTER);
    cluster.resume_every_paused_node();
    cluster.shutdown();
    (window, bound)
}

/// From now, how long until a command submitted from now on commits on a majority: every node
/// that says it leads is handed one command per term, and each is watched until a majority
/// applied it. `None` after [`GIVE_UP_AFTER`].
fn time_to_commit(cluster: &Cluster, tag: &str) -> Option<Duration> {
    let started = cluster.clock().now();
    let majority = cluster.ids().len() / 2 + 1;
    let mut asked: BTreeSet<(NodeId, Term)> = BTreeSet::new();
    let mut submitted: Vec<(LogIndex, Command)> = Vec::new();
    while cluster.clock().now() - started < GIVE_UP_AFTER {
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
