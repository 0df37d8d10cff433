//! [`Invariants`]: the safety properties of Raft (Figure 3), checked continuously as the cluster
//! runs, one property per file:
//!
//! - `election_safety`: at most one leader per term (§5.2), on every role change;
//! - `leader_append_only`: a leader never removes entries of its log (Figure 3), on every
//!   change of a leader's log;
//! - `log_matching`: equal index and term imply equal logs up to there (§5.3), on every entry
//!   any node appends;
//! - `leader_completeness`: a committed entry is in the log of every later leader (§5.4), on
//!   every election and every commit;
//! - `state_machine_safety`: no two nodes apply different commands at one index (§5.4.3), on
//!   every applied entry;
//! - `in_order_apply`: each node instance applies 1, 2, 3, ... (Figure 2), a snapshot standing
//!   for the entries it covers and never taking the state back (§7);
//! - `snapshot_agreement`: every snapshot taken or restored at an index holds the same state
//!   (§7), compared by digest;
//! - `configuration_overlap`: two configurations in use never have majorities that share no
//!   node (thesis §4), on every change of a log and every commit;
//! - `vote_durability`: a vote granted is never given to another candidate of its term, nor
//!   forgotten by a restart (Figure 2: persist before answering), on every vote and restart;
//! - across compacted logs, Log Matching and Leader Completeness hold for the entries a snapshot
//!   covers: a node compacts or installs only the committed prefix (`log_mirror`);
//! - and the node's own local invariants (commit index never decreases, ...), reported through
//!   its observer.
//!
//! A violation is recorded with the index or term and the nodes involved, written to the run's
//! trace at once, and turned into a failure by the harness at its next step.

mod configuration_overlap;
mod election_safety;
mod in_order_apply;
mod leader_append_only;
mod leader_completeness;
mod log_matching;
mod log_mirror;
mod snapshot_agreement;
mod state_machine_safety;
mod vote_durability;

use crate::commit_timeline::CommitTimeline;
use crate::events::Events;
use configuration_overlap::ConfigurationOverlap;
use election_safety::ElectionSafety;
use in_order_apply::InOrderApply;
use leader_append_only::LeaderAppendOnly;
use leader_completeness::LeaderCompleteness;
use log_matching::LogMatching;
use log_mirror::LogMirrors;
use node::kv::ReadMode;
use node::{Applied, Command, LogIndex, NodeEvent, NodeId, Observer, Role, Term};
use snapshot_agreement::{SnapshotAgreement, StateSeen};
use state_machine_safety::StateMachineSafety;
use std::collections::BTreeMap;
use threadsim::sync::Mutex;
use threadsim::time::Instant;
use vote_durability::VoteDurability;

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
    /// Of the local reads, those served under a lease (no round).
    pub lease_reads: u64,
    /// Snapshots services handed their nodes.
    pub snapshots_taken: u64,
    /// Snapshots followers installed from a leader.
    pub snapshots_installed: u64,
    /// Snapshots services restored (installed ones, and their own at restart).
    pub snapshots_restored: u64,
}

#[derive(Default)]
struct Checks {
    election_safety: ElectionSafety,
    leader_append_only: LeaderAppendOnly,
    log_matching: LogMatching,
    leader_completeness: LeaderCompleteness,
    state_machine_safety: StateMachineSafety,
    in_order_apply: InOrderApply,
    snapshot_agreement: SnapshotAgreement,
    vote_durability: VoteDurability,
    configuration_overlap: ConfigurationOverlap,
    logs: LogMirrors,
    /// Each node's current term, as its role changes reported it.
    terms: BTreeMap<NodeId, Term>,
    violations: Vec<String>,
    observed: Observed,
    /// When the cluster committed (with a clock, that is with events).
    commits: CommitTimeline,
}

impl Checks {
    /// Configuration overlap, over what the logs and commits show now.
    fn configurations_overlap(&self) -> Result<(), String> {
        let Some((commit, _)) = self.leader_completeness.highest() else {
            return self.configuration_overlap.check(LogIndex(0), |_, _| true);
        };
        self.configuration_overlap.check(commit, |node, index| {
            index == LogIndex(0)
                || self.logs.entry(node, index) == self.leader_completeness.committed_at(index)
        })
    }

    /// The committed entries a snapshot up to `index` of `term` on `node` covers: a snapshot
    /// holds committed entries only, so every one must be known committed, the last of `term`.
    fn committed_snapshot(
        &self,
        node: NodeId,
        index: LogIndex,
        term: Term,
    ) -> Result<Vec<log_mirror::Mirrored>, String> {
        let committed = self
            .leader_completeness
            .committed_upto(index)
            .ok_or_else(|| {
                format!(
                    "{node}'s log starts after a snapshot up to {index}, which is not committed"
                )
            })?;
        match committed.last() {
            Some(last) if last.term != term => Err(format!(
                "{node}'s snapshot up to {index} is of {term}, but the entry committed there is \
                 of {}",
                last.term
            )),
            _ => Ok(committed),
        }
    }
}

/// The continuous checker of one cluster: every node's [`Observer`] and every key-value
/// server's [`node::kv::KvObserver`].
#[derive(Default)]
pub struct Invariants {
    checks: Mutex<Checks>,
    events: Option<Events>,
}

impl Invariants {
    /// A checker that has seen nothing and records nothing.
    pub fn new() -> Invariants {
        Invariants::default()
    }

    /// A checker that records what it sees (roles, applied entries, violations) in `events`.
    pub fn with_events(events: Events) -> Invariants {
        Invariants {
            checks: Mutex::default(),
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

    /// Records the outcome of one check; the first violation also goes to the trace.
    fn verdict(&self, checks: &mut Checks, outcome: Result<(), String>) {
        if let Err(description) = outcome {
            if checks.violations.is_empty() {
                self.info(|| format!("invariant violated: {description}"));
            }
            checks.violations.push(description);
        }
    }

    /// `node` applied `applied`: checked against what every node applied at that index.
    pub fn on_applied(&self, node: NodeId, applied: &Applied) {
        self.debug(|| format!("{node} applied {} {}", applied.index, applied.command));
        let mut checks = self.checks.lock();
        let in_order = checks.in_order_apply.on_applied(node, applied.index);
        self.verdict(&mut checks, in_order);
        let safe = checks
            .state_machine_safety
            .on_applied(node, applied.index, &applied.command);
        self.verdict(&mut checks, safe);
        checks.observed.entries_applied += 1;
        checks.observed.highest_applied = checks.observed.highest_applied.max(applied.index);
    }

    /// `node`'s service was handed a snapshot up to `index`, in place of the entries it covers.
    pub fn on_snapshot_delivered(&self, node: NodeId, index: LogIndex) {
        self.debug(|| format!("{node} is handed a snapshot up to {index}"));
        let mut checks = self.checks.lock();
        let in_order = checks.in_order_apply.on_snapshot(node, index);
        self.verdict(&mut checks, in_order);
    }

    /// `node`'s service restored a snapshot up to `index`, and its state has `digest`.
    pub fn on_snapshot_restored(&self, node: NodeId, index: LogIndex, digest: u64) {
        let mut checks = self.checks.lock();
        checks.observed.snapshots_restored += 1;
        let agreed = checks
            .snapshot_agreement
            .on_state(node, index, digest, StateSeen::Restored);
        self.verdict(&mut checks, agreed);
    }

    /// `node`'s service handed its node a snapshot of its state at `index`, which has `digest`.
    pub fn on_snapshot_taken(&self, node: NodeId, index: LogIndex, digest: u64) {
        self.debug(|| format!("{node} takes a snapshot up to {index}"));
        let mut checks = self.checks.lock();
        checks.observed.snapshots_taken += 1;
        let agreed = checks
            .snapshot_agreement
            .on_state(node, index, digest, StateSeen::Taken);
        self.verdict(&mut checks, agreed);
    }

    /// A key-value server on `node` answered a get locally while leading in `term`; counts it
    /// as served by a deposed leader if a leader of a later term was already elected.
    pub fn on_local_read(&self, node: NodeId, term: Term, mode: ReadMode) {
        let mut checks = self.checks.lock();
        checks.observed.local_reads += 1;
        if mode == ReadMode::Lease {
            checks.observed.lease_reads += 1;
        }
        if checks
            .election_safety
            .newest_term()
            .is_some_and(|newest| newest > term)
        {
            checks.observed.reads_by_deposed_leaders += 1;
            self.debug(|| format!("{node} served a {mode} read as deposed leader of {term}"));
        }
    }

    /// The cluster starts in `bootstrap` (the configuration before the first entry): from now
    /// on, configurations are checked for overlap.
    pub fn set_bootstrap(&self, bootstrap: node::Membership) {
        self.checks
            .lock()
            .configuration_overlap
            .set_bootstrap(bootstrap);
    }

    /// A new instance of `node` starts: nothing applied, an empty log until it reports the log
    /// it restored, not a leader. Call it before the instance is created.
    pub fn on_restart(&self, node: NodeId) {
        let mut checks = self.checks.lock();
        checks.in_order_apply.on_restart(node);
        checks.logs.on_restart(node);
        checks.configuration_overlap.on_restart(node);
        checks.leader_completeness.on_not_leader(node);
        checks.leader_append_only.on_restart(node);
    }

    /// The first violation, if any.
    pub fn first_violation(&self) -> Option<String> {
        self.checks.lock().violations.first().cloned()
    }

    /// How many nodes have applied `index`, and the command applied there.
    pub fn applied_at(&self, index: LogIndex) -> (usize, Option<Command>) {
        let checks = self.checks.lock();
        (
            checks.in_order_apply.nodes_that_applied(index),
            checks.state_machine_safety.command_at(index).cloned(),
        )
    }

    /// The highest index `node` has applied (in its current instance).
    pub fn applied_upto(&self, node: NodeId) -> LogIndex {
        self.checks.lock().in_order_apply.applied_upto(node)
    }

    /// Every command applied by some node, by index.
    pub fn committed(&self) -> BTreeMap<LogIndex, Command> {
        self.checks.lock().state_machine_safety.commands()
    }

    /// Counters for vacuity guards.
    pub fn observed(&self) -> Observed {
        self.checks.lock().observed
    }

    /// When a leader with a majority first committed after `at` (a checker with events only).
    pub fn first_commit_after(&self, at: Instant) -> Option<Instant> {
        self.checks.lock().commits.first_after(at)
    }
}

impl node::kv::KvObserver for Invariants {
    fn on_applied(&self, node: NodeId, applied: &Applied) {
        Invariants::on_applied(self, node, applied);
    }
    fn on_local_read(&self, node: NodeId, term: Term, mode: ReadMode) {
        Invariants::on_local_read(self, node, term, mode);
    }
    fn on_snapshot(&self, node: NodeId, index: LogIndex, _data: &[u8]) {
        self.on_snapshot_delivered(node, index);
    }
    fn on_snapshot_restored(&self, node: NodeId, index: LogIndex, state_digest: u64) {
        Invariants::on_snapshot_restored(self, node, index, state_digest);
    }
    fn on_snapshot_taken(&self, node: NodeId, index: LogIndex, state_digest: u64) {
        Invariants::on_snapshot_taken(self, node, index, state_digest);
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
            NodeEvent::SnapshotInstalled { index, term, .. } => self.info(|| {
                format!("{node} installs a snapshot up to {index} (of {term}) from the leader")
            }),
            NodeEvent::VoteGranted { term, candidate } => {
                self.debug(|| format!("{node} votes for {candidate} in {term}"))
            }
            NodeEvent::LogCompacted { .. }
            | NodeEvent::LogChanged { .. }
            | NodeEvent::HardStateRestored { .. }
            | NodeEvent::InvariantViolated { .. } => {}
        }
        let mut checks = self.checks.lock();
        let checks = &mut *checks;
        match event {
            NodeEvent::RoleChanged { term, role } => {
                checks.terms.insert(node, *term);
                checks.leader_append_only.on_role(node, *term, *role);
                if *role == Role::Leader {
                    match checks.election_safety.on_leader(node, *term) {
                        Ok(first) => checks.observed.leaders_elected += u64::from(first),
                        Err(violation) => self.verdict(checks, Err(violation)),
                    }
                    let complete = checks
                        .leader_completeness
                        .on_leader(node, *term, &checks.logs);
                    self.verdict(checks, complete);
                } else {
                    checks.leader_completeness.on_not_leader(node);
                }
            }
            NodeEvent::LogChanged {
                truncated_from,
                appended,
                configurations,
            } => {
                let append_only = checks
                    .leader_append_only
                    .on_log_changed(node, *truncated_from);
                self.verdict(checks, append_only);
                for (index, entry) in checks.logs.on_changed(node, *truncated_from, appended) {
                    let matching = checks.log_matching.on_appended(node, index, entry);
                    self.verdict(checks, matching);
                }
                let with_terms: Vec<_> = (configurations.iter())
                    .map(|(index, membership)| {
                        let term = (appended.iter())
                            .find(|entry| entry.index == *index)
                            .map(|entry| entry.term)
                            .expect("a configuration among the appended entries");
                        (*index, term, membership.clone())
                    })
                    .collect();
                checks
                    .configuration_overlap
                    .on_log_changed(node, *truncated_from, &with_terms);
                let overlap = checks.configurations_overlap();
                self.verdict(checks, overlap);
            }
            NodeEvent::CommitAdvanced { commit_index } => {
                let term = checks.terms.get(&node).copied().unwrap_or_default();
                let complete =
                    checks
                        .leader_completeness
                        .on_commit(node, term, *commit_index, &checks.logs);
                self.verdict(checks, complete);
                checks.configuration_overlap.on_commit(node, *commit_index);
                let overlap = checks.configurations_overlap();
                self.verdict(checks, overlap);
                if let Some(events) = &self.events {
                    checks
                        .commits
                        .on_commit(events.clock().now(), *commit_index);
                }
            }
            NodeEvent::LogCompacted { index, term } => {
                checks.configuration_overlap.on_compacted(node, *index);
                let compacted = checks
                    .committed_snapshot(node, *index, *term)
                    .and_then(|committed| checks.logs.on_compacted(node, *index, &committed));
                self.verdict(checks, compacted);
            }
            NodeEvent::SnapshotInstalled {
                index,
                term,
                kept_suffix,
            } => {
                checks.observed.snapshots_installed += 1;
                if !*kept_suffix {
                    (checks.configuration_overlap).on_log_replaced_by_snapshot(node, *index);
                }
                let installed =
                    checks
                        .committed_snapshot(node, *index, *term)
                        .and_then(|committed| {
                            checks
                                .logs
                                .on_installed(node, *index, *kept_suffix, &committed)
                        });
                self.verdict(checks, installed);
            }
            NodeEvent::VoteGranted { term, candidate } => {
                let durable = checks
                    .vote_durability
                    .on_vote_granted(node, *term, *candidate);
                self.verdict(checks, durable);
            }
            NodeEvent::HardStateRestored { term, voted_for } => {
                let durable = checks.vote_durability.on_restored(node, *term, *voted_for);
                self.verdict(checks, durable);
            }
            NodeEvent::InvariantViolated { description } => self.verdict(
                checks,
                Err(format!("local invariant of {node}: {description}")),
            ),
        }
    }

    fn watches_logs(&self) -> bool {
        true
    }
}
