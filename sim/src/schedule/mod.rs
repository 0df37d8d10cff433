//! [`Schedule`]: a run's external events (commands offered, crashes and restarts, pauses,
//! partitions and one-way cuts, heals, loss switched on or off, clock rates and jumps), each at its simulated time, as
//! plain data with a line format a person can read and edit (`text.rs`):
//!
//! ```text
//! # interleave schedule, version 1
//! # seed: 59
//! # flags: --nodes 5 --rounds 200 --mutation commit-old-term
//! 0.000000s offer c1 to n0
//! 0.000000s partition [n0 n1] [n2 n3 n4]
//! 0.212000s crash n3
//! 55.312000s end
//! ```
//!
//! A workload run either decides its events as it goes (and records them), or follows a
//! schedule; both go through the same [`crate::timeline`], so replaying a run's whole recorded
//! schedule reproduces the run, and a shrinker can remove events and replay what is left.

mod text;

pub use text::{format_time, rate_text, ParseError};

use node::NodeId;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use threadsim::clock::RatePpm;

/// One external event.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// The command `c{value}` is offered to `to` (accepted only if it leads).
    Offer {
        /// The node it is offered to.
        to: NodeId,
        /// Its value.
        value: u64,
    },
    /// The node's instance crashes (only its disk survives).
    Crash(NodeId),
    /// A new instance of the node starts from its disk (crashing the running one first).
    Restart(NodeId),
    /// The node's machine crashes in the middle of its next save: only some sectors of the
    /// save reach the disk, and the node stops.
    TearSave(NodeId),
    /// The node's machine loses power while its next sync is under way: the sync never
    /// returns, the node stops, and what it had not synced is gone once it is crashed.
    CutPowerInSync(NodeId),
    /// The node's next sync fails with EIO and drops what it should have written (the page
    /// cache calls it clean); the node stops, and a power loss then finds a hole (the server's
    /// log only, `--storage log`).
    FailSync(NodeId),
    /// The node's disk fills up: at most a sector more fits, and the write past it writes
    /// what fits and fails with ENOSPC; the node stops, and the disk has room again when it
    /// restarts (the server's log only, `--storage log`).
    FillDisk(NodeId),
    /// The node's next save writes one copy of its state over the other's place (that place
    /// keeps a stale copy), and the machine goes down after it.
    MisdirectSave(NodeId),
    /// A bit flips in one copy of the node's state on its disk, while the other copy holds the
    /// newest state.
    CorruptCopy(NodeId),
    /// The node freezes, its state intact.
    Pause(NodeId),
    /// A paused node goes on.
    Resume(NodeId),
    /// The nodes (and clients) split into groups that cannot reach each other.
    Partition(Vec<Vec<NodeId>>),
    /// The link from the first to the second is cut, one way.
    Cut(NodeId, NodeId),
    /// Every link and interface comes back.
    Heal,
    /// Message loss (10% of requests and of replies) on or off.
    Unreliable(bool),
    /// The node's clock runs at this rate of true time from now on.
    ClockRate(NodeId, RatePpm),
    /// The node's clock jumps forward by this much.
    ClockJump(NodeId, Duration),
    /// The leader is asked to add the node to the configuration as a learner.
    AddLearner(NodeId),
    /// The leader is asked to make the learner a voter.
    Promote(NodeId),
    /// The leader is asked to make the voter a learner.
    Demote(NodeId),
    /// The leader is asked to take the node out of the configuration.
    RemoveMember(NodeId),
    /// The leader is asked to hand its leadership to the voter.
    TransferLeadership(NodeId),
    /// The timeline ends here (the workload then heals and checks recovery).
    End,
}

impl Event {
    /// A partition into `groups`, each group sorted and the groups ordered by their first node, so
    /// that one split always reads the same way (`[n0 n3] [n1 n2 n4]`).
    pub fn partition(mut groups: Vec<Vec<NodeId>>) -> Event {
        for group in &mut groups {
            group.sort_unstable();
        }
        groups.sort_unstable();
        Event::Partition(groups)
    }
}

/// An event at its simulated time since the run started.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timed {
    /// When.
    pub at: Duration,
    /// What.
    pub event: Event,
}

/// A run's external events, with notes (`# key: value` lines) that say how to run them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// Notes, in order: the seed, the command-line flags of the workload, ...
    pub notes: Vec<(String, String)>,
    /// The events, in time order.
    pub events: Vec<Timed>,
}

/// The note that holds the seed a schedule runs with.
pub const SEED_NOTE: &str = runspec::SEED_NOTE;

impl Schedule {
    /// The seed the notes give, if any.
    pub fn seed(&self) -> Option<u64> {
        self.note(SEED_NOTE)?.parse().ok()
    }

    /// Sets the note `key` (in place if present, else last).
    pub fn set_note(&mut self, key: &str, value: String) {
        match self.notes.iter_mut().find(|(k, _)| k == key) {
            Some((_, old)) => *old = value,
            None => self.notes.push((key.to_string(), value)),
        }
    }

    /// The note `key`, if present.
    pub fn note(&self, key: &str) -> Option<&str> {
        self.notes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value.as_str())
    }

    /// The events other than the end marker (what a shrinker may remove).
    pub fn removable(&self) -> usize {
        self.events
            .iter()
            .filter(|timed| timed.event != Event::End)
            .count()
    }

    /// When the timeline ends (the end marker's time, or the last event's).
    pub fn end(&self) -> Duration {
        self.events.last().map_or(Duration::ZERO, |timed| timed.at)
    }
}

impl Schedule {
    /// Ends the schedule of a run that a failure stopped at `stopped` (it recorded no end): the
    /// end goes at the next whole millisecond, so a run that follows the schedule wakes for nothing the
    /// stopped run did not, repeats it up to the failure, and ends soon after.
    pub fn end_after_stop(&mut self, stopped: Duration) {
        if self
            .events
            .last()
            .is_some_and(|last| last.event == Event::End)
        {
            return;
        }
        // The next whole millisecond after it, so the file reads in milliseconds.
        let last = stopped.max(self.end());
        let at = Duration::from_millis(last.as_millis() as u64 + 1);
        self.events.push(Timed {
            at,
            event: Event::End,
        });
    }
}

impl Schedule {
    /// Whether every event names a node of a cluster of `nodes` (`n0` ...), and every partition
    /// only those and the workload's `clients`: a clear error instead of a run that ignores a
    /// stray name.
    pub fn check_nodes(&self, nodes: usize, clients: &[NodeId]) -> Result<(), String> {
        let server = |node: NodeId| (node.0 as usize) < nodes;
        let last = nodes.saturating_sub(1);
        for timed in &self.events {
            let named: Vec<NodeId> = match &timed.event {
                Event::Offer { to, .. } => vec![*to],
                Event::Crash(node)
                | Event::Restart(node)
                | Event::TearSave(node)
                | Event::CutPowerInSync(node)
                | Event::FailSync(node)
                | Event::FillDisk(node)
                | Event::MisdirectSave(node)
                | Event::CorruptCopy(node)
                | Event::Pause(node)
                | Event::Resume(node)
                | Event::ClockRate(node, _)
                | Event::ClockJump(node, _)
                | Event::AddLearner(node)
                | Event::Promote(node)
                | Event::Demote(node)
                | Event::RemoveMember(node)
                | Event::TransferLeadership(node) => vec![*node],
                Event::Cut(from, to) => vec![*from, *to],
                Event::Partition(groups) => {
                    let stray = groups
                        .iter()
                        .flatten()
                        .find(|&&node| !server(node) && !clients.contains(&node));
                    if let Some(node) = stray {
                        return Err(format!(
                            "{} {}: {node} is neither a node (n0 to n{last}) nor a client of the workload",
                            format_time(timed.at),
                            timed.event
                        ));
                    }
                    Vec::new()
                }
                Event::Heal | Event::Unreliable(_) | Event::End => Vec::new(),
            };
            if let Some(node) = named.into_iter().find(|&node| !server(node)) {
                return Err(format!(
                    "{} {}: the cluster has {nodes} nodes, n0 to n{last}, not {node}",
                    format_time(timed.at),
                    timed.event
                ));
            }
        }
        Ok(())
    }
}

/// Collects a run's events as it decides them. Behind a `std` mutex held only to push, like
/// [`threadsim::Trace`], so a failed controlled execution's events can still be read.
#[derive(Clone, Default)]
pub struct ScheduleRecorder {
    events: Arc<Mutex<Vec<Timed>>>,
}

impl ScheduleRecorder {
    fn lock(&self) -> MutexGuard<'_, Vec<Timed>> {
        self.events
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records `event` at `at`.
    pub fn record(&self, at: Duration, event: Event) {
        self.lock().push(Timed { at, event });
    }

    /// What was recorded, leaving the recorder empty.
    pub fn take(&self) -> Vec<Timed> {
        std::mem::take(&mut *self.lock())
    }
}
