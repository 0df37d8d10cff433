//! ReadIndex rounds: a read needs a commit in the leader's term, and a round of AppendEntries
//! sent after it and answered by a majority; reads that arrive together share a round.

use super::*;

fn done(effects: &Effects) -> Vec<(ReadTicket, ReadOutcome)> {
    effects
        .as_slice()
        .iter()
        .filter_map(|effect| match effect {
            Effect::ReadsDone(outcomes) => Some(outcomes.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[test]
fn a_read_needs_a_leader_with_a_commit_in_its_term() {
    let mut follower = core(1, 3);
    assert!(matches!(
        follower.request_read(),
        Err(ReadIndexError::NotLeader(_))
    ));
    let mut leader = core(0, 3);
    elect(&mut leader);
    assert_eq!(
        leader.request_read().unwrap_err(),
        ReadIndexError::NoCommitInTerm
    );
}

#[test]
fn a_read_is_confirmed_by_a_majority_answering_a_round_sent_after_it() {
    let mut leader = leader_with_a_commit_in_its_term(5, MutationSet::default());
    // Heartbeats sent before the read cannot confirm it, even answered by a majority after it
    // arrived (the leader may have been deposed in between): their answers carry no round, or
    // an earlier one, never the read's.
    let early = [n(1), n(2)].map(|peer| (peer, heartbeat_now(&mut leader, peer, t(2_000))));
    let (ticket, effects) = leader.request_read().expect("leader");
    assert_eq!(effects.as_slice(), &[Effect::WakeHeartbeaters]);
    let term = leader.term();
    for (peer, early) in &early {
        let late = leader.handle_response(t(2_001), *peer, early, Some(&success(early, term)));
        assert!(
            done(&late).is_empty(),
            "answered a request sent before the read"
        );
    }
    // The round goes out at once, without waiting for the heartbeat interval.
    let first = heartbeat_now(&mut leader, n(1), t(2_002));
    let second = heartbeat_now(&mut leader, n(2), t(2_002));
    let effects = leader.handle_response(t(2_003), n(1), &first, Some(&success(&first, term)));
    assert!(done(&effects).is_empty(), "2 of 5 is no majority");
    let effects = leader.handle_response(t(2_004), n(2), &second, Some(&success(&second, term)));
    assert_eq!(
        done(&effects),
        vec![(ticket, ReadOutcome::Confirmed(LogIndex(1)))]
    );
}

#[test]
fn reads_that_arrive_during_a_round_share_the_next_one() {
    let mut leader = leader_with_a_commit_in_its_term(3, MutationSet::default());
    let term = leader.term();
    let (first, _) = leader.request_read().expect("leader");
    let round_one = heartbeat_now(&mut leader, n(1), t(2_000));
    let (second, effects) = leader.request_read().expect("leader");
    let (third, _) = leader.request_read().expect("leader");
    assert!(effects.is_empty(), "waits for the next round");
    let effects =
        leader.handle_response(t(2_001), n(1), &round_one, Some(&success(&round_one, term)));
    assert_eq!(
        done(&effects),
        vec![(first, ReadOutcome::Confirmed(LogIndex(1)))]
    );
    assert!(
        effects.as_slice().contains(&Effect::WakeHeartbeaters),
        "the next round starts"
    );
    let round_two = heartbeat_now(&mut leader, n(2), t(2_002));
    let effects =
        leader.handle_response(t(2_003), n(2), &round_two, Some(&success(&round_two, term)));
    assert_eq!(
        done(&effects),
        vec![
            (second, ReadOutcome::Confirmed(LogIndex(1))),
            (third, ReadOutcome::Confirmed(LogIndex(1)))
        ]
    );
}

#[test]
fn a_leader_that_steps_down_fails_its_waiting_reads() {
    let mut leader = leader_with_a_commit_in_its_term(3, MutationSet::default());
    let (ticket, _) = leader.request_read().expect("leader");
    let request = heartbeat_now(&mut leader, n(1), t(2_000));
    let newer = Response::AppendEntries(AppendEntriesReply {
        term: Term(7),
        success: false,
        conflict: None,
        read_round: 1,
    });
    let effects = leader.handle_response(t(2_001), n(1), &request, Some(&newer));
    assert_eq!(
        done(&effects),
        vec![(ticket, ReadOutcome::Failed(ReadIndexError::NotConfirmed))]
    );
}

#[test]
fn a_cancelled_read_is_not_answered_and_the_broken_variant_skips_the_round() {
    let mut leader = leader_with_a_commit_in_its_term(3, MutationSet::default());
    let term = leader.term();
    let (ticket, _) = leader.request_read().expect("leader");
    leader.cancel_read(ticket);
    let request = heartbeat_now(&mut leader, n(1), t(2_000));
    let effects = leader.handle_response(t(2_001), n(1), &request, Some(&success(&request, term)));
    assert!(done(&effects).is_empty(), "{effects:?}");
    // Cancelling one read of a round, or of the reads waiting for the next, leaves the others.
    let (kept_in_round, _) = leader.request_read().expect("leader");
    let (cancelled_in_round, _) = leader.request_read().expect("leader");
    let round = heartbeat_now(&mut leader, n(1), t(2_002));
    let (kept_waiting, _) = leader.request_read().expect("leader");
    let (cancelled_waiting, _) = leader.request_read().expect("leader");
    leader.cancel_read(cancelled_in_round);
    leader.cancel_read(cancelled_waiting);
    let effects = leader.handle_response(t(2_003), n(1), &round, Some(&success(&round, term)));
    assert_eq!(
        done(&effects),
        vec![(kept_in_round, ReadOutcome::Confirmed(LogIndex(1)))]
    );
    let next = heartbeat_now(&mut leader, n(2), t(2_004));
    let effects = leader.handle_response(t(2_005), n(2), &next, Some(&success(&next, term)));
    assert_eq!(
        done(&effects),
        vec![(kept_waiting, ReadOutcome::Confirmed(LogIndex(1)))]
    );

    let mut broken =
        leader_with_a_commit_in_its_term(3, MutationSet::only(Mutation::ReadIndexWithoutRound));
    let (ticket, effects) = broken.request_read().expect("leader");
    assert_eq!(
        done(&effects),
        vec![(ticket, ReadOutcome::Confirmed(LogIndex(1)))],
        "confirmed without asking anyone"
    );
}
