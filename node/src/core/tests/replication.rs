//! Replication: AppendEntries persisted before the reply, the leader's own entries persisted
//! before they are sent, fast backtracking, and the commit rule.

use super::*;

#[test]
fn appended_entries_are_persisted_before_the_reply() {
    let mut follower = core(1, 3);
    let effects = follower.handle_request(
        t(10),
        &Request::AppendEntries(AppendEntriesArgs {
            term: Term(1),
            leader: n(0),
            prev_log_index: LogIndex(0),
            prev_log_term: Term(0),
            entries: log_of(&[1, 1]).entries().to_vec(),
            leader_commit: LogIndex(1),
            read_round: 0,
            sent_at: threadsim::Instant::ZERO,
        }),
    );
    let persist = position(&effects, |e| *e == Effect::Persist);
    assert!(persist < position(&effects, |e| matches!(e, Effect::Reply(_))));
    assert!(effects
        .as_slice()
        .contains(&Effect::CommitAdvanced(LogIndex(1))));
    assert_eq!(follower.persistent().log.last_index(), LogIndex(2));
}

#[test]
fn a_leader_writes_its_new_entries_once_before_the_first_send_of_them() {
    let mut leader = core(0, 3);
    elect(&mut leader);
    let (_, _, effects) = leader.propose(Command::from_text("a")).expect("leader");
    assert!(
        !effects.as_slice().contains(&Effect::Persist),
        "written per round, not per propose: {effects:?}"
    );
    leader.propose(Command::from_text("b")).expect("leader");
    let (effects, request) = leader.next_request(n(1), t(0)).expect("entries to send");
    assert_eq!(
        effects.as_slice(),
        &[Effect::Persist],
        "written before the send"
    );
    let Request::AppendEntries(args) = request else {
        panic!()
    };
    assert_eq!(args.entries.len(), 2, "both share the round");
    let (effects, _) = leader.next_request(n(2), t(0)).expect("entries to send");
    assert!(effects.is_empty(), "already durable: {effects:?}");
}

#[test]
fn a_follower_commits_no_further_than_what_the_leader_sent() {
    let state = PersistentState {
        current_term: Term(1),
        voted_for: None,
        log: log_of(&[1, 1, 1]),
        snapshot: Vec::new(),
    };
    let mut follower = core_with(1, 3, state, MutationSet::default());
    follower.handle_request(
        t(10),
        &Request::AppendEntries(AppendEntriesArgs {
            term: Term(2),
            leader: n(0),
            prev_log_index: LogIndex(1),
            prev_log_term: Term(1),
            entries: vec![],
            leader_commit: LogIndex(3),
            read_round: 0,
            sent_at: threadsim::Instant::ZERO,
        }),
    );
    assert_eq!(
        follower.commit_index(),
        LogIndex(1),
        "entries 2..3 were not confirmed by this leader"
    );
}

#[test]
fn a_mismatch_reports_the_conflicting_term_and_its_first_index() {
    let state = PersistentState {
        current_term: Term(3),
        voted_for: None,
        log: log_of(&[1, 2, 2, 2]),
        snapshot: Vec::new(),
    };
    let mut follower = core_with(1, 3, state, MutationSet::default());
    let at = |prev: u64| {
        Request::AppendEntries(AppendEntriesArgs {
            term: Term(4),
            leader: n(0),
            prev_log_index: LogIndex(prev),
            prev_log_term: Term(3),
            entries: vec![],
            leader_commit: LogIndex(0),
            read_round: 0,
            sent_at: threadsim::Instant::ZERO,
        })
    };
    let Response::AppendEntries(reply) = reply_of(&follower.handle_request(t(10), &at(4))) else {
        panic!()
    };
    assert_eq!(
        reply.conflict,
        Some(Conflict {
            term: Some(Term(2)),
            first_index: LogIndex(2)
        })
    );
    let Response::AppendEntries(reply) = reply_of(&follower.handle_request(t(11), &at(9))) else {
        panic!()
    };
    assert_eq!(
        reply.conflict,
        Some(Conflict {
            term: None,
            first_index: LogIndex(5)
        })
    );
}

#[test]
fn fast_backtracking_skips_a_whole_conflicting_term() {
    let state = PersistentState {
        current_term: Term(5),
        voted_for: None,
        log: log_of(&[1, 1, 4, 4, 4, 5]),
        snapshot: Vec::new(),
    };
    let mut leader = core_with(0, 3, state, MutationSet::default());
    elect(&mut leader);
    let conflict = |term, first| {
        Response::AppendEntries(AppendEntriesReply {
            term: Term(6),
            success: false,
            conflict: Some(Conflict {
                term: Some(Term(term)),
                first_index: LogIndex(first),
            }),
            read_round: 0,
        })
    };
    let request = heartbeat_now(&mut leader, n(1), t(1_000));
    leader.handle_response(t(1_001), n(1), &request, Some(&conflict(3, 3)));
    assert_eq!(
        leader.progress(n(1)).unwrap().next_index,
        LogIndex(3),
        "term 3 unknown to the leader"
    );
    let (_, request) = leader.next_request(n(1), t(0)).expect("retry with entries");
    leader.handle_response(t(1_002), n(1), &request, Some(&conflict(1, 1)));
    assert_eq!(
        leader.progress(n(1)).unwrap().next_index,
        LogIndex(2),
        "after the leader's last term-1 entry"
    );
}

pub(super) fn replicate_everything_to(
    leader: &mut RaftCore,
    peer: NodeId,
    now: Instant,
) -> Effects {
    let request = match leader.next_request(peer, t(0)) {
        Some((_, request)) => request,
        None => heartbeat_now(leader, peer, now),
    };
    let term = leader.term();
    leader.handle_response(now, peer, &request, Some(&success(&request, term)))
}

#[test]
fn only_current_term_entries_are_committed_by_counting_replicas() {
    // Figure 8: an entry of term 2 on a majority is not committed by a leader of term 4 ...
    let state = PersistentState {
        current_term: Term(3),
        voted_for: None,
        log: log_of(&[1, 2]),
        snapshot: Vec::new(),
    };
    let mut leader = core_with(0, 3, state.clone(), MutationSet::default());
    elect(&mut leader);
    let effects = replicate_everything_to(&mut leader, n(1), t(1_001));
    assert_eq!(
        leader.commit_index(),
        LogIndex(0),
        "old-term entry committed by counting: {effects:?}"
    );
    // ... until an entry of its own term is replicated, which commits both.
    leader.propose(Command::from_text("new")).expect("leader");
    let effects = replicate_everything_to(&mut leader, n(1), t(1_002));
    assert!(effects
        .as_slice()
        .contains(&Effect::CommitAdvanced(LogIndex(3))));

    let mut broken = core_with(
        0,
        3,
        state,
        MutationSet::only(Mutation::CommitOldTermByCounting),
    );
    elect(&mut broken);
    replicate_everything_to(&mut broken, n(1), t(1_001));
    assert_eq!(
        broken.commit_index(),
        LogIndex(2),
        "the mutation commits the old entry"
    );
}

#[test]
fn a_commit_needs_a_majority_of_an_even_cluster() {
    let mut leader = core(0, 4);
    elect(&mut leader);
    leader.propose(Command::from_text("x")).expect("leader");
    replicate_everything_to(&mut leader, n(1), t(1_001));
    assert_eq!(leader.commit_index(), LogIndex(0), "2 of 4 is half");
    replicate_everything_to(&mut leader, n(2), t(1_002));
    assert_eq!(leader.commit_index(), LogIndex(1), "3 of 4 is a majority");
}

#[test]
fn a_leader_steps_down_on_a_higher_term_unless_mutated() {
    for (mutations, expected) in [
        (MutationSet::default(), Role::Follower),
        (
            MutationSet::only(Mutation::NoStepDownOnHigherTermReply),
            Role::Leader,
        ),
    ] {
        let mut leader = core_with(0, 3, PersistentState::default(), mutations);
        elect(&mut leader);
        let request = heartbeat_now(&mut leader, n(1), t(1_000));
        let reply = Response::AppendEntries(AppendEntriesReply {
            term: Term(9),
            success: false,
            conflict: None,
            read_round: 0,
        });
        leader.handle_response(t(1_001), n(1), &request, Some(&reply));
        assert_eq!(leader.role(), expected);
    }
}

#[test]
fn a_truncating_heartbeat_is_only_possible_with_the_mutation() {
    for (mutations, expected_last) in [
        (MutationSet::default(), LogIndex(3)),
        (
            MutationSet::only(Mutation::TruncateOnMatchingHeartbeat),
            LogIndex(1),
        ),
    ] {
        let state = PersistentState {
            current_term: Term(1),
            voted_for: None,
            log: log_of(&[1, 1, 1]),
            snapshot: Vec::new(),
        };
        let mut follower = core_with(1, 3, state, mutations);
        follower.handle_request(
            t(10),
            &Request::AppendEntries(AppendEntriesArgs {
                term: Term(1),
                leader: n(0),
                prev_log_index: LogIndex(1),
                prev_log_term: Term(1),
                entries: vec![],
                leader_commit: LogIndex(0),
                read_round: 0,
                sent_at: threadsim::Instant::ZERO,
            }),
        );
        assert_eq!(follower.persistent().log.last_index(), expected_last);
    }
}

#[test]
fn entries_after_a_mismatching_entry_are_refused_unless_the_check_is_skipped() {
    for (mutations, accepted) in [
        (MutationSet::default(), false),
        (MutationSet::only(Mutation::SkipConsistencyCheck), true),
    ] {
        let state = PersistentState {
            current_term: Term(2),
            voted_for: None,
            log: log_of(&[1, 1]),
            snapshot: Vec::new(),
        };
        let mut follower = core_with(1, 3, state, mutations);
        let effects = follower.handle_request(
            t(10),
            &Request::AppendEntries(AppendEntriesArgs {
                term: Term(3),
                leader: n(0),
                prev_log_index: LogIndex(2),
                prev_log_term: Term(2),
                entries: log_of(&[3]).entries().to_vec(),
                leader_commit: LogIndex(0),
                read_round: 0,
                sent_at: threadsim::Instant::ZERO,
            }),
        );
        let Response::AppendEntries(reply) = reply_of(&effects) else {
            panic!()
        };
        assert_eq!(reply.success, accepted);
        let last = if accepted { LogIndex(3) } else { LogIndex(2) };
        assert_eq!(follower.persistent().log.last_index(), last);
    }
}

#[test]
fn a_reply_to_an_append_of_an_earlier_leadership_changes_nothing() {
    let mut node = core(0, 3);
    elect(&mut node);
    let old = heartbeat_now(&mut node, n(1), t(1_010));
    // Deposed in term 2, then leader again in term 3.
    let deposing = refusal_in(Term(2));
    node.handle_response(t(1_020), n(2), &old, Some(&deposing));
    elect_at(&mut node, t(2_000));
    assert_eq!((node.role(), node.term()), (Role::Leader, Term(3)));
    // The term-1 append's answer arrives now, from a follower already in term 3.
    let before = format!("{node:?}");
    let effects = node.handle_response(t(2_010), n(1), &old, Some(&success(&old, Term(3))));
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(
        format!("{node:?}"),
        before,
        "an earlier leadership's answer is no contact"
    );
}
