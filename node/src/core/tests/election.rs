//! Election: pre-vote, votes persisted before the reply, the up-to-date check, majorities.

use super::*;

#[test]
fn an_election_persists_the_vote_before_asking_for_votes() {
    let mut core = core(0, 3);
    let effects = core.start_election(t(500));
    assert!(
        position(&effects, |e| *e == Effect::Persist)
            < position(&effects, |e| *e == Effect::WakePeers)
    );
    assert_eq!(core.term(), Term(1));
    assert_eq!(core.persistent().voted_for, Some(n(0)));
    let Some((_, Request::RequestVote(args))) = core.next_request(n(1), t(0)) else {
        panic!()
    };
    assert_eq!(args.term, Term(1));
    assert_eq!(
        core.next_request(n(1), t(0)),
        None,
        "one vote request per peer per term"
    );
}

#[test]
fn a_granted_vote_is_persisted_before_the_reply_and_never_given_twice_in_a_term() {
    let mut voter = core(2, 3);
    let ask = |candidate| {
        Request::RequestVote(RequestVoteArgs {
            pre_vote: false,
            transfer: false,
            term: Term(1),
            candidate: n(candidate),
            last_log_index: LogIndex(0),
            last_log_term: Term(0),
        })
    };
    let effects = voter.handle_request(after_boot(), &ask(0));
    assert!(
        position(&effects, |e| *e == Effect::Persist)
            < position(&effects, |e| matches!(e, Effect::Reply(_)))
    );
    assert_eq!(reply_of(&effects), vote_granted(Term(1)));
    let second = voter.handle_request(after_boot(), &ask(1));
    assert_eq!(
        reply_of(&second),
        Response::RequestVote(RequestVoteReply {
            term: Term(1),
            vote_granted: false
        })
    );
    assert!(!second.as_slice().contains(&Effect::Persist));
}

#[test]
fn a_vote_needs_an_up_to_date_log_unless_the_check_is_mutated_away() {
    let state = PersistentState {
        current_term: Term(2),
        voted_for: None,
        log: log_of(&[1, 2]),
        snapshot: Vec::new(),
    };
    let stale = Request::RequestVote(RequestVoteArgs {
        pre_vote: false,
        transfer: false,
        term: Term(3),
        candidate: n(0),
        last_log_index: LogIndex(5),
        last_log_term: Term(1),
    });
    let mut correct = core_with(1, 3, state.clone(), MutationSet::default());
    let Response::RequestVote(reply) = reply_of(&correct.handle_request(after_boot(), &stale))
    else {
        panic!()
    };
    assert!(!reply.vote_granted);
    assert_eq!(
        correct.term(),
        Term(3),
        "the higher term is adopted even without a vote"
    );
    let mut broken = core_with(
        1,
        3,
        state,
        MutationSet::only(Mutation::VoteWithoutUpToDateCheck),
    );
    let Response::RequestVote(reply) = reply_of(&broken.handle_request(after_boot(), &stale))
    else {
        panic!()
    };
    assert!(reply.vote_granted);
}

#[test]
fn a_candidate_wins_with_a_majority_of_an_even_cluster_and_not_with_half() {
    // Four nodes: the candidate and one yes are half, not a majority.
    let mut candidate = core(0, 4);
    candidate.start_election(t(500));
    let (_, request) = candidate.next_request(n(1), t(0)).expect("vote request");
    candidate.handle_response(t(501), n(1), &request, Some(&vote_granted(Term(1))));
    assert_eq!(
        candidate.role(),
        Role::Candidate,
        "2 of 4 is not a majority"
    );
    let (_, request) = candidate.next_request(n(2), t(0)).expect("vote request");
    candidate.handle_response(t(502), n(2), &request, Some(&vote_granted(Term(1))));
    assert_eq!(candidate.role(), Role::Leader, "3 of 4 is");
}

#[test]
fn a_single_node_elects_itself_and_commits_alone() {
    let mut solo = core(0, 1);
    solo.start_election(t(500));
    assert_eq!(solo.role(), Role::Leader);
    let (index, term, effects) = solo.propose(Command::from_text("x")).unwrap();
    assert_eq!((index, term), (LogIndex(1), Term(1)));
    assert!(
        position(&effects, |e| *e == Effect::Persist)
            < position(&effects, |e| *e == Effect::CommitAdvanced(LogIndex(1))),
        "alone, the entry is durable before it commits: {effects:?}"
    );
}

#[test]
fn propose_on_a_follower_is_refused_with_a_hint() {
    let mut follower = core(1, 3);
    follower.handle_request(t(10), &heartbeat_from(0, 1));
    assert_eq!(
        follower.propose(Command::default()).unwrap_err(),
        ProposeError::NotLeader(NotLeader {
            leader_hint: Some(n(0))
        })
    );
}

#[test]
fn a_command_over_the_stored_limit_is_refused_before_the_log_and_one_at_it_is_taken() {
    let mut solo = core(0, 1);
    solo.start_election(t(500));
    let limit = crate::persist::MAX_COMMAND_BYTES;
    let last = solo.persistent().log.last_index();
    assert_eq!(
        solo.propose(Command(vec![0; limit + 1])).unwrap_err(),
        ProposeError::TooLarge {
            bytes: limit + 1,
            limit
        }
    );
    assert_eq!(solo.persistent().log.last_index(), last, "nothing appended");
    let (index, _, _) = solo.propose(Command(vec![0; limit])).expect("at the limit");
    assert_eq!(index, last.next());
}

#[test]
fn a_leader_that_steps_down_keeps_its_term_and_waits_a_full_election_timeout() {
    let mut leader = core(0, 3);
    elect(&mut leader);
    let effects = leader.step_down(t(5_000));
    assert_eq!(leader.role(), Role::Follower);
    assert_eq!(leader.term(), Term(1));
    assert_eq!(effects.as_slice()[0], Effect::RoleChanged(Role::Follower));
    // Its deadline as leader passed long ago: it must not campaign at once.
    let timeout = Config::default().election_timeout_min;
    assert!(leader.election_deadline() >= t(5_000) + timeout);
    assert!(!leader.election_due(t(5_000) + (timeout - Duration::from_millis(1))));
}

#[test]
fn a_pre_vote_changes_nothing_and_only_a_majority_of_yes_starts_the_election() {
    let mut candidate = core(0, 3);
    let deadline = candidate.election_deadline();
    let effects = candidate.start_pre_vote(deadline);
    assert!(
        !effects.as_slice().contains(&Effect::Persist),
        "a pre-vote persists nothing"
    );
    assert_eq!(
        (candidate.term(), candidate.role()),
        (Term(0), Role::PreCandidate)
    );
    let Some((_, Request::RequestVote(args))) = candidate.next_request(n(1), t(0)) else {
        panic!()
    };
    assert!(args.pre_vote && args.term == Term(1));
    // The voter answers without adopting the term or recording a vote.
    let mut voter = core(1, 3);
    let answer = voter.handle_request(after_boot(), &Request::RequestVote(args.clone()));
    assert_eq!(reply_of(&answer), vote_granted(Term(0)));
    assert_eq!(
        (voter.term(), voter.persistent().voted_for),
        (Term(0), None)
    );
    // One yes is a majority of three: the real election starts, persisted first.
    let effects = candidate.handle_response(
        deadline,
        n(1),
        &Request::RequestVote(args),
        Some(&reply_of(&answer)),
    );
    assert_eq!(
        (candidate.term(), candidate.role()),
        (Term(1), Role::Candidate)
    );
    assert_eq!(effects.as_slice()[0], Effect::Persist);
}

#[test]
fn a_leader_keeps_leading_when_a_stale_candidate_asks_for_a_vote_in_its_own_term() {
    // A candidate that lost the election of term 1 asks the winner for its vote, late.
    let mut leader = core(0, 3);
    elect(&mut leader);
    let term = leader.term();
    let stale = Request::RequestVote(RequestVoteArgs {
        pre_vote: false,
        transfer: false,
        term,
        candidate: n(2),
        last_log_index: LogIndex(0),
        last_log_term: Term(0),
    });
    let effects = leader.handle_request(t(600), &stale);
    assert_eq!(
        reply_of(&effects),
        Response::RequestVote(RequestVoteReply {
            term,
            vote_granted: false
        })
    );
    assert_eq!((leader.role(), leader.term()), (Role::Leader, term));
}

/// Found by chaos's non-disruption probe (seed 3367 of a 3-node swarm run): the leader granted
/// the pre-vote and then the vote of a follower that had been cut off from it alone, and with
/// those the follower won the election.
#[test]
fn a_leader_refuses_pre_votes_and_votes_of_a_higher_term_and_keeps_its_own() {
    let mut leader = core(0, 3);
    elect(&mut leader);
    let term = leader.term();
    let log = &leader.persistent().log;
    let (last_log_index, last_log_term) = (log.last_index(), log.last_term());
    for pre_vote in [true, false] {
        let ask = Request::RequestVote(RequestVoteArgs {
            pre_vote,
            transfer: false,
            term: term.next(),
            candidate: n(2),
            last_log_index,
            last_log_term,
        });
        let effects = leader.handle_request(t(100_000), &ask);
        assert_eq!(
            reply_of(&effects),
            Response::RequestVote(RequestVoteReply {
                term,
                vote_granted: false
            }),
            "pre-vote: {pre_vote}"
        );
        assert_eq!((leader.role(), leader.term()), (Role::Leader, term));
    }
}

#[test]
fn a_pre_vote_is_granted_only_for_a_higher_term_and_only_outside_the_lease() {
    let ask = |term: u64| {
        Request::RequestVote(RequestVoteArgs {
            pre_vote: true,
            transfer: false,
            term: Term(term),
            candidate: n(2),
            last_log_index: LogIndex(0),
            last_log_term: Term(0),
        })
    };
    let granted = |effects: &Effects| matches!(reply_of(effects), Response::RequestVote(reply) if reply.vote_granted);
    // A follower that just heard from the leader of term 1.
    let follower = |mutations: MutationSet| {
        let mut follower = core_with(1, 3, PersistentState::default(), mutations);
        follower.handle_request(t(100), &heartbeat_from(0, 1));
        follower
    };
    let mut correct = follower(MutationSet::default());
    assert!(
        !granted(&correct.handle_request(t(110), &ask(2))),
        "within the lease"
    );
    assert!(
        !granted(&correct.handle_request(t(5000), &ask(1))),
        "not a higher term"
    );
    assert!(
        granted(&correct.handle_request(t(5000), &ask(2))),
        "lease over, term higher"
    );
    let mut broken = follower(MutationSet::only(Mutation::PreVoteIgnoresLease));
    assert!(
        granted(&broken.handle_request(t(110), &ask(2))),
        "the variant ignores the lease"
    );
}

#[test]
fn without_pre_vote_a_timed_out_follower_raises_its_term_at_once() {
    let mut correct = core(1, 3);
    let deadline = correct.election_deadline();
    correct.tick(deadline);
    assert_eq!(
        (correct.role(), correct.term()),
        (Role::PreCandidate, Term(0))
    );
    let mut broken = core_with(
        1,
        3,
        PersistentState::default(),
        MutationSet::only(Mutation::NoPreVote),
    );
    let deadline = broken.election_deadline();
    broken.tick(deadline);
    assert_eq!((broken.role(), broken.term()), (Role::Candidate, Term(1)));
}

#[test]
fn half_of_an_even_cluster_elects_a_leader_only_in_the_broken_variant() {
    let vote_from = |candidate: &mut RaftCore, peer: u32| {
        let (_, request) = candidate.next_request(n(peer), t(0)).expect("vote request");
        candidate.handle_response(t(501), n(peer), &request, Some(&vote_granted(Term(1))));
    };
    let mut correct = core(0, 4);
    correct.start_election(t(500));
    vote_from(&mut correct, 1);
    assert_eq!(correct.role(), Role::Candidate);
    let mut broken = core_with(
        0,
        4,
        PersistentState::default(),
        MutationSet::only(Mutation::HalfIsMajority),
    );
    broken.start_election(t(500));
    vote_from(&mut broken, 1);
    assert_eq!(broken.role(), Role::Leader, "2 of 4 counted as a majority");
}

/// The vote request of `candidate`'s current candidacy to `peer`.
fn vote_request_to(candidate: &mut RaftCore, peer: NodeId) -> RequestVoteArgs {
    match candidate.next_request(peer, t(0)) {
        Some((_, Request::RequestVote(args))) => args,
        other => panic!("no vote request for {peer}: {other:?}"),
    }
}

#[test]
fn a_lost_vote_request_is_asked_again_but_the_loss_of_another_candidacy_is_not() {
    let mut candidate = core(0, 3);
    candidate.start_election(t(500));
    let args = vote_request_to(&mut candidate, n(1));
    let lost = |candidate: &mut RaftCore, args: RequestVoteArgs| {
        candidate.handle_response(t(510), n(1), &Request::RequestVote(args), None);
    };
    // A loss reported for a request of another kind, or of another term, is not this one's.
    lost(
        &mut candidate,
        RequestVoteArgs {
            pre_vote: true,
            transfer: false,
            ..args.clone()
        },
    );
    assert_eq!(
        candidate.next_request(n(1), t(0)),
        None,
        "a pre-vote's loss"
    );
    lost(
        &mut candidate,
        RequestVoteArgs {
            term: Term(0),
            ..args.clone()
        },
    );
    assert_eq!(
        candidate.next_request(n(1), t(0)),
        None,
        "an older term's loss"
    );
    // This candidacy's own loss: the same request goes out again.
    lost(&mut candidate, args.clone());
    assert_eq!(vote_request_to(&mut candidate, n(1)), args);
}

#[test]
fn a_late_grant_of_a_real_vote_does_not_count_as_a_pre_vote() {
    let mut node = core(0, 3);
    node.start_election(t(500));
    let real = vote_request_to(&mut node, n(1));
    // The election timed out: the node asks for pre-votes for the next term.
    node.start_pre_vote(t(1_500));
    assert_eq!(node.role(), Role::PreCandidate);
    // The real vote of the earlier candidacy is granted late: it is no pre-vote.
    node.handle_response(
        t(1_510),
        n(1),
        &Request::RequestVote(real),
        Some(&vote_granted(Term(1))),
    );
    assert_eq!((node.role(), node.term()), (Role::PreCandidate, Term(1)));
    // A pre-vote from the same peer completes the majority.
    let pre = vote_request_to(&mut node, n(1));
    assert!(pre.pre_vote);
    node.handle_response(
        t(1_520),
        n(1),
        &Request::RequestVote(pre),
        Some(&vote_granted(Term(1))),
    );
    assert_eq!((node.role(), node.term()), (Role::Candidate, Term(2)));
}

#[test]
fn effects_say_whether_there_is_anything_to_do() {
    let mut candidate = core(0, 3);
    assert!(!candidate.start_election(t(500)).is_empty());
    assert!(Effects::default().is_empty());
}

#[test]
fn a_leader_deposed_by_a_higher_term_keeps_no_lease_against_the_next_election() {
    let mut node = core(0, 3);
    elect(&mut node);
    // A reply in term 2 deposes the leader of term 1 at once.
    let heartbeat = heartbeat_now(&mut node, n(2), t(1_010));
    let deposing = refusal_in(Term(2));
    node.handle_response(t(1_020), n(2), &heartbeat, Some(&deposing));
    assert_eq!((node.role(), node.term()), (Role::Follower, Term(2)));
    // Its own leadership is no leader it heard from: a candidate of term 3 gets its vote now.
    let ask = Request::RequestVote(RequestVoteArgs {
        pre_vote: false,
        transfer: false,
        term: Term(3),
        candidate: n(1),
        last_log_index: node.persistent().log.last_index(),
        last_log_term: node.persistent().log.last_term(),
    });
    let effects = node.handle_request(t(1_030), &ask);
    assert_eq!(reply_of(&effects), vote_granted(Term(3)));
}
