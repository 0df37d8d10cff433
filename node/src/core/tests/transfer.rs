//! Handing leadership over (thesis §3.10): proposals paused, the target brought up to the
//! leader's log before TimeoutNow, the lease given up, the target's election not refused for
//! a lease, the transfer abandoned after a minimum election timeout.

use super::*;
use crate::core::TransferRefused;

/// n0 of three, leading with an entry of its term committed by n1 only: n2 lacks it.
fn leader_with_n2_behind(mutations: MutationSet) -> RaftCore {
    let mut leader = core_with(0, 3, PersistentState::default(), mutations);
    elect(&mut leader);
    leader.propose(Command::from_text("no-op")).expect("leads");
    let (_, request) = leader.next_request(n(1), t(1_000)).expect("the entry");
    let term = leader.term();
    leader.handle_response(t(1_001), n(1), &request, Some(&success(&request, term)));
    assert_eq!(leader.commit_index(), LogIndex(1));
    leader
}

fn is_timeout_now(request: &Request) -> bool {
    matches!(request, Request::TimeoutNow(_))
}

#[test]
fn the_target_gets_the_log_before_timeout_now_and_proposals_wait() {
    let mut leader = leader_with_n2_behind(MutationSet::default());
    let effects = leader.transfer_leadership(t(1_002), n(2)).expect("a voter");
    assert!(effects.as_slice().contains(&Effect::WakePeers));
    assert_eq!(leader.transferring_to(), Some(n(2)));
    assert_eq!(
        leader.propose(Command::from_text("later")),
        Err(ProposeError::NotLeader(NotLeader {
            leader_hint: Some(n(2))
        })),
        "proposals wait, pointing at the target"
    );
    let (_, append) = leader.next_request(n(2), t(1_002)).expect("the entry");
    assert!(
        matches!(&append, Request::AppendEntries(args) if args.entries.len() == 1),
        "the missing entry first: {append:?}"
    );
    let term = leader.term();
    let effects = leader.handle_response(t(1_003), n(2), &append, Some(&success(&append, term)));
    assert!(
        effects.as_slice().contains(&Effect::WakePeers),
        "caught up: TimeoutNow is due"
    );
    let (_, timeout_now) = leader.next_request(n(2), t(1_003)).expect("TimeoutNow");
    let Request::TimeoutNow(args) = &timeout_now else {
        panic!("not TimeoutNow: {timeout_now:?}");
    };
    assert_eq!(
        (args.last_log_index, args.last_log_term),
        (LogIndex(1), term)
    );
    assert_eq!(leader.lease_until(), None, "the lease is given up");
    assert!(
        leader.next_request(n(2), t(1_003)).is_none(),
        "TimeoutNow once"
    );
}

#[test]
fn transfer_to_behind_sends_timeout_now_at_once() {
    let mut leader = leader_with_n2_behind(MutationSet::only(Mutation::TransferToBehind));
    leader.transfer_leadership(t(1_002), n(2)).expect("a voter");
    let (_, request) = leader.next_request(n(2), t(1_002)).expect("a request");
    assert!(is_timeout_now(&request), "sent before the log: {request:?}");
}

#[test]
fn a_target_behind_is_reported_and_one_caught_up_campaigns_through_the_lease() {
    let leader = leader_with_n2_behind(MutationSet::default());
    let term = leader.term();
    // n2 heard from the leader just now: an ordinary candidate would be refused for the lease.
    let mut target = core(2, 3);
    let mut voter = core(1, 3);
    for follower in [&mut target, &mut voter] {
        let effects = follower.handle_request(t(1_000), &heartbeat_from(0, term.0));
        assert!(matches!(reply_of(&effects), Response::AppendEntries(_)));
    }
    let behind = TimeoutNowArgs {
        term,
        leader: n(0),
        last_log_index: LogIndex(1),
        last_log_term: term,
    };
    let effects = target.handle_request(t(1_001), &Request::TimeoutNow(behind.clone()));
    assert!(
        effects.as_slice().iter().any(
            |effect| matches!(effect, Effect::InvariantViolated(why) if why.contains("behind"))
        ),
        "{effects:?}"
    );

    let mut caught_up = core(2, 3);
    caught_up.handle_request(t(1_000), &heartbeat_from(0, term.0));
    let entry = Request::AppendEntries(AppendEntriesArgs {
        entries: vec![Entry {
            term,
            command: Command::from_text("no-op"),
        }],
        ..match heartbeat_from(0, term.0) {
            Request::AppendEntries(args) => args,
            _ => unreachable!(),
        }
    });
    caught_up.handle_request(t(1_000), &entry);
    let level = TimeoutNowArgs { ..behind };
    let effects = caught_up.handle_request(t(1_001), &Request::TimeoutNow(level));
    assert!(
        !effects
            .as_slice()
            .iter()
            .any(|effect| matches!(effect, Effect::InvariantViolated(_))),
        "{effects:?}"
    );
    assert_eq!(caught_up.role(), Role::Candidate, "no pre-vote");
    assert_eq!(caught_up.term(), term.next());
    let (_, ask) = caught_up
        .next_request(n(1), t(1_001))
        .expect("a vote request");
    let Request::RequestVote(args) = &ask else {
        panic!("not a vote request: {ask:?}");
    };
    assert!(args.transfer);
    let effects = voter.handle_request(t(1_001), &ask);
    assert_eq!(
        reply_of(&effects),
        vote_granted(term.next()),
        "the lease does not refuse it"
    );
    let ordinary = Request::RequestVote(RequestVoteArgs {
        transfer: false,
        term: term.next().next(),
        ..args.clone()
    });
    let mut other = core(1, 3);
    other.handle_request(t(1_000), &heartbeat_from(0, term.0));
    let effects = other.handle_request(t(1_001), &ordinary);
    assert!(
        matches!(
            reply_of(&effects),
            Response::RequestVote(RequestVoteReply {
                vote_granted: false,
                ..
            })
        ),
        "an ordinary candidate is refused within the lease"
    );
}

#[test]
fn a_transfer_that_does_not_end_is_abandoned_and_refusals_are_clear() {
    let mut leader = leader_with_n2_behind(MutationSet::default());
    assert_eq!(
        leader.transfer_leadership(t(1_002), n(0)),
        Err(TransferRefused::AlreadyLeader(n(0)))
    );
    assert_eq!(
        leader.transfer_leadership(t(1_002), n(7)),
        Err(TransferRefused::UnknownNode(n(7)))
    );
    leader.transfer_leadership(t(1_002), n(2)).expect("a voter");
    assert!(matches!(
        leader.transfer_leadership(t(1_002), n(1)),
        Err(TransferRefused::NotLeader(_))
    ));
    let until = t(1_002) + Config::default().election_timeout_min;
    assert_eq!(
        leader.next_tick(t(1_002)),
        until,
        "the ticker wakes to end it"
    );
    leader.tick(until);
    assert_eq!(leader.role(), Role::Leader);
    assert_eq!(leader.transferring_to(), None);
    leader
        .propose(Command::from_text("again"))
        .expect("proposals resume");

    let mut follower = core(1, 3);
    assert!(matches!(
        follower.transfer_leadership(t(0), n(2)),
        Err(TransferRefused::NotLeader(_))
    ));
}
