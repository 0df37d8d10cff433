//! Configuration changes (thesis §4): which configuration is in force, which changes a leader
//! takes, and how voters, learners and nodes outside the configuration are counted.

use super::*;
use crate::core::ChangeRefused;
use crate::membership::{Membership, MembershipChange};

/// Node `id` of a cluster whose nodes are n0..n`universe`, which starts with `voters` voting.
fn member(id: u32, universe: u32, voters: &[u32], mutations: MutationSet) -> RaftCore {
    let peers = (0..universe).filter(|&p| p != id).map(NodeId).collect();
    let bootstrap = Membership::of_voters(voters.iter().copied().map(NodeId));
    RaftCore::with_membership(
        n(id),
        peers,
        bootstrap,
        PersistentState::default(),
        config(mutations),
        t(0),
    )
}

/// Elects `core` with the votes of the voters of its configuration.
fn elect_by_voters(core: &mut RaftCore) {
    core.start_election(t(1_000));
    for peer in core.peers().to_vec() {
        if core.role() == Role::Leader {
            break;
        }
        let Some((_, request)) = core.next_request(peer, t(1_000)) else {
            continue;
        };
        let term = core.term();
        core.handle_response(t(1_000), peer, &request, Some(&vote_granted(term)));
    }
    assert_eq!(core.role(), Role::Leader);
}

/// Sends `peer` what the leader has for it and answers success at `now`.
fn replicate_to(leader: &mut RaftCore, peer: u32, now: Instant) {
    let (_, request) = leader.next_request(n(peer), now).expect("entries to send");
    let term = leader.term();
    leader.handle_response(now, n(peer), &request, Some(&success(&request, term)));
}

/// n0, leader of the voters n0-n2 among n0-n4, with a no-op of its term committed by n1.
fn leader_of_three(mutations: MutationSet) -> RaftCore {
    let mut leader = member(0, 5, &[0, 1, 2], mutations);
    elect_by_voters(&mut leader);
    leader.propose(Command::from_text("no-op")).expect("leads");
    replicate_to(&mut leader, 1, t(1_001));
    assert_eq!(leader.commit_index(), LogIndex(1));
    leader
}

#[test]
fn a_change_waits_for_an_own_term_commit_and_for_the_change_before_it() {
    let mut leader = member(0, 5, &[0, 1, 2], MutationSet::default());
    elect_by_voters(&mut leader);
    let add = MembershipChange::AddLearner(n(3));
    assert_eq!(
        leader.change_membership(add).unwrap_err(),
        ChangeRefused::NoCommitInTerm
    );
    leader.propose(Command::from_text("no-op")).expect("leads");
    replicate_to(&mut leader, 1, t(1_001));
    let (index, _, _) = leader
        .change_membership(add)
        .expect("an own-term entry committed");
    assert_eq!(index, LogIndex(2));
    assert!(leader.membership().contains(n(3)), "in force once appended");
    assert_eq!(
        leader.change_membership(MembershipChange::Promote(n(3))),
        Err(ChangeRefused::ChangeInFlight(LogIndex(2)))
    );
    assert_eq!(
        leader.change_membership(MembershipChange::AddLearner(n(9))),
        Err(ChangeRefused::UnknownNode(n(9)))
    );
    replicate_to(&mut leader, 1, t(1_002));
    assert_eq!(leader.commit_index(), LogIndex(2));
    assert_eq!(
        leader.change_membership(MembershipChange::Promote(n(3))),
        Err(ChangeRefused::NotCaughtUp {
            node: n(3),
            matched: LogIndex(0),
            commit: LogIndex(2)
        }),
        "a learner that lacks committed entries waits"
    );
    replicate_to(&mut leader, 3, t(1_003));
    leader
        .change_membership(MembershipChange::Promote(n(3)))
        .expect("the change before it committed, and the learner caught up");
}

#[test]
fn the_broken_variants_skip_the_waits() {
    let mut early = member(
        0,
        5,
        &[0, 1, 2],
        MutationSet::only(Mutation::ChangeBeforeOwnTermCommit),
    );
    elect_by_voters(&mut early);
    early
        .change_membership(MembershipChange::AddLearner(n(3)))
        .expect("change-before-own-term-commit takes it");
    let mut twice = leader_of_three(MutationSet::only(Mutation::TwoChangesInFlight));
    twice
        .change_membership(MembershipChange::AddLearner(n(3)))
        .expect("the first");
    twice
        .change_membership(MembershipChange::Remove(n(2)))
        .expect("two-changes-in-flight takes the second");
}

#[test]
fn a_learner_gets_the_log_but_its_copy_commits_nothing() {
    let mut leader = leader_of_three(MutationSet::default());
    leader
        .change_membership(MembershipChange::AddLearner(n(3)))
        .expect("a learner");
    assert!(
        leader.next_request(n(4), t(1_002)).is_none(),
        "n4 is not a member"
    );
    replicate_to(&mut leader, 3, t(1_002));
    assert_eq!(
        leader.progress(n(3)).map(|p| p.match_index),
        Some(LogIndex(2))
    );
    assert_eq!(
        leader.commit_index(),
        LogIndex(1),
        "the learner's copy does not count"
    );
    replicate_to(&mut leader, 2, t(1_003));
    assert_eq!(leader.commit_index(), LogIndex(2));

    let mut broken = leader_of_three(MutationSet::only(Mutation::LearnerCounted));
    broken
        .change_membership(MembershipChange::AddLearner(n(3)))
        .expect("a learner");
    replicate_to(&mut broken, 3, t(1_002));
    assert_eq!(
        broken.commit_index(),
        LogIndex(2),
        "learner-counted counts it"
    );
}

#[test]
fn a_vote_from_outside_the_configuration_counts_only_in_the_broken_variant() {
    for (mutations, wins) in [
        (MutationSet::default(), false),
        (MutationSet::only(Mutation::RemovedVotesCounted), true),
    ] {
        // n2 was removed: the voters are n0 and n1.
        let mut candidate = member(0, 3, &[0, 1], mutations.clone());
        candidate.start_election(t(1_000));
        let (_, request) = candidate.next_request(n(1), t(1_000)).expect("asks n1");
        // The broken count asks n2 too (a stale peer list).
        let asked = candidate.next_request(n(2), t(1_000)).is_some();
        assert_eq!(asked, wins, "{mutations:?}");
        let term = candidate.term();
        candidate.handle_response(t(1_000), n(2), &request, Some(&vote_granted(term)));
        assert_eq!(candidate.role() == Role::Leader, wins, "{mutations:?}");
    }
}

#[test]
fn a_leader_that_removed_itself_leads_until_the_removal_commits_then_steps_down() {
    let mut leader = leader_of_three(MutationSet::default());
    let (removal, _, _) = leader
        .change_membership(MembershipChange::Remove(n(0)))
        .expect("a removal of itself");
    assert!(!leader.is_voter());
    replicate_to(&mut leader, 1, t(1_002));
    assert_eq!(
        leader.commit_index(),
        LogIndex(1),
        "it does not count itself"
    );
    assert_eq!(leader.role(), Role::Leader);
    replicate_to(&mut leader, 2, t(1_003));
    assert_eq!(leader.commit_index(), removal, "n1 and n2 of [n1 n2]");
    assert_eq!(leader.role(), Role::Follower, "stepped down");
    // Outside the voters, it never campaigns.
    let later = t(60_000);
    leader.tick(later);
    assert_eq!(leader.role(), Role::Follower);
}

#[test]
fn a_follower_follows_the_latest_configuration_in_its_log_and_reverts_when_it_is_cut() {
    let mut follower = member(1, 5, &[0, 1, 2], MutationSet::default());
    let learner = Membership::of_voters([n(0), n(1), n(2)])
        .after(MembershipChange::AddLearner(n(3)))
        .unwrap();
    let append = |term: u64, prev: u64, prev_term: u64, entries: Vec<Entry>| {
        Request::AppendEntries(AppendEntriesArgs {
            term: Term(term),
            leader: n(0),
            prev_log_index: LogIndex(prev),
            prev_log_term: Term(prev_term),
            entries,
            leader_commit: LogIndex(0),
            read_round: 0,
            sent_at: threadsim::Instant::ZERO,
        })
    };
    let entry = |term: u64, command: Command| Entry {
        term: Term(term),
        command,
    };
    follower.handle_request(
        after_boot(),
        &append(
            1,
            0,
            0,
            vec![
                entry(1, Command::from_text("a")),
                entry(1, learner.encode()),
            ],
        ),
    );
    assert_eq!(follower.membership(), learner);
    // A leader of term 2 that never had the change overwrites it.
    follower.handle_request(
        after_boot(),
        &append(2, 1, 1, vec![entry(2, Command::from_text("b"))]),
    );
    assert_eq!(
        follower.membership(),
        Membership::of_voters([n(0), n(1), n(2)])
    );
}

#[test]
fn a_snapshot_keeps_the_configuration_of_its_index_across_a_restart() {
    let mut leader = leader_of_three(MutationSet::default());
    leader
        .change_membership(MembershipChange::AddLearner(n(3)))
        .expect("a learner");
    replicate_to(&mut leader, 1, t(1_002));
    assert_eq!(leader.commit_index(), LogIndex(2));
    leader.compact(LogIndex(2), b"service".to_vec());
    assert!(
        leader.persistent().log.last_configuration().is_none(),
        "compacted"
    );
    let restarted = RaftCore::with_membership(
        n(0),
        leader.peers().to_vec(),
        Membership::of_voters([n(0), n(1), n(2)]),
        leader.persistent().clone(),
        config(MutationSet::default()),
        t(5_000),
    );
    assert!(restarted.membership().contains(n(3)));
}

#[test]
fn a_service_command_may_not_pass_for_a_configuration() {
    let mut leader = leader_of_three(MutationSet::default());
    let forged = Membership::of_voters([n(0)]).encode();
    assert_eq!(leader.propose(forged), Err(ProposeError::Reserved));
}

#[test]
fn a_learner_never_campaigns() {
    let mut learner = member(3, 5, &[0, 1, 2], MutationSet::default());
    learner.tick(t(60_000));
    assert_eq!(learner.role(), Role::Follower);
    assert_eq!(learner.term(), Term(0));
}

#[test]
fn the_only_voter_writes_an_entry_before_it_commits_it_though_learners_follow() {
    let mut alone = member(0, 2, &[0], MutationSet::default());
    alone.tick(t(60_000));
    assert_eq!(alone.role(), Role::Leader, "its own vote is a majority");
    alone.propose(Command::from_text("no-op")).expect("leads");
    alone
        .change_membership(MembershipChange::AddLearner(n(1)))
        .expect("a learner");
    let (index, _, effects) = alone.propose(Command::from_text("x")).expect("leads");
    let persist = position(&effects, |e| *e == Effect::Persist);
    let commit = position(&effects, |e| *e == Effect::CommitAdvanced(index));
    assert!(persist < commit, "{effects:?}");
}

#[test]
fn a_node_that_gave_up_its_vote_campaigns_until_that_change_commits() {
    // n0 led n0 and n1, demoted itself, and crashed before n1 heard: n1 needs n0's vote, which
    // n0's longer log refuses, so n0 must campaign, under the new configuration.
    let mut leader = member(0, 2, &[0, 1], MutationSet::default());
    elect_by_voters(&mut leader);
    leader.propose(Command::from_text("no-op")).expect("leads");
    replicate_to(&mut leader, 1, t(1_001));
    leader
        .change_membership(MembershipChange::Demote(n(0)))
        .expect("a demotion of itself");
    let restarted = |state: PersistentState| {
        RaftCore::with_membership(
            n(0),
            vec![n(1)],
            Membership::of_voters([n(0), n(1)]),
            state,
            config(MutationSet::default()),
            t(5_000),
        )
    };
    let mut back = restarted(leader.persistent().clone());
    assert!(!back.is_voter());
    assert!(back.may_campaign(), "the demotion is not committed");
    back.tick(t(60_000));
    assert_eq!(back.role(), Role::PreCandidate);
    let (_, request) = back.next_request(n(1), t(60_000)).expect("asks n1");
    back.handle_response(t(60_001), n(1), &request, Some(&vote_granted(back.term())));
    assert_eq!(back.role(), Role::Candidate);
    let (_, request) = back.next_request(n(1), t(60_002)).expect("asks n1");
    back.handle_response(t(60_003), n(1), &request, Some(&vote_granted(back.term())));
    assert_eq!(back.role(), Role::Leader, "n1's vote is a majority of [n1]");
    // Once the demotion commits, it hands over.
    back.propose(Command::from_text("own term")).expect("leads");
    replicate_to(&mut back, 1, t(60_004));
    back.tick(t(60_005));
    assert_eq!(back.role(), Role::Follower);
    assert!(!back.may_campaign());
}

/// Hands `request` from `from` to `to` at `now`, and `to`'s answer back to `from`.
fn deliver(from: &mut RaftCore, to: &mut RaftCore, request: &Request, now: Instant) {
    let answer = reply_of(&to.handle_request(now, request));
    from.handle_response(now, to.id(), request, Some(&answer));
}

/// Sends `to` whatever `from` has for it (vote requests, entries) until it has nothing more.
fn exchange(from: &mut RaftCore, to: &mut RaftCore, now: Instant) {
    for _ in 0..10 {
        let Some((_, request)) = from.next_request(to.id(), now) else {
            return;
        };
        deliver(from, to, &request, now);
    }
}

/// The single-server change bug (Ongaro, raft-dev, July 2015), message by message on five
/// cores: n0 leads n0-n3 in t1, adds n4 as a learner, and promotes it with only n4 hearing
/// (five voters, n0's side). n1 is elected in t2 by n1-n3 and, before anything of its term
/// commits, removes n0 with only n2 hearing (three voters, n1-n3). The broken leader takes the
/// change, and each side elects a leader of t3: n2 by n1 and n2 (a majority of n1-n3), n0 by
/// n0, n3 and n4 (a majority of n0-n4). The correct leader refuses it.
fn two_leaders_of_one_term(mutations: MutationSet) -> Result<[RaftCore; 5], ChangeRefused> {
    let mut n: [RaftCore; 5] =
        std::array::from_fn(|id| member(id as u32, 5, &[0, 1, 2, 3], mutations.clone()));
    let [n0, n1, n2, n3, n4] = &mut n;
    // n0 leads t1, commits an entry of its term, adds n4 as a learner.
    n0.start_election(t(1_000));
    for voter in [&mut *n1, &mut *n2, &mut *n3] {
        exchange(n0, voter, t(1_000));
    }
    n0.propose(Command::from_text("t1")).expect("leads");
    for voter in [&mut *n1, &mut *n2, &mut *n3] {
        exchange(n0, voter, t(1_000));
    }
    n0.change_membership(MembershipChange::AddLearner(n4.id()))
        .expect("an entry of t1 committed first");
    for peer in [&mut *n1, &mut *n2, &mut *n3, &mut *n4] {
        exchange(n0, peer, t(1_001));
    }
    // Heartbeats tell everyone the commit index: the learner's addition is committed.
    for peer in [&mut *n1, &mut *n2, &mut *n3, &mut *n4] {
        let heartbeat = heartbeat_now(n0, peer.id(), t(1_001));
        deliver(n0, peer, &heartbeat, t(1_001));
    }
    n0.change_membership(MembershipChange::Promote(n4.id()))
        .expect("the learner caught up");
    exchange(n0, n4, t(1_002));
    assert_eq!(n0.membership().voters().len(), 5);
    // n1 leads t2 by n1-n3, and removes n0 before anything of t2 commits; n2 hears.
    n1.start_election(t(3_000));
    for voter in [&mut *n2, &mut *n3] {
        exchange(n1, voter, t(3_000));
    }
    assert_eq!(n1.role(), Role::Leader);
    n1.change_membership(MembershipChange::Remove(n0.id()))?;
    exchange(n1, n2, t(3_001));
    // Both leaders lose their majorities and step down; each side elects a leader of t3.
    n0.tick(t(5_000));
    n1.tick(t(5_000));
    n2.start_election(t(5_000));
    exchange(n2, n1, t(5_000));
    n0.start_election(t(5_000));
    n0.start_election(t(5_001));
    for voter in [&mut *n3, &mut *n4] {
        exchange(n0, voter, t(5_001));
    }
    Ok(n)
}

#[test]
fn the_single_server_change_bug_elects_two_leaders_of_one_term_and_the_rule_prevents_it() {
    let broken = two_leaders_of_one_term(MutationSet::only(Mutation::ChangeBeforeOwnTermCommit))
        .expect("the broken leader takes the change");
    let leaders: Vec<(NodeId, Term, usize)> = (broken.iter())
        .filter(|core| core.role() == Role::Leader)
        .map(|core| (core.id(), core.term(), core.membership().voters().len()))
        .collect();
    assert_eq!(
        leaders,
        vec![(n(0), Term(3), 5), (n(2), Term(3), 3)],
        "n0 leads t3 under five voters, n2 under three"
    );
    assert_eq!(
        two_leaders_of_one_term(MutationSet::default()).err(),
        Some(ChangeRefused::NoCommitInTerm),
        "the correct leader commits an entry of t2 first"
    );
}
