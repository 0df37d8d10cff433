//! The leader's own copy of its new entries, synced apart (Raft thesis §10.2.1): with a
//! persister that shares fsyncs, the leader writes each proposal, sends it to its followers at
//! once, and syncs its own copy meanwhile; it counts itself toward an entry's commit only once
//! that sync has returned. A follower still syncs before it answers, so an entry the leader
//! commits is durable on a majority: on the followers that answered, and on the leader itself
//! unless enough followers answered without it.
//!
//! Off by default (every write is durable before the lock is released, so the leader's copy is
//! durable before anything is sent); the shell switches it on with
//! [`RaftCore::sync_own_entries_apart`].

use super::{Effects, LeaderState, RaftCore, RoleState};
use crate::broken;
use crate::mutation::Mutation;
use crate::{LogIndex, Term};

impl RaftCore {
    /// From now on, a leader's proposals are written but not known durable until
    /// [`own_entries_synced`](Self::own_entries_synced) says so.
    pub fn sync_own_entries_apart(&mut self) {
        self.own_entries_synced_apart = true;
    }

    /// As leader of `term`: every entry of its log through `through` is durable on this node
    /// (a sync that began after they were written returned). Returns what follows: a commit
    /// that waited for the leader's own copy. Nothing changes for a node that no longer leads
    /// in `term` (within one term a leader never truncates its log, so `through` still names
    /// the entries that were written).
    pub fn own_entries_synced(&mut self, term: Term, through: LogIndex) -> Effects {
        let mut effects = Effects::default();
        if self.term() != term {
            return effects;
        }
        let last = self.state.log.last_index();
        let RoleState::Leader(leader) = &mut self.role else {
            return effects;
        };
        if leader.own_unsynced_from.is_some_and(|from| from <= through) {
            leader.own_unsynced_from = (through < last).then(|| through.next());
        }
        self.advance_commit(&mut effects);
        effects
    }

    /// Marks the leader's entry at `index`, just appended, as not yet durable (when entries are
    /// synced apart and the node has peers to send it to before its sync).
    pub(super) fn own_entry_unsynced(&mut self, index: LogIndex) {
        if !self.own_entries_synced_apart {
            return;
        }
        if let RoleState::Leader(leader) = &mut self.role {
            leader.own_unsynced_from = Some(leader.own_unsynced_from.unwrap_or(index).min(index));
        }
    }

    /// Whether the leader's own copy counts toward committing `index`: it is durable.
    pub(super) fn counts_itself_toward(&self, leader: &LeaderState, index: LogIndex) -> bool {
        if self.has(Mutation::CountSelfBeforeSync) {
            return broken::count_self_before_sync::counts_itself();
        }
        leader.own_unsynced_from.is_none_or(|from| index < from)
    }
}
