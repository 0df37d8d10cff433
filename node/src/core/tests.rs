//! The Raft rules checked on the effects they return, without threads.

use super::*;
use crate::log::RaftLog;
use crate::messages::*;
use crate::Entry;

fn n(id: u32) -> NodeId {
    NodeId(id)
}

fn core_with(id: u32, cluster: u32, state: PersistentState, mutations: MutationSet) -> RaftCore {
    let peers = (0..cluster).filter(|&p| p != id).map(NodeId).collect();
    RaftCore::new(n(id), peers, state, mutations, 16)
}

fn core(id: u32, cluster: u32) -> RaftCore {
    core_with(
        id,
        cluster,
        PersistentState::default(),
        MutationSet::default(),
    )
}

fn log_of(terms: &[u64]) -> RaftLog {
    RaftLog::from_entries(
        terms
            .iter()
            .enumerate()
            .map(|(i, &t)| Entry {
                term: Term(t),
                command: Command(vec![i as u8]),
            })
            .collect(),
    )
}

fn position(effects: &Effects, wanted: impl Fn(&Effect) -> bool) -> usize {
    effects
        .as_slice()
        .iter()
        .position(wanted)
        .unwrap_or_else(|| panic!("missing in {effects:?}"))
}

fn reply_of(effects: &Effects) -> Response {
    match effects.as_slice().last() {
        Some(Effect::Reply(response)) => response.clone(),
        other => panic!("last effect is not a reply: {other:?}"),
    }
}

fn elect(core: &mut RaftCore) {
    core.start_election();
    for peer in core.peers().to_vec() {
        if core.role() == Role::Leader {
            break;
        }
        let request = core.next_request(peer).expect("vote request");
        let reply = Response::RequestVote(RequestVoteReply {
            term: core.term(),
            vote_granted: true,
        });
        core.handle_response(peer, &request, Some(&reply));
    }
    assert_eq!(core.role(), Role::Leader);
}

#[test]
fn an_election_persists_the_vote_before_asking_for_votes() {
    let mut core = core(0, 3);
    let effects = core.start_election();
    assert!(
        position(&effects, |e| *e == Effect::Persist)
            < position(&effects, |e| *e == Effect::WakePeers)
    );
    assert_eq!(core.term(), Term(1));
    assert_eq!(core.persistent().voted_for, Some(n(0)));
    let Some(Request::RequestVote(args)) = core.next_request(n(1)) else {
        panic!()
    };
    assert_eq!(args.term, Term(1));
    assert_eq!(
        core.next_request(n(1)),
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
            term: Term(1),
            candidate: n(candidate),
            last_log_index: LogIndex(0),
            last_log_term: Term(0),
        })
    };
    let effects = voter.handle_request(&ask(0));
    assert!(
        position(&effects, |e| *e == Effect::Persist)
            < position(&effects, |e| matches!(e, Effect::Reply(_)))
    );
    assert_eq!(
        reply_of(&effects),
        Response::RequestVote(RequestVoteReply {
            term: Term(1),
            vote_granted: true
        })
    );
    let second = voter.handle_request(&ask(1));
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
    };
    let stale = Request::RequestVote(RequestVoteArgs {
        pre_vote: false,
        term: Term(3),
        candidate: n(0),
        last_log_index: LogIndex(5),
        last_log_term: Term(1),
    });
    let mut correct = core_with(1, 3, state.clone(), MutationSet::default());
    let Response::RequestVote(reply) = reply_of(&correct.handle_request(&stale)) else {
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
    let Response::RequestVote(reply) = reply_of(&broken.handle_request(&stale)) else {
        panic!()
    };
    assert!(reply.vote_granted);
}

#[test]
fn appended_entries_are_persisted_before_the_reply() {
    let mut follower = core(1, 3);
    let effects = follower.handle_request(&Request::AppendEntries(AppendEntriesArgs {
        term: Term(1),
        leader: n(0),
        prev_log_index: LogIndex(0),
        prev_log_term: Term(0),
        entries: log_of(&[1, 1]).entries().to_vec(),
        leader_commit: LogIndex(1),
    }));
    let persist = position(&effects, |e| *e == Effect::Persist);
    assert!(persist < position(&effects, |e| matches!(e, Effect::Reply(_))));
    assert!(effects
        .as_slice()
        .contains(&Effect::CommitAdvanced(LogIndex(1))));
    assert_eq!(follower.persistent().log.last_index(), LogIndex(2));
}

#[test]
fn a_follower_commits_no_further_than_what_the_leader_sent() {
    let state = PersistentState {
        current_term: Term(1),
        voted_for: None,
        log: log_of(&[1, 1, 1]),
    };
    let mut follower = core_with(1, 3, state, MutationSet::default());
    follower.handle_request(&Request::AppendEntries(AppendEntriesArgs {
        term: Term(2),
        leader: n(0),
        prev_log_index: LogIndex(1),
        prev_log_term: Term(1),
        entries: vec![],
        leader_commit: LogIndex(3),
    }));
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
    };
    let mut follower = core_with(1, 3, state, MutationSet::default());
    let effects = follower.handle_request(&Request::AppendEntries(AppendEntriesArgs {
        term: Term(4),
        leader: n(0),
        prev_log_index: LogIndex(4),
        prev_log_term: Term(3),
        entries: vec![],
        leader_commit: LogIndex(0),
    }));
    let Response::AppendEntries(reply) = reply_of(&effects) else {
        panic!()
    };
    assert_eq!(
        reply.conflict,
        Some(Conflict {
            term: Some(Term(2)),
            first_index: LogIndex(2)
        })
    );
    let short = follower.handle_request(&Request::AppendEntries(AppendEntriesArgs {
        term: Term(4),
        leader: n(0),
        prev_log_index: LogIndex(9),
        prev_log_term: Term(3),
        entries: vec![],
        leader_commit: LogIndex(0),
    }));
    let Response::AppendEntries(reply) = reply_of(&short) else {
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
    };
    let mut leader = core_with(0, 3, state, MutationSet::default());
    elect(&mut leader);
    let request = leader.heartbeat_request(n(1)).expect("heartbeat");
    let reply = Response::AppendEntries(AppendEntriesReply {
        term: Term(6),
        success: false,
        conflict: Some(Conflict {
            term: Some(Term(3)),
            first_index: LogIndex(3),
        }),
    });
    leader.handle_response(n(1), &request, Some(&reply));
    assert_eq!(
        leader.progress(n(1)).unwrap().next_index,
        LogIndex(3),
        "term 3 unknown to the leader"
    );
    let request = leader.next_request(n(1)).expect("retry with entries");
    let reply = Response::AppendEntries(AppendEntriesReply {
        term: Term(6),
        success: false,
        conflict: Some(Conflict {
            term: Some(Term(1)),
            first_index: LogIndex(1),
        }),
    });
    leader.handle_response(n(1), &request, Some(&reply));
    assert_eq!(
        leader.progress(n(1)).unwrap().next_index,
        LogIndex(2),
        "after the leader's last term-1 entry"
    );
}

fn replicate_everything_to(leader: &mut RaftCore, peer: NodeId) -> Effects {
    let request = leader
        .next_request(peer)
        .or_else(|| leader.heartbeat_request(peer))
        .expect("append");
    let reply = Response::AppendEntries(AppendEntriesReply {
        term: leader.term(),
        success: true,
        conflict: None,
    });
    leader.handle_response(peer, &request, Some(&reply))
}

#[test]
fn only_current_term_entries_are_committed_by_counting_replicas() {
    // Figure 8: an entry of term 2 on a majority is not committed by a leader of term 4 ...
    let state = PersistentState {
        current_term: Term(3),
        voted_for: None,
        log: log_of(&[1, 2]),
    };
    let mut leader = core_with(0, 3, state.clone(), MutationSet::default());
    elect(&mut leader);
    let effects = replicate_everything_to(&mut leader, n(1));
    assert_eq!(
        leader.commit_index(),
        LogIndex(0),
        "old-term entry committed by counting: {effects:?}"
    );
    // ... until an entry of its own term is replicated, which commits both.
    leader.propose(Command::from_text("new")).expect("leader");
    let effects = replicate_everything_to(&mut leader, n(1));
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
    replicate_everything_to(&mut broken, n(1));
    assert_eq!(
        broken.commit_index(),
        LogIndex(2),
        "the mutation commits the old entry"
    );
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
        let request = leader.heartbeat_request(n(1)).expect("heartbeat");
        let reply = Response::AppendEntries(AppendEntriesReply {
            term: Term(9),
            success: false,
            conflict: None,
        });
        leader.handle_response(n(1), &request, Some(&reply));
        assert_eq!(leader.role(), expected);
    }
}

#[test]
fn propose_on_a_follower_is_refused_with_a_hint() {
    let mut follower = core(1, 3);
    follower.handle_request(&Request::AppendEntries(AppendEntriesArgs {
        term: Term(1),
        leader: n(0),
        prev_log_index: LogIndex(0),
        prev_log_term: Term(0),
        entries: vec![],
        leader_commit: LogIndex(0),
    }));
    assert_eq!(
        follower.propose(Command::default()).unwrap_err(),
        NotLeader {
            leader_hint: Some(n(0))
        }
    );
}

#[test]
fn a_single_node_elects_itself_and_commits_alone() {
    let mut solo = core(0, 1);
    solo.start_election();
    assert_eq!(solo.role(), Role::Leader);
    let (index, term, effects) = solo.propose(Command::from_text("x")).unwrap();
    assert_eq!((index, term), (LogIndex(1), Term(1)));
    assert!(effects
        .as_slice()
        .contains(&Effect::CommitAdvanced(LogIndex(1))));
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
        };
        let mut follower = core_with(1, 3, state, mutations);
        follower.handle_request(&Request::AppendEntries(AppendEntriesArgs {
            term: Term(1),
            leader: n(0),
            prev_log_index: LogIndex(1),
            prev_log_term: Term(1),
            entries: vec![],
            leader_commit: LogIndex(0),
        }));
        assert_eq!(follower.persistent().log.last_index(), expected_last);
    }
}

#[test]
fn a_vote_refused_within_the_lease_does_not_adopt_the_term() {
    let follower = core(1, 3);
    let effects = follower.refuse_vote_within_lease();
    assert_eq!(
        reply_of(&effects),
        Response::RequestVote(RequestVoteReply {
            term: Term(0),
            vote_granted: false
        })
    );
    assert_eq!(follower.term(), Term(0));
}

#[test]
fn a_leader_that_steps_down_keeps_its_term() {
    let mut leader = core(0, 3);
    elect(&mut leader);
    let effects = leader.step_down();
    assert_eq!(leader.role(), Role::Follower);
    assert_eq!(leader.term(), Term(1));
    assert_eq!(effects.as_slice(), &[Effect::RoleChanged(Role::Follower)]);
}

#[test]
fn a_pre_vote_changes_nothing_and_only_a_majority_of_yes_starts_the_election() {
    let mut candidate = core(0, 3);
    let effects = candidate.start_pre_vote();
    assert!(
        !effects.as_slice().contains(&Effect::Persist),
        "a pre-vote persists nothing"
    );
    assert_eq!(
        (candidate.term(), candidate.role()),
        (Term(0), Role::PreCandidate)
    );
    let Some(Request::RequestVote(args)) = candidate.next_request(n(1)) else {
        panic!()
    };
    assert!(args.pre_vote && args.term == Term(1));
    // The voter answers without adopting the term or recording a vote.
    let mut voter = core(1, 3);
    let answer = voter.handle_request(&Request::RequestVote(args.clone()));
    assert_eq!(
        reply_of(&answer),
        Response::RequestVote(RequestVoteReply {
            term: Term(0),
            vote_granted: true
        })
    );
    assert_eq!(
        (voter.term(), voter.persistent().voted_for),
        (Term(0), None)
    );
    // One yes is a majority of three: the real election starts, persisted first.
    let effects =
        candidate.handle_response(n(1), &Request::RequestVote(args), Some(&reply_of(&answer)));
    assert_eq!(
        (candidate.term(), candidate.role()),
        (Term(1), Role::Candidate)
    );
    assert_eq!(effects.as_slice()[0], Effect::Persist);
}
