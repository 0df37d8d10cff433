//! The deliberately broken variants' code paths, one file per bug, named after it.
//!
//! Each models a real bug (see [`crate::Mutation`] for the list and the references). A protocol
//! or shell site that a variant changes is one line: `if the variant is on { call its file }`, or
//! a condition in the rule itself where the bug is one (`up_to_date || broken`). A production
//! build cannot switch any of them on: [`crate::MutationSet::has`] is false for every variant
//! without the `mutations` cargo feature ([`crate::MUTATIONS_AVAILABLE`]), which no shipped
//! binary enables, and the entry points refuse a variant in such a build.

pub mod accept_torn_writes;
pub mod apply_with_lock_held;
pub mod commit_needs_every_node;
pub mod count_self_before_sync;
pub mod deliver_snapshot_with_lock_held;
pub mod entries_after_snapshot;
pub mod expired_session_reopened;
pub mod forget_vote;
pub mod leader_drops_uncommitted_tail;
pub mod lost_applier_wakeup;
pub mod read_error_as_empty;
pub mod replicator_busy_waits;
pub mod reply_before_persist;
pub mod skip_fsync;
pub mod sleep_in_persist;
pub mod snapshot_persisted_apart;
pub mod snapshot_without_sessions;
pub mod ticker_check_then_act;
pub mod ticker_lockstep;
pub mod truncate_on_matching_heartbeat;
pub mod txn_reads_at_proposal;

/// Removes `log`'s entries from `from` on, as a broken rule does, with the effects that write
/// and report it (shared by the variants that truncate where the protocol must not).
pub(crate) fn remove_entries_from(
    log: &mut crate::log::RaftLog,
    from: crate::LogIndex,
) -> crate::core::Effects {
    use crate::core::{Effect, Effects};
    let mut effects = Effects::default();
    log.truncate_from(from);
    effects.push_from_outside(Effect::Persist);
    effects.push_from_outside(Effect::LogChanged {
        truncated_from: Some(from),
        appended_from: None,
    });
    effects
}
