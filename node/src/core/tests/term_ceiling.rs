//! Terms above [`Term::HIGHEST`]: a forged request or reply carrying one is refused and changes
//! nothing, so no message can leave a cluster without terms to elect in.

use super::*;

fn forged_vote(term: Term) -> Request {
    Request::RequestVote(RequestVoteArgs {
        pre_vote: false,
        // A transfer's vote is granted even within a lease: the forger's strongest request.
        transfer: true,
        term,
        candidate: n(1),
        last_log_index: LogIndex(1_000),
        last_log_term: Term(0),
    })
}

#[test]
fn a_request_above_the_ceiling_is_refused_and_its_term_never_taken() {
    let mut voter = core(2, 3);
    for term in [Term(Term::HIGHEST.0 + 1), Term(u64::MAX)] {
        let effects = voter.handle_request(after_boot(), &forged_vote(term));
        assert_eq!(
            effects.as_slice(),
            &[Effect::Reply(Response::RequestVote(RequestVoteReply {
                term: Term(0),
                vote_granted: false,
            }))],
            "refused with nothing persisted or reset"
        );
        assert_eq!(voter.term(), Term(0));
        assert_eq!(voter.persistent().voted_for, None);
    }
}

#[test]
fn a_reply_above_the_ceiling_counts_as_no_reply() {
    let mut candidate = core(0, 3);
    candidate.start_election(t(500));
    let Some((_, request)) = candidate.next_request(n(1), t(500)) else {
        panic!("a candidate asks each peer for a vote")
    };
    let forged = Response::RequestVote(RequestVoteReply {
        term: Term(u64::MAX),
        vote_granted: false,
    });
    candidate.handle_response(t(501), n(1), &request, Some(&forged));
    assert_eq!(candidate.term(), Term(1), "the forged term was not taken");
}

#[test]
fn a_node_at_the_ceiling_still_elects() {
    let mut voter = core(2, 3);
    let effects = voter.handle_request(after_boot(), &forged_vote(Term::HIGHEST));
    assert_eq!(reply_of(&effects), vote_granted(Term::HIGHEST));
    assert_eq!(voter.term(), Term::HIGHEST);
    voter.start_election(t(10_000));
    assert_eq!(voter.term(), Term(Term::HIGHEST.0 + 1));
}
