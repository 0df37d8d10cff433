//! Carrying out the core's effects, in order, under the node's lock.

use super::state::{Locked, Shell};
use crate::broken;
use crate::core::{Effect, Effects};
use crate::messages::Response;
use crate::mutation::Mutation;
use crate::observer::{LoggedEntry, NodeEvent, Role};
use crate::LogIndex;

impl Shell {
    /// Tells an observer that watches logs what changed: the truncation point, and each new
    /// entry with a digest of its command.
    pub fn report_log_change(
        &self,
        locked: &Locked,
        truncated_from: Option<LogIndex>,
        appended_from: Option<LogIndex>,
    ) {
        if !self.watches_logs {
            return;
        }
        let log = &locked.core.persistent().log;
        let mut configurations = Vec::new();
        let appended = appended_from.map_or_else(Vec::new, |from| {
            (from.0..=log.last_index().0)
                .map(|index| {
                    let index = LogIndex(index);
                    let entry = log.entry(index).expect("an appended entry");
                    if let Some(Ok(membership)) = crate::Membership::decode(&entry.command) {
                        configurations.push((index, membership));
                    }
                    let mut digest = threadsim::Digest::default();
                    digest.write(&entry.command.0);
                    LoggedEntry {
                        index,
                        term: entry.term,
                        digest: digest.value(),
                    }
                })
                .collect()
        });
        self.observer.on_event(
            self.id,
            &NodeEvent::LogChanged {
                truncated_from,
                appended,
                configurations,
            },
        );
    }

    /// Makes sure what the commit index (or a snapshot) made ready reaches the service: by the
    /// handler on its own thread when it can, else by the applier.
    fn apply_has_work(&self, locked: &mut Locked) {
        if self.config.mutations.has(Mutation::LostApplierWakeup) {
            // Broken: no wake-up after the commit (see `broken::lost_applier_wakeup`).
        } else if locked.delivers_itself {
            locked.apply_due = true;
        } else {
            self.applier_wake.notify();
        }
    }

    /// Carries out `effects` in order and returns the reply if there is one. A write that
    /// crashes stops the node: nothing after it happens, not even the reply.
    pub fn execute(&self, locked: &mut Locked, effects: Effects) -> Option<Response> {
        assert!(!locked.stopped, "{}: effects executed after stop", self.id);
        let defer_persist = self.config.mutations.has(Mutation::ReplyBeforePersist);
        if defer_persist && !broken::reply_before_persist::write_owed(self, locked) {
            return None;
        }
        let mut reply = None;
        for effect in effects.into_vec() {
            match effect {
                Effect::Persist if defer_persist => locked.persist_owed = true,
                Effect::Persist => {
                    if self.persist(locked).is_err() {
                        self.stop(locked);
                        return None;
                    }
                }
                Effect::WakeTicker => self.ticker_wake.notify(),
                Effect::LogChanged {
                    truncated_from,
                    appended_from,
                } => self.report_log_change(locked, truncated_from, appended_from),
                Effect::RoleChanged(role) => {
                    let term = locked.core.term();
                    self.observer
                        .on_event(self.id, &NodeEvent::RoleChanged { term, role });
                    self.ticker_wake.notify();
                    if role == Role::Leader {
                        for signal in self.heartbeat_wake.values() {
                            signal.notify();
                        }
                    }
                }
                Effect::WakePeers => {
                    for signal in self.replicator_wake.values() {
                        signal.notify();
                    }
                }
                Effect::WakeHeartbeaters => {
                    for signal in self.heartbeat_wake.values() {
                        signal.notify();
                    }
                }
                Effect::CommitAdvanced(commit_index) => {
                    self.observer
                        .on_event(self.id, &NodeEvent::CommitAdvanced { commit_index });
                    self.apply_has_work(locked);
                }
                Effect::ReadsDone(outcomes) => {
                    for (ticket, outcome) in outcomes {
                        if let Some(waiter) = locked.reads.get_mut(&ticket) {
                            waiter.outcome = Some(outcome);
                            waiter.signal.notify();
                        }
                    }
                }
                Effect::LogCompacted { index, term } => self
                    .observer
                    .on_event(self.id, &NodeEvent::LogCompacted { index, term }),
                Effect::SnapshotInstalled {
                    index,
                    term,
                    kept_suffix,
                } => {
                    self.observer.on_event(
                        self.id,
                        &NodeEvent::SnapshotInstalled {
                            index,
                            term,
                            kept_suffix,
                        },
                    );
                    locked.snapshot_due = true;
                    self.apply_has_work(locked);
                }
                Effect::InvariantViolated(description) => self.report(description),
                Effect::Reply(response) => reply = Some(response),
            }
        }
        self.check_invariants(locked);
        reply
    }
}
