//! Persist path: two candidates ask one node for its vote in the same term, on two threads.
//! Under every interleaving: never two votes in one term, and every granted vote is covered by
//! what was persisted before the reply left.
#![cfg(loom)]

use loom_tests::{LoomClock, RecordingPersister};
use node::messages::{Request, RequestVoteArgs, Response};
use node::sync::{thread, Arc};
use node::{
    channel, ClockRef, Config, LogIndex, Mutation, MutationSet, NoObserver, Node, NodeId,
    NodeParams, Term, Transport, TransportError, Workers,
};
use std::time::Duration;

struct NoNetwork;

impl Transport for NoNetwork {
    fn call(
        &self,
        to: NodeId,
        _request: Request,
        _timeout: Duration,
    ) -> Result<Response, TransportError> {
        Err(TransportError::NoReply(to))
    }
}

fn vote_request(candidate: u32) -> Request {
    Request::RequestVote(RequestVoteArgs {
        term: Term(1),
        candidate: NodeId(candidate),
        last_log_index: LogIndex(0),
        last_log_term: Term(0),
        pre_vote: false,
    })
}

/// The model: explores every interleaving of the two handler threads (exhaustive: two threads,
/// a handful of lock sections, no preemption bound needed). Panics on a violation.
fn two_candidates_one_voter(mutations: MutationSet) {
    static EXECUTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    EXECUTIONS.store(0, std::sync::atomic::Ordering::SeqCst);
    loom::model(move || {
        EXECUTIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let clock: ClockRef = Arc::new(LoomClock::new());
        let disk = Arc::new(RecordingPersister::new());
        let (apply_sender, _receiver) = channel(&clock, 4, "apply");
        let node = Node::new(NodeParams {
            id: NodeId(2),
            peers: vec![NodeId(0), NodeId(1)],
            transport: Arc::new(NoNetwork),
            persister: disk.clone(),
            clock,
            apply_sender,
            config: Config {
                mutations: mutations.clone(),
                ..Config::default()
            },
            observer: Arc::new(NoObserver),
            workers: Workers::NONE,
        })
        .expect("valid node");
        let handles: Vec<_> = [0u32, 1]
            .into_iter()
            .map(|candidate| {
                let handler = node.rpc_handler();
                let disk = disk.clone();
                thread::spawn(move || {
                    let reply = handler.handle(vote_request(candidate)).expect("alive");
                    // The reply leaves now: what was durable at this moment must cover it.
                    let durable = disk.save_count();
                    (candidate, reply, durable)
                })
            })
            .collect();
        let mut granted = Vec::new();
        for handle in handles {
            let (candidate, reply, durable) = handle.join().expect("handler thread");
            let Response::RequestVote(reply) = reply else {
                panic!("wrong reply")
            };
            if reply.vote_granted {
                let state = disk.state_after(durable);
                assert_eq!(
                    (state.current_term, state.voted_for),
                    (Term(1), Some(NodeId(candidate))),
                    "the vote for n{candidate} left before it was persisted"
                );
                granted.push(candidate);
            }
        }
        assert!(granted.len() <= 1, "two votes in one term: {granted:?}");
        assert_eq!(
            granted.len(),
            1,
            "a free voter grants one of two equal candidates"
        );
        node.kill();
    });
    eprintln!(
        "persist path: {} executions explored",
        EXECUTIONS.load(std::sync::atomic::Ordering::SeqCst)
    );
}

#[test]
fn two_candidates_in_one_term_never_both_get_the_vote_and_every_grant_was_persisted_first() {
    two_candidates_one_voter(MutationSet::default());
}

#[test]
fn a_node_that_replies_before_persisting_is_rejected() {
    let outcome = std::panic::catch_unwind(|| {
        two_candidates_one_voter(MutationSet::only(Mutation::ReplyBeforePersist))
    });
    let message = match outcome {
        Ok(()) => panic!("reply-before-persist survived every interleaving: the model cannot fail"),
        Err(panic) => panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    };
    assert!(
        message.contains("left before it was persisted"),
        "{message}"
    );
}
