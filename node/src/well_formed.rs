//! What every message a correct node sends satisfies, whatever the receiver's state: its terms
//! within [`Term::HIGHEST`], no entry from a term after its sender's, a log's terms in order, a
//! reply that answers the request it came back for. A message that breaks one is a protocol
//! error (forged, corrupt, or from a different program): the wire refuses it before it reaches
//! a node, and the node's core refuses a term above the ceiling on its own
//! ([`crate::core::RaftCore::handle_request`]), so neither a peer nor a bug can exhaust the terms.

use crate::messages::{
    AppendEntriesReply, InstallSnapshotReply, Request, RequestVoteReply, Response, TimeoutNowReply,
};
use crate::Term;

/// Why a message is not one a correct node sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// A term above [`Term::HIGHEST`].
    #[error("{field} {} is above the highest term a node takes ({})", .term.0, Term::HIGHEST.0)]
    TermAboveCeiling {
        /// Which field.
        field: &'static str,
        /// What it held.
        term: Term,
    },
    /// A term that describes the sender's log is after the sender's own term.
    #[error("{field} {} is after the sender's term {}", .term.0, .sender.0)]
    AfterSendersTerm {
        /// Which field.
        field: &'static str,
        /// What it held.
        term: Term,
        /// The sender's term.
        sender: Term,
    },
    /// An entry's term is below the one before it: a log's terms never go down.
    #[error("entry {position} has term {} after term {}", .term.0, .before.0)]
    TermsOutOfOrder {
        /// The entry's position in the request (0 is the first).
        position: usize,
        /// Its term.
        term: Term,
        /// The term before it.
        before: Term,
    },
}

/// Checks `request` (see the module's documentation).
pub fn check_request(request: &Request) -> Result<(), Malformed> {
    let sender = request.term();
    within_ceiling("term", sender)?;
    match request {
        Request::RequestVote(args) => not_after("last log term", args.last_log_term, sender),
        Request::AppendEntries(args) => {
            not_after("previous log term", args.prev_log_term, sender)?;
            let mut before = args.prev_log_term;
            for (position, entry) in args.entries.iter().enumerate() {
                not_after("an entry's term", entry.term, sender)?;
                if entry.term < before {
                    return Err(Malformed::TermsOutOfOrder {
                        position,
                        term: entry.term,
                        before,
                    });
                }
                before = entry.term;
            }
            Ok(())
        }
        Request::InstallSnapshot(args) => {
            not_after("snapshot's last term", args.last_included_term, sender)
        }
        Request::TimeoutNow(args) => not_after("last log term", args.last_log_term, sender),
    }
}

/// Checks `response` (see the module's documentation).
pub fn check_response(response: &Response) -> Result<(), Malformed> {
    within_ceiling("term", response.term())?;
    if let Response::AppendEntries(AppendEntriesReply {
        conflict: Some(conflict),
        term,
        ..
    }) = response
    {
        if let Some(conflicting) = conflict.term {
            not_after("conflicting term", conflicting, *term)?;
        }
    }
    Ok(())
}

/// Whether `response` is of the kind that answers `request`.
pub fn answers(response: &Response, request: &Request) -> bool {
    matches!(
        (request, response),
        (Request::RequestVote(_), Response::RequestVote(_))
            | (Request::AppendEntries(_), Response::AppendEntries(_))
            | (Request::InstallSnapshot(_), Response::InstallSnapshot(_))
            | (Request::TimeoutNow(_), Response::TimeoutNow(_))
    )
}

/// The answer that refuses `request` and changes nothing: the receiver's `term`, no vote, no
/// entry taken, no snapshot byte held. What a node answers a request it will not act on.
pub fn refusal(request: &Request, term: Term) -> Response {
    match request {
        Request::RequestVote(_) => Response::RequestVote(RequestVoteReply {
            term,
            vote_granted: false,
        }),
        Request::AppendEntries(args) => Response::AppendEntries(AppendEntriesReply {
            term,
            success: false,
            conflict: None,
            read_round: args.read_round,
        }),
        Request::InstallSnapshot(args) => Response::InstallSnapshot(InstallSnapshotReply {
            term,
            received: 0,
            read_round: args.read_round,
        }),
        Request::TimeoutNow(_) => Response::TimeoutNow(TimeoutNowReply { term }),
    }
}

fn within_ceiling(field: &'static str, term: Term) -> Result<(), Malformed> {
    if term > Term::HIGHEST {
        return Err(Malformed::TermAboveCeiling { field, term });
    }
    Ok(())
}

fn not_after(field: &'static str, term: Term, sender: Term) -> Result<(), Malformed> {
    if term > sender {
        return Err(Malformed::AfterSendersTerm {
            field,
            term,
            sender,
        });
    }
    Ok(())
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::messages::{AppendEntriesArgs, RequestVoteArgs};
    use crate::{Command, Entry, LogIndex, NodeId};

    fn vote(term: u64, last_log_term: u64) -> Request {
        Request::RequestVote(RequestVoteArgs {
            term: Term(term),
            candidate: NodeId(1),
            last_log_index: LogIndex(3),
            last_log_term: Term(last_log_term),
            pre_vote: false,
            transfer: false,
        })
    }

    fn append(term: u64, prev_log_term: u64, entries: &[u64]) -> Request {
        Request::AppendEntries(AppendEntriesArgs {
            term: Term(term),
            leader: NodeId(0),
            prev_log_index: LogIndex(1),
            prev_log_term: Term(prev_log_term),
            entries: entries
                .iter()
                .map(|&term| Entry {
                    term: Term(term),
                    command: Command::from_text("x"),
                })
                .collect(),
            leader_commit: LogIndex(1),
            read_round: 7,
            sent_at: threadsim::Instant::ZERO,
        })
    }

    #[test]
    fn what_a_correct_node_sends_passes() {
        assert_eq!(check_request(&vote(5, 4)), Ok(()));
        assert_eq!(check_request(&vote(Term::HIGHEST.0, 3)), Ok(()));
        assert_eq!(check_request(&append(5, 2, &[2, 4, 4, 5])), Ok(()));
        assert_eq!(check_request(&append(5, 5, &[])), Ok(()));
    }

    #[test]
    fn a_term_above_the_ceiling_is_refused_whatever_the_message() {
        assert!(matches!(
            check_request(&vote(u64::MAX, 0)),
            Err(Malformed::TermAboveCeiling { field: "term", .. })
        ));
        assert!(check_request(&append(Term::HIGHEST.0 + 1, 0, &[])).is_err());
        let reply = Response::RequestVote(RequestVoteReply {
            term: Term(u64::MAX),
            vote_granted: true,
        });
        assert!(check_response(&reply).is_err());
        let message = check_response(&reply).unwrap_err().to_string();
        assert!(message.contains("above the highest term"), "{message}");
    }

    #[test]
    fn a_log_from_the_future_or_out_of_order_is_refused() {
        assert!(matches!(
            check_request(&vote(5, 6)),
            Err(Malformed::AfterSendersTerm { .. })
        ));
        assert!(matches!(
            check_request(&append(5, 2, &[3, 6])),
            Err(Malformed::AfterSendersTerm { .. })
        ));
        assert!(matches!(
            check_request(&append(5, 3, &[4, 2])),
            Err(Malformed::TermsOutOfOrder { position: 1, .. })
        ));
        assert!(matches!(
            check_request(&append(5, 3, &[2])),
            Err(Malformed::TermsOutOfOrder { position: 0, .. })
        ));
    }

    #[test]
    fn a_refusal_answers_its_request_and_grants_nothing() {
        for request in [vote(5, 4), append(5, 2, &[3])] {
            let refusal = refusal(&request, Term(9));
            assert!(answers(&refusal, &request));
            assert_eq!(refusal.term(), Term(9));
            assert_eq!(check_response(&refusal), Ok(()));
        }
        assert!(!answers(&refusal(&vote(5, 4), Term(1)), &append(5, 2, &[])));
    }
}
