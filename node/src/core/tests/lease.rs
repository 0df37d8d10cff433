//! Lease reads: a lease counts from the send time of heartbeats a majority answered, lasts the
//! minimum election timeout shrunk by the drift bound, and ends with the leadership.

use super::*;

/// `peer` answers a heartbeat the leader sends at `sent`, the answer arriving at `answered`.
fn answer_heartbeat(leader: &mut RaftCore, peer: NodeId, sent: Instant, answered: Instant) {
    let heartbeat = heartbeat_now(leader, peer, sent);
    let term = leader.term();
    leader.handle_response(answered, peer, &heartbeat, Some(&success(&heartbeat, term)));
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn the_lease_is_the_minimum_election_timeout_shrunk_by_the_drift_bound() {
    let leader = core(0, 3);
    // 300 ms * 0.9 / 1.1 with the default bound of 10%.
    assert_eq!(leader.lease_duration(), Duration::from_micros(245_454));
    let broken = core_with(
        0,
        3,
        PersistentState::default(),
        MutationSet::only(Mutation::LeaseWithoutDriftMargin),
    );
    assert_eq!(broken.lease_duration(), ms(300));
}

#[test]
fn within_the_drift_bound_a_lease_ends_before_any_acknowledging_follower_may_vote() {
    // In true time: the leader's lease lasts `lease / leader_rate` after the send time; a
    // follower that received the heartbeat at or after it refuses votes for `timeout /
    // follower_rate`. The worst case is a slow leader and a fast follower.
    let drift = Config::default().max_clock_drift_ppm as f64 / 1e6;
    let timeout = Config::default().election_timeout_min.as_secs_f64();
    let (slowest, fastest) = (1.0 - drift, 1.0 + drift);
    let refusal = timeout / fastest;
    let correct = core(0, 3).lease_duration().as_secs_f64() / slowest;
    assert!(
        correct <= refusal,
        "{correct} s of lease, {refusal} s of refusal"
    );
    let without_margin = timeout / slowest;
    assert!(without_margin > refusal, "the margin is what makes it safe");
}

#[test]
fn a_lease_counts_from_the_send_time_of_heartbeats_a_majority_answered() {
    let mut leader = leader_with_a_commit_in_its_term(5, MutationSet::default());
    let lease = leader.lease_duration();
    assert_eq!(leader.lease_read(t(2_050)), Err(ReadIndexError::NoLease));
    answer_heartbeat(&mut leader, n(1), t(2_000), t(2_050));
    assert_eq!(
        leader.lease_read(t(2_050)),
        Err(ReadIndexError::NoLease),
        "2 of 5 is no majority"
    );
    answer_heartbeat(&mut leader, n(2), t(2_010), t(2_060));
    // The later of the two answers counts only from the earlier send: both followers answered
    // requests sent at or after 2.000 s.
    assert_eq!(leader.lease_until(), Some(t(2_000) + lease));
    assert_eq!(leader.lease_read(t(2_060)), Ok(LogIndex(1)));
    assert_eq!(
        leader.lease_read(t(2_000) + lease),
        Err(ReadIndexError::NoLease)
    );
}

#[test]
fn the_answer_time_variant_counts_from_when_the_answers_arrived() {
    let mut broken =
        leader_with_a_commit_in_its_term(3, MutationSet::only(Mutation::LeaseFromAnswerTime));
    answer_heartbeat(&mut broken, n(1), t(2_000), t(2_900));
    assert_eq!(
        broken.lease_until(),
        Some(t(2_900) + broken.lease_duration())
    );
    let mut correct = leader_with_a_commit_in_its_term(3, MutationSet::default());
    answer_heartbeat(&mut correct, n(1), t(2_000), t(2_900));
    assert_eq!(
        correct.lease_read(t(2_900)),
        Err(ReadIndexError::NoLease),
        "an answer that took 900 ms confirms nothing now"
    );
}

#[test]
fn a_read_needs_a_commit_in_the_leaders_term_and_leadership() {
    let follower = core(1, 3);
    assert!(matches!(
        follower.lease_read(t(0)),
        Err(ReadIndexError::NotLeader(_))
    ));
    let mut leader = core(0, 3);
    elect(&mut leader);
    assert_eq!(
        leader.lease_read(t(1_000)),
        Err(ReadIndexError::NoCommitInTerm)
    );
}

#[test]
fn stepping_down_ends_the_lease_unless_the_variant_keeps_it() {
    for (mutations, kept) in [
        (MutationSet::default(), false),
        (MutationSet::only(Mutation::LeaseKeptAfterStepDown), true),
    ] {
        let mut leader = leader_with_a_commit_in_its_term(3, mutations);
        answer_heartbeat(&mut leader, n(1), t(2_000), t(2_001));
        assert_eq!(leader.lease_read(t(2_002)), Ok(LogIndex(1)));
        leader.step_down(t(2_002));
        assert_eq!(leader.lease_read(t(2_003)).is_ok(), kept, "kept: {kept}");
        // A kept lease still runs out; then the deposed leader answers as the follower it is.
        let expired = t(2_000) + leader.lease_duration();
        assert!(
            matches!(
                leader.lease_read(expired),
                Err(ReadIndexError::NotLeader(_))
            ),
            "kept: {kept}"
        );
    }
}

#[test]
fn a_node_that_starts_refuses_votes_for_a_minimum_election_timeout() {
    let voter = core(1, 3);
    let timeout = Config::default().election_timeout_min;
    assert!(voter.within_lease(t(0)));
    assert!(voter.within_lease(t(0) + (timeout - ms(1))));
    assert!(!voter.within_lease(t(0) + timeout));
}
