//! The leader's own entries synced apart (thesis §10.2.1): sent before the leader's sync, counted
//! toward a commit only after it.

use super::*;
use crate::core::tests::replication::replicate_everything_to;

/// Node 0 of three, elected, syncing its own entries apart, with one proposal written and not
/// yet synced.
fn leader_with_an_unsynced_entry(mutations: MutationSet) -> RaftCore {
    let mut leader = core_with(0, 3, PersistentState::default(), mutations);
    leader.sync_own_entries_apart();
    elect(&mut leader);
    leader.propose(Command::from_text("a")).expect("leader");
    leader
}

#[test]
fn an_unsynced_entry_commits_on_the_leaders_sync_or_on_every_follower() {
    // One follower's acknowledgement and the leader's unsynced copy are not a majority ...
    let mut leader = leader_with_an_unsynced_entry(MutationSet::default());
    let term = leader.term();
    replicate_everything_to(&mut leader, n(1), t(1_001));
    assert_eq!(leader.commit_index(), LogIndex(0));
    // ... until the leader's sync returns.
    let effects = leader.own_entries_synced(term, LogIndex(1));
    assert!(effects
        .as_slice()
        .contains(&Effect::CommitAdvanced(LogIndex(1))));

    // Or without it: both followers are a majority.
    let mut leader = leader_with_an_unsynced_entry(MutationSet::default());
    replicate_everything_to(&mut leader, n(1), t(1_001));
    let effects = replicate_everything_to(&mut leader, n(2), t(1_001));
    assert!(effects
        .as_slice()
        .contains(&Effect::CommitAdvanced(LogIndex(1))));
}

#[test]
fn a_sync_reported_for_an_earlier_term_or_index_counts_nothing_newer() {
    let mut leader = leader_with_an_unsynced_entry(MutationSet::default());
    let term = leader.term();
    leader.propose(Command::from_text("b")).expect("leader");
    replicate_everything_to(&mut leader, n(1), t(1_001));
    // A sync of the first entry alone commits the first entry alone.
    leader.own_entries_synced(term, LogIndex(1));
    assert_eq!(leader.commit_index(), LogIndex(1));
    // A report from another term (a sync that began before the leader was re-elected) is not
    // about this log.
    leader.own_entries_synced(Term(term.0 - 1), LogIndex(2));
    assert_eq!(leader.commit_index(), LogIndex(1));
    leader.own_entries_synced(term, LogIndex(2));
    assert_eq!(leader.commit_index(), LogIndex(2));
}

#[test]
fn without_syncing_apart_the_leader_counts_itself_at_once() {
    let mut leader = core(0, 3);
    elect(&mut leader);
    leader.propose(Command::from_text("a")).expect("leader");
    replicate_everything_to(&mut leader, n(1), t(1_001));
    assert_eq!(leader.commit_index(), LogIndex(1));
}

#[test]
fn count_self_before_sync_commits_on_one_follower_and_an_unsynced_copy() {
    let mut broken =
        leader_with_an_unsynced_entry(MutationSet::only(Mutation::CountSelfBeforeSync));
    replicate_everything_to(&mut broken, n(1), t(1_001));
    assert_eq!(broken.commit_index(), LogIndex(1));
}
