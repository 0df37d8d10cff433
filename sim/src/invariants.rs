//! [`Invariants`]: the safety properties checked continuously, as the cluster runs.
//!
//! - **State Machine Safety** (Raft §5.4.3): no two nodes apply different commands at one index,
//!   checked on every applied entry of every node.
//! - **In-order apply**: each node instance applies indices 1, 2, 3, ... with no gap or repeat
//!   (a restarted node starts again from 1).
//! - **Election Safety** (Raft §5.2): at most one leader per term, checked on every role change.
//! - The node's own local invariants (commit index never decreases, ...), reported through its
//!   observer.
//!
//! A violation is recorded with the index or term and the nodes involved, printed at once, and
//! turned into a test failure by the harness at its next call.

use crate::events::Events;
use node::{Applied, Command, LogIndex, NodeEvent, NodeId, Observer, Role, Term};
use std::collections::BTreeMap;
use threadsim::sync::Mutex;

/// What the invariants have seen, for vacuity guards and progress output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// Leaders elected (one per term that had one).
    pub leaders_elected: u64,
    /// Highest index applied by any node.
    pub highest_applied: LogIndex,
    /// Entries applied, summed over all nodes.
    pub entries_applied: u64,
    /// Gets a key-value server answered from its local state (ReadIndex or unsafe reads).
    pub local_reads: u64,
    /// Of those, reads served by a node whose term was already superseded by a newer leader:
    /// the opportunities for a stale read.
    pub reads_by_deposed_leaders: u64,
}

#[derive(Default)]
struct State {
    committed: BTreeMap<LogIndex, (Command, NodeId)>,
    applied_upto: BTreeMap<NodeId, LogIndex>,
    leaders: BTreeMap<Term, NodeId>,
    violations: Vec<String>,
    observed: Observed,
}

/// The continuous checker of one cluster. It is the nodes' [`Observer`], and reports what it
/// sees as `tracing` events (target `interleave`) stamped with simulated time.
#[derive(Default)]
pub struct Invariants {
    state: Mutex<State>,
    events: Option<Events>,
}

impl Invariants {
    /// A checker that has seen nothing.
    pub fn new() -> Invariants {
        Invariants::default()
    }

    /// A checker that records what it sees (roles, applied entries, violations) in `events`.
    pub fn with_events(events: Events) -> Invariants {
        Invariants {
            state: Mutex::default(),
            events: Some(events),
        }
    }

    fn info(&self, text: impl FnOnce() -> String) {
        if let Some(events) = &self.events {
            events.info(text());
        }
    }

    fn debug(&self, text: impl FnOnce() -> String) {
        if let Some(events) = &self.events {
            events.debug(text());
        }
    }

    fn violation(&self, state: &mut State, description: String) {
        if state.violations.is_empty() {
            self.info(|| format!("invariant violated: {description}"));
        }
        state.violations.push(description);
    }

    /// `node` applied `applied`: checks it against what every other node applied at that index.
    pub fn on_applied(&self, node: NodeId, applied: &Applied) {
        self.debug(|| format!("{node} applied {} {}", applied.index, applied.command));
        let mut state = self.state.lock();
        let expected = state
            .applied_upto
            .get(&node)
            .copied()
            .unwrap_or_default()
            .next();
        if applied.index != expected {
            self.violation(
                &mut state,
                format!(
                    "{node} applied index {} but the next index to apply was {expected}",
                    applied.index
                ),
            );
        }
        state.applied_upto.insert(node, applied.index);
        state.observed.entries_applied += 1;
        state.observed.highest_applied = state.observed.highest_applied.max(applied.index);
        match state.committed.get(&applied.index) {
            Some((command, first)) if *command != applied.command => {
                let description = format!(
                    "State Machine Safety: at index {} {node} applied {} but {first} applied {}",
                    applied.index, applied.command, command
                );
                self.violation(&mut state, description);
            }
            Some(_) => {}
            None => {
                state
                    .committed
                    .insert(applied.index, (applied.command.clone(), node));
            }
        }
    }

    /// A key-value server on `node` answered a get locally while leading in `term`; counts it
    /// as served by a deposed leader if a leader of a later term was already elected.
    pub fn on_local_read(&self, node: NodeId, term: Term) {
        let mut state = self.state.lock();
        state.observed.local_reads += 1;
        let newest = state.leaders.keys().next_back().copied();
        if newest.is_some_and(|newest| newest > term) {
            state.observed.reads_by_deposed_leaders += 1;
            self.debug(|| format!("{node} served a read as deposed leader of {term}"));
        }
    }

    /// A new instance of `node` starts: it applies again from index 1.
    pub fn on_restart(&self, node: NodeId) {
        self.state.lock().applied_upto.insert(node, LogIndex(0));
    }

    /// The first violation, if any.
    pub fn first_violation(&self) -> Option<String> {
        self.state.lock().violations.first().cloned()
    }

    /// How many nodes have applied `index`, and the command applied there.
    pub fn applied_at(&self, index: LogIndex) -> (usize, Option<Command>) {
        let state = self.state.lock();
        let count = state
            .applied_upto
            .values()
            .filter(|&&upto| upto >= index)
            .count();
        (
            count,
            state
                .committed
                .get(&index)
                .map(|(command, _)| command.clone()),
        )
    }

    /// The highest index `node` has applied (in its current instance).
    pub fn applied_upto(&self, node: NodeId) -> LogIndex {
        self.state
            .lock()
            .applied_upto
            .get(&node)
            .copied()
            .unwrap_or_default()
    }

    /// Every command applied by some node, by index.
    pub fn committed(&self) -> BTreeMap<LogIndex, Command> {
        self.state
            .lock()
            .committed
            .iter()
            .map(|(&i, (c, _))| (i, c.clone()))
            .collect()
    }

    /// Counters for vacuity guards.
    pub fn observed(&self) -> Observed {
        self.state.lock().observed
    }
}

impl node::kv::KvObserver for Invariants {
    fn on_applied(&self, node: NodeId, applied: &Applied) {
        Invariants::on_applied(self, node, applied);
    }
    fn on_local_read(&self, node: NodeId, term: Term) {
        Invariants::on_local_read(self, node, term);
    }
}

impl Observer for Invariants {
    fn on_event(&self, node: NodeId, event: &NodeEvent) {
        match event {
            NodeEvent::RoleChanged { term, role } => {
                self.info(|| format!("{node} is {role:?} in {term}"))
            }
            NodeEvent::CommitAdvanced { commit_index } => {
                self.debug(|| format!("{node} commits up to {commit_index}"))
            }
            NodeEvent::InvariantViolated { .. } => {}
        }
        let mut state = self.state.lock();
        match event {
            NodeEvent::RoleChanged {
                term,
                role: Role::Leader,
            } => match state.leaders.get(term) {
                Some(&other) if other != node => {
                    let description =
                        format!("Election Safety: {other} and {node} are both leaders of {term}");
                    self.violation(&mut state, description);
                }
                Some(_) => {}
                None => {
                    state.leaders.insert(*term, node);
                    state.observed.leaders_elected += 1;
                }
            },
            NodeEvent::InvariantViolated { description } => self.violation(
                &mut state,
                format!("local invariant of {node}: {description}"),
            ),
            NodeEvent::RoleChanged { .. } | NodeEvent::CommitAdvanced { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(index: u64, text: &str) -> Applied {
        Applied {
            index: LogIndex(index),
            term: Term(1),
            command: Command::from_text(text),
        }
    }

    #[test]
    fn different_commands_at_one_index_violate_state_machine_safety() {
        let invariants = Invariants::new();
        invariants.on_applied(NodeId(0), &applied(1, "a"));
        invariants.on_applied(NodeId(1), &applied(1, "a"));
        assert_eq!(invariants.first_violation(), None);
        invariants.on_applied(NodeId(2), &applied(1, "b"));
        let violation = invariants.first_violation().expect("violation");
        assert!(
            violation.contains("State Machine Safety: at index #1 n2"),
            "{violation}"
        );
    }

    #[test]
    fn a_gap_in_applied_indices_is_a_violation() {
        let invariants = Invariants::new();
        invariants.on_applied(NodeId(0), &applied(1, "a"));
        invariants.on_applied(NodeId(0), &applied(3, "c"));
        assert!(invariants
            .first_violation()
            .expect("violation")
            .contains("next index to apply was #2"));
    }

    #[test]
    fn two_leaders_in_one_term_violate_election_safety() {
        let invariants = Invariants::new();
        let leader = NodeEvent::RoleChanged {
            term: Term(4),
            role: Role::Leader,
        };
        invariants.on_event(NodeId(0), &leader);
        invariants.on_event(NodeId(0), &leader);
        assert_eq!(invariants.first_violation(), None);
        invariants.on_event(NodeId(1), &leader);
        assert!(invariants
            .first_violation()
            .expect("violation")
            .contains("n0 and n1 are both leaders of t4"));
    }
}
