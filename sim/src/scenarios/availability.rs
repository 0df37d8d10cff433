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
//!
//! Each bound allows for one split vote. Splits are chance, and a cluster whose majority must be
//! unanimous (four of six) splits more often: each election beyond the two adds one longest
//! timeout and a pre-vote and vote out and back ([`LeaderFault::bound_after`]), up to
//! [`MOST_ELECTIONS`], past which the splits are a bug.

use super::cluster;
use crate::cluster::Cluster;
use crate::runner::Sim;
use node::{Command, Config, LogIndex, MutationSet, NodeId, Term};
use runspec::SERVICE_LEVELS;
use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;
use threadsim::clock::RatePpm;
use threadsim::time::Instant;

/// How long the measurement waits for a commit before it gives up.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(20);

/// The most elections one fault may cost. Each beyond the first is a split vote, a matter of
/// chance that the bounds allow for one election at a time ([`LeaderFault::bound_after`]); past
/// this many the splits are not chance. Over the 5,550 end probes of seeds 1-10,000 of the
/// README's command, 1,167 held no election, 4,197 one, 168 two, 17 three and 1 four: each
/// further split about one time in ten at most, so six or more about three times in a million
/// probes.
/// A node that campaigns in lockstep with the others (`ticker-lockstep`) splits nearly every
/// time, and a message delay breaks the tie only after several rounds.
pub const MOST_ELECTIONS: u64 = 5;

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
        if self.leader_must_notice() {
            config.commit_bound_leader_deaf()
        } else {
            config.commit_bound_leader_lost()
        }
    }

    /// The user's service level for it, stated apart from any node's timing
    /// ([`runspec::SERVICE_LEVELS`]): a window past it fails the run whatever
    /// [`LeaderFault::bound`] allows.
    pub fn service_level(self) -> Duration {
        if self.leader_must_notice() {
            SERVICE_LEVELS.writes_after_leader_deaf
        } else {
            SERVICE_LEVELS.writes_after_leader_lost
        }
    }

    /// Whether the leader still sends and must find out it lost its majority before another may
    /// lead (deaf, hearing only one follower, at the end of a chain); else it is lost to the
    /// others at once.
    fn leader_must_notice(self) -> bool {
        match self {
            LeaderFault::Deaf | LeaderFault::HearsOnlyOne | LeaderFault::ChainEnd => true,
            LeaderFault::Crash
            | LeaderFault::Pause
            | LeaderFault::PartitionedWithMinority
            | LeaderFault::Mute
            | LeaderFault::BridgeSide
            | LeaderFault::Flapping
            | LeaderFault::SlowClock
            | LeaderFault::DiskFails => false,
        }
    }

    /// Its bound once `elections` were held: each beyond the two [`LeaderFault::bound`] allows
    /// for (the first, and one split vote) adds [`Config::commit_bound_per_further_split`].
    pub fn bound_after(self, config: &Config, elections: u64) -> Duration {
        let further = u32::try_from(elections.saturating_sub(2)).unwrap_or(u32::MAX);
        self.bound(config)
            + config
                .commit_bound_per_further_split()
                .saturating_mul(further)
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

/// On a healthy cluster of five with `mutations`, injects `fault` on the leader and returns what
/// it cost and the nodes' configuration, which its bound derives from ([`Outage::check`]).
pub fn unavailable_after(
    sim: &Sim,
    fault: LeaderFault,
    mutations: &MutationSet,
) -> (Outage, Config) {
    unavailable_with(fault, cluster(sim, 5, false, mutations))
}

/// [`unavailable_after`] on five nodes configured as `node` (their timing, say).
pub fn unavailable_on(sim: &Sim, fault: LeaderFault, node: Config) -> (Outage, Config) {
    let mut config = crate::cluster::ClusterConfig::new(5);
    config.node = node;
    unavailable_with(fault, Cluster::new(sim, config))
}

fn unavailable_with(fault: LeaderFault, cluster: Cluster) -> (Outage, Config) {
    cluster.one(Command::from_text("a0"), 5, true);
    let leader = cluster.check_one_leader();
    let outage = fault.outage(&cluster, leader, "a", || flapping_phase(&cluster));
    cluster.shutdown();
    (outage, cluster.config().node.clone())
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
    /// did) and how many elections were held meanwhile; then takes it back (links healed, threads
    /// resumed, clocks at true time, a torn save ended). Flapping links draw each phase's length
    /// from `phase_length`.
    pub fn outage(
        self,
        cluster: &Cluster,
        leader: NodeId,
        tag: &str,
        mut phase_length: impl FnMut() -> Duration,
    ) -> Outage {
        assert!(
            self.fits(cluster.ids().len()),
            "{self} on {} nodes",
            cluster.ids().len()
        );
        let terms_before = highest_term(cluster);
        self.inject(cluster, leader);
        let mut phase = Phase {
            connected: false,
            ends: cluster.clock().now() + phase_length(),
        };
        let window = time_to_commit(cluster, tag, |cluster| {
            self.evolve(cluster, leader, &mut phase, &mut phase_length)
        })
        .unwrap_or(GIVE_UP_AFTER);
        let elections = highest_term(cluster).0 - terms_before.0;
        cluster.heal();
        cluster.resume_every_paused_node();
        if self == LeaderFault::SlowClock {
            cluster.set_clock_rate(leader, TRUE_TIME);
        }
        cluster.end_torn_save(leader);
        Outage { window, elections }
    }
}

/// The highest term of any running node.
fn highest_term(cluster: &Cluster) -> Term {
    (cluster.ids().into_iter())
        .filter_map(|id| cluster.state(id).map(|(term, _)| term))
        .max()
        .unwrap_or_default()
}

/// What one fault on the leader cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outage {
    /// How long until a command submitted after the fault committed on a majority.
    pub window: Duration,
    /// How many elections (new terms) were held meanwhile.
    pub elections: u64,
}

impl Outage {
    /// Whether it stayed within `fault`'s bound on nodes configured as `config`, as one line:
    /// at most [`MOST_ELECTIONS`] elections, a window within [`LeaderFault::bound_after`] them,
    /// and within the user's service level ([`LeaderFault::service_level`]), which does not
    /// move with `config`. `Err` starts with `liveness: `; `context` says where the fault
    /// struck.
    pub fn check(&self, fault: LeaderFault, config: &Config, context: &str) -> Result<(), String> {
        let Outage { window, elections } = *self;
        if elections > MOST_ELECTIONS {
            return Err(format!(
                "liveness: {elections} elections without a commit after {context} ({fault}), \
                 past its bound of {MOST_ELECTIONS} elections: more split votes than chance explains"
            ));
        }
        let bound = fault.bound_after(config, elections);
        if window > bound {
            return Err(format!(
                "liveness: no commit for {window:?} after {context} ({fault}), past its bound of \
                 {bound:?} for {elections} elections"
            ));
        }
        let level = fault.service_level();
        if window > level {
            return Err(format!(
                "liveness: no commit for {window:?} after {context} ({fault}), past the service \
                 level of {level:?} (runspec::SERVICE_LEVELS, a user's, apart from the nodes' \
                 timing: their own bound was {bound:?} for {elections} elections)"
            ));
        }
        Ok(())
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
    let (outage, config) = unavailable_after(sim, LeaderFault::Deaf, mutations);
    if let Err(failure) = outage.check(LeaderFault::Deaf, &config, "the leader went deaf") {
        panic!("{failure}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outage(window_ms: u64, elections: u64) -> Outage {
        Outage {
            window: Duration::from_millis(window_ms),
            elections,
        }
    }

    #[test]
    fn each_split_vote_beyond_the_one_allowed_adds_a_round_up_to_the_most_elections() {
        let config = Config::default();
        let fault = LeaderFault::Crash;
        let base = fault.bound(&config);
        assert_eq!(base, Duration::from_millis(1_600));
        assert_eq!(fault.bound_after(&config, 0), base);
        assert_eq!(fault.bound_after(&config, 2), base);
        assert_eq!(
            fault.bound_after(&config, 4),
            base + Duration::from_millis(1_600)
        );
        let check = |o: Outage| o.check(fault, &config, "a test");
        assert!(check(outage(1_600, 1)).is_ok());
        assert!(check(outage(1_601, 2))
            .unwrap_err()
            .contains("past its bound of 1.6s"));
        assert!(
            check(outage(1_765, 4)).is_ok(),
            "seed 3394: three splits, 1.765 s"
        );
        assert!(check(outage(3_201, 4)).is_err());
        let lockstep = check(outage(2_295, MOST_ELECTIONS + 2)).unwrap_err();
        assert!(lockstep.starts_with("liveness: 7 elections"), "{lockstep}");
        assert!(
            lockstep.contains("past its bound"),
            "the catalogue's signature"
        );
    }

    #[test]
    fn the_service_levels_hold_every_window_the_default_timing_allows_and_no_more() {
        // At the default timing, every window the node's own analysis allows (every split vote
        // the check lets pass) is within the user's service level: a correct run never fails it.
        let config = Config::default();
        for fault in LeaderFault::ALL {
            let worst = fault.bound_after(&config, MOST_ELECTIONS);
            assert!(
                worst <= fault.service_level(),
                "{fault}: {worst:?} allowed, over the service level of {:?}",
                fault.service_level()
            );
        }
        assert_eq!(
            LeaderFault::Crash.bound_after(&config, MOST_ELECTIONS),
            SERVICE_LEVELS.writes_after_leader_lost,
            "the levels sit at the default timing's worst allowed window"
        );
    }

    #[test]
    fn a_timing_set_wrong_passes_its_own_derived_bound_and_fails_the_service_level() {
        // Election timeouts ten times the default (a units slip): the bound derived from these
        // settings grows with them and passes a 4.5 s outage; the user's level does not move.
        let mut slow = Config::default();
        slow.election_timeout_min *= 10;
        slow.election_timeout_max *= 10;
        let window = outage(4_500, 1);
        let fault = LeaderFault::Crash;
        assert!(window.window <= fault.bound_after(&slow, 1));
        let failure = window.check(fault, &slow, "a test").unwrap_err();
        assert!(
            failure.contains("past the service level of 4s"),
            "{failure}"
        );
        assert!(window.check(fault, &Config::default(), "a test").is_err());
    }
}
