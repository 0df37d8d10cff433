//! The rules that depend on time: the election deadline, the lease, check-quorum, heartbeats.

use super::*;

#[test]
fn an_election_starts_only_once_the_randomized_deadline_has_passed() {
    let mut follower = core(1, 3);
    let deadline = follower.election_deadline();
    let config = Config::default();
    assert!(deadline >= t(0) + config.election_timeout_min);
    assert!(deadline <= t(0) + config.election_timeout_max);
    assert_eq!(follower.next_tick(t(0)), deadline);
    assert!(follower.tick(t(1)).is_empty(), "nothing is due yet");
    let effects = follower.tick(deadline);
    assert!(effects
        .as_slice()
        .contains(&Effect::RoleChanged(Role::PreCandidate)));
    assert!(
        follower.election_deadline() > deadline,
        "a new deadline for the pre-vote"
    );
}

#[test]
fn a_heartbeat_pushes_the_deadline_and_an_election_before_it_is_reported() {
    let mut follower = core(1, 3);
    let first = follower.election_deadline();
    let later = Instant::from_epoch(first.since_epoch() - Duration::from_millis(1));
    follower.handle_request(later, &heartbeat_from(0, 1));
    assert!(follower.election_deadline() > first);
    assert!(
        !follower.election_due(first),
        "the heartbeat moved the deadline"
    );
    assert!(follower.tick(first).is_empty());
    // A ticker that decided before the heartbeat and acts after it (check-then-act).
    let effects = follower.start_pre_vote(first);
    assert!(
        effects.as_slice().iter().any(|e| matches!(
            e, Effect::InvariantViolated(text) if text.contains("although a heartbeat had pushed the deadline")
        )),
        "{effects:?}"
    );
}

#[test]
fn a_deadline_drawn_before_the_one_the_ticker_waits_for_wakes_it() {
    let mut voter = core(2, 3);
    // A first vote once the node grants votes; the ticker then sleeps until its deadline. Grant
    // votes until one draws an earlier deadline than that (the timeout range makes it likely
    // within a few draws).
    let first_vote = Request::RequestVote(RequestVoteArgs {
        pre_vote: false,
        transfer: false,
        term: Term(1),
        candidate: n(0),
        last_log_index: LogIndex(0),
        last_log_term: Term(0),
    });
    voter.handle_request(after_boot(), &first_vote);
    let waits = voter.next_tick(after_boot());
    let mut woke = false;
    for term in 2..50 {
        let effects = voter.handle_request(
            t(300 + term),
            &Request::RequestVote(RequestVoteArgs {
                pre_vote: false,
                transfer: false,
                term: Term(term),
                candidate: n(0),
                last_log_index: LogIndex(0),
                last_log_term: Term(0),
            }),
        );
        let wake = effects.as_slice().contains(&Effect::WakeTicker);
        assert_eq!(
            wake,
            voter.election_deadline() < waits,
            "a wake-up exactly when the new deadline is earlier"
        );
        woke |= wake;
    }
    assert!(woke, "no draw fell before the first deadline");
}

#[test]
fn a_vote_for_a_higher_term_within_the_lease_is_refused_without_adopting_the_term() {
    let mut follower = core(1, 3);
    follower.handle_request(t(100), &heartbeat_from(0, 1));
    let lease = Config::default().election_timeout_min;
    let ask = |pre_vote| {
        Request::RequestVote(RequestVoteArgs {
            pre_vote,
            transfer: false,
            term: Term(2),
            candidate: n(2),
            last_log_index: LogIndex(9),
            last_log_term: Term(9),
        })
    };
    for pre_vote in [true, false] {
        let within = t(99) + lease;
        let effects = follower.handle_request(within, &ask(pre_vote));
        assert_eq!(
            reply_of(&effects),
            Response::RequestVote(RequestVoteReply {
                term: Term(1),
                vote_granted: false
            }),
            "pre-vote {pre_vote}"
        );
        assert_eq!(follower.term(), Term(1), "the term is not adopted");
    }
    // Once the lease has run out, a disruptive-looking candidate may be the new leader.
    let effects = follower.handle_request(t(100) + lease, &ask(false));
    assert_eq!(reply_of(&effects), vote_granted(Term(2)));
}

#[test]
fn a_leader_that_hears_from_no_majority_within_the_quorum_timeout_steps_down() {
    let config = Config::default();
    let mut leader = core(0, 3);
    elect_at(&mut leader, t(1_000));
    let quorum_timeout = config.leader_quorum_timeout;
    // One follower keeps answering: with the leader that is a majority of three.
    for step in 1..=5u64 {
        let now = t(1_000) + quorum_timeout * step as u32 / 2;
        let request = heartbeat_now(&mut leader, n(1), now);
        let term = leader.term();
        leader.handle_response(now, n(1), &request, Some(&success(&request, term)));
        assert!(leader.tick(now).is_empty(), "a majority answered");
        assert_eq!(leader.role(), Role::Leader);
        assert_eq!(leader.next_tick(now), now + config.election_timeout_min);
    }
    // Then nobody answers for a whole quorum timeout.
    let silent_until = t(1_000) + quorum_timeout * 5 / 2 + quorum_timeout;
    let effects = leader.tick(silent_until);
    assert!(effects
        .as_slice()
        .contains(&Effect::RoleChanged(Role::Follower)));
    assert_eq!(leader.term(), Term(1), "check-quorum keeps the term");
}

#[test]
fn heartbeats_are_due_every_interval_and_only_from_a_leader() {
    let interval = Config::default().heartbeat_interval;
    let mut follower = core(1, 3);
    assert_eq!(
        follower.heartbeat(n(0), t(5)),
        HeartbeatDue::WaitUntil(None)
    );
    let mut leader = core(0, 3);
    elect_at(&mut leader, t(1_000));
    heartbeat_now(&mut leader, n(1), t(1_000));
    assert_eq!(
        leader.heartbeat(n(1), t(1_010)),
        HeartbeatDue::WaitUntil(Some(t(1_000) + interval))
    );
    heartbeat_now(&mut leader, n(1), t(1_000) + interval);
}

#[test]
fn the_core_times_itself_by_the_configuration_it_was_given() {
    let config = Config {
        election_timeout_min: Duration::from_millis(1000),
        election_timeout_max: Duration::from_millis(1000),
        ..Config::default()
    };
    let core = RaftCore::new(
        n(1),
        vec![n(0), n(2)],
        PersistentState::default(),
        config,
        t(0),
    );
    assert_eq!(
        core.config().election_timeout_min,
        Duration::from_millis(1000)
    );
    assert_eq!(core.election_deadline(), t(1000));
}
