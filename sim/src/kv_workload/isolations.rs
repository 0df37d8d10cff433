//! [`Isolations`]: the faults the key-value workload generates, a timeline of quiet spells and
//! isolations of the leader with some clients on its side.

use super::KvWorkloadConfig;
use crate::cluster::Cluster;
use crate::schedule::Event;
use crate::skew::{ClockSkew, SkewDraws};
use crate::timeline::{Snapshot, Timeline};
use node::NodeId;
use std::time::Duration;

/// The key-value workload's faults, until `end`: a quiet spell of 1-3 s, then one of: the leader
/// (any node while none leads) cut off with one follower and some clients on its side for
/// 1.5-3 s (half the time); the same after the leader was paused, and resumed 0.6-1.5 s later
/// still cut off (a third of the time); two followers cut off for 1-2 s. Then a heal, and now
/// and then a crash and, 0.2-1 s later, a restart. With clock skew on, the clocks take new rates
/// as the leader is cut off or paused.
pub(super) struct Isolations {
    clients: Vec<NodeId>,
    /// Whether a change of the configuration may come with each quiet spell's fault.
    membership: bool,
    clients_with_old_leader: usize,
    crashes: bool,
    /// Whether a restart after a crash is refused once (a latent read error) and so tried twice.
    read_errors: bool,
    skew: ClockSkew,
    /// The quiet spell between faults, shortest and longest, in milliseconds.
    quiet: (u64, u64),
    end: Duration,
    phase: Phase,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Quiet,
    Isolated,
    /// The leader has just been paused (a long garbage-collection pause, a SIGSTOP); the
    /// answers to what it sent before still arrive, to be handled when it resumes.
    Pausing(NodeId),
    /// The paused leader is cut off with one follower and some clients.
    Paused(NodeId),
    /// Two followers are cut off from everyone else.
    FollowersCut,
    Crashed(NodeId),
    Over,
}

impl Isolations {
    /// The timeline of a run of `config` whose clients are `clients`.
    pub(super) fn new(config: &KvWorkloadConfig, clients: Vec<NodeId>) -> Isolations {
        let faults = &config.cluster.faults;
        let (shortest, longest) = config.quiet_between_faults;
        Isolations {
            clients,
            clients_with_old_leader: config.clients_with_old_leader,
            crashes: faults.crashes,
            read_errors: faults.read_errors,
            skew: faults.skew,
            quiet: (shortest.as_millis() as u64, longest.as_millis() as u64),
            end: config.duration,
            phase: Phase::Quiet,
            membership: faults.membership,
        }
    }

    /// After a heal: now and then a crash.
    fn maybe_crash(&mut self, cluster: &Cluster, events: &mut Vec<Event>) {
        self.phase = Phase::Quiet;
        if self.crashes && cluster.random(3) == 0 {
            let ids = cluster.ids();
            let victim = ids[cluster.random(ids.len())];
            events.push(Event::Crash(victim));
            self.phase = Phase::Crashed(victim);
        }
    }

    /// Two followers of `leader` cut off from everyone else (clients stay with the majority):
    /// harmless with pre-vote; without it they come back with higher terms and depose the
    /// leader without an election (`no-pre-vote`).
    fn cut_off_followers(&self, cluster: &Cluster, leader: NodeId) -> Event {
        let mut followers = cluster.others(leader);
        let first = followers.remove(cluster.random(followers.len()));
        let second = followers.remove(cluster.random(followers.len()));
        let mut rest: Vec<NodeId> = cluster
            .ids()
            .into_iter()
            .filter(|id| *id != first && *id != second)
            .collect();
        rest.extend_from_slice(&self.clients);
        Event::partition(vec![vec![first, second], rest])
    }

    /// `leader` and one companion, with some clients, cut off from the rest; the clocks take
    /// new rates as it happens.
    fn isolate(&self, cluster: &Cluster, leader: NodeId) -> Vec<Event> {
        let others = cluster.others(leader);
        let companion = others[cluster.random(others.len())];
        let mut shuffled = self.clients.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, cluster.random(i + 1));
        }
        let (with_leader, with_majority) = shuffled.split_at(self.clients_with_old_leader);
        let mut minority = vec![leader, companion];
        minority.extend_from_slice(with_leader);
        let mut majority: Vec<NodeId> = cluster
            .ids()
            .into_iter()
            .filter(|id| *id != leader && *id != companion)
            .collect();
        let mut events = self.skew.at_isolation(cluster, leader, &majority);
        majority.extend_from_slice(with_majority);
        events.push(Event::partition(vec![minority, majority]));
        events
    }
}

impl Timeline for Isolations {
    fn wait(&mut self, cluster: &Cluster, elapsed: Duration) -> Option<Duration> {
        let (low, high) = match self.phase {
            Phase::Over => return None,
            Phase::Quiet => self.quiet,
            Phase::Isolated => (1500, 3000),
            Phase::Pausing(_) => (20, 50),
            Phase::Paused(_) => (600, 1500),
            Phase::FollowersCut => (1000, 2000),
            Phase::Crashed(_) => (200, 1000),
        };
        let ms = Duration::from_millis;
        let pause = cluster.random_duration(ms(low), ms(high));
        Some(pause.min(self.end.saturating_sub(elapsed)))
    }

    fn decide(&mut self, cluster: &Cluster, snapshot: &Snapshot, elapsed: Duration) -> Vec<Event> {
        let mut events = Vec::new();
        // Drawn only with membership changes on, so every other run draws as before.
        if self.membership && self.phase != Phase::Over && cluster.random(2) == 0 {
            events.extend(crate::membership_changes::choose(cluster, snapshot));
        }
        match self.phase {
            Phase::Quiet if elapsed >= self.end => self.phase = Phase::Over,
            Phase::Quiet => {
                // Every wake-up acts, so a run that follows these events wakes when this one did.
                let ids = cluster.ids();
                let leader = snapshot
                    .leader
                    .unwrap_or_else(|| ids[cluster.random(ids.len())]);
                match cluster.random(6) {
                    0..=2 => {
                        events.extend(self.isolate(cluster, leader));
                        self.phase = Phase::Isolated;
                    }
                    3 | 4 => {
                        events.push(Event::Pause(leader));
                        self.phase = Phase::Pausing(leader);
                    }
                    _ => {
                        events.push(self.cut_off_followers(cluster, leader));
                        self.phase = Phase::FollowersCut;
                    }
                }
            }
            Phase::Pausing(leader) => {
                events.extend(self.isolate(cluster, leader));
                self.phase = Phase::Paused(leader);
            }
            Phase::Paused(leader) => {
                // It resumes still cut off: what it hears first is what arrived while paused.
                events.push(Event::Resume(leader));
                self.phase = Phase::Isolated;
            }
            Phase::Isolated | Phase::FollowersCut => {
                events.push(Event::Heal);
                self.phase = Phase::Quiet;
                if elapsed < self.end {
                    self.maybe_crash(cluster, &mut events);
                }
            }
            Phase::Crashed(victim) => {
                events.push(Event::Restart(victim));
                if self.read_errors {
                    // The first is refused: the disk failed its read. The second reads it.
                    events.push(Event::Restart(victim));
                }
                self.phase = Phase::Quiet;
            }
            Phase::Over => {}
        }
        // The end comes with the last events, not in a group of its own at the same instant.
        if self.phase == Phase::Quiet && elapsed >= self.end {
            self.phase = Phase::Over;
        }
        if self.phase == Phase::Over {
            events.push(Event::End);
        }
        events
    }
}
