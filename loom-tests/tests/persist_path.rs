//! Persist path: RPC handlers race on one node, on two threads. Under every interleaving: never
//! two votes in one term, and every reply that promised something (a granted vote, an accepted
//! append) is covered by what was persisted before the reply left, so a node restored from a crash
//! at that moment would keep the promise.
#![cfg(loom)]

use loom_tests::{model_node, panic_message};
use node::messages::{AppendEntriesArgs, Request, RequestVoteArgs, Response};
use node::RecordingPersister;
use node::{Command, Entry, LogIndex, Mutation, MutationSet, Node, NodeId, Term, Workers};
use std::time::Duration;
use threadsim::sync::{thread, Arc};
use threadsim::ManualClock;

/// Node n2 of a three-node cluster, built without threads (the model's threads drive it), over a
/// clock loom can run and a persister that keeps every save.
fn node_without_threads(disk: &Arc<RecordingPersister>, mutations: &MutationSet) -> Node {
    let peers = vec![NodeId(0), NodeId(1)];
    let clock = ManualClock::new();
    let (node, _receiver) = model_node(
        NodeId(2),
        peers,
        &clock,
        disk.clone(),
        mutations,
        Workers::NONE,
        4,
    );
    // A node that starts refuses votes for one minimum election timeout: past it.
    clock.advance(Duration::from_secs(1));
    node
}

fn vote_request(candidate: u32) -> Request {
    Request::RequestVote(RequestVoteArgs {
        term: Term(1),
        candidate: NodeId(candidate),
        last_log_index: LogIndex(0),
        last_log_term: Term(0),
        pre_vote: false,
        transfer: false,
    })
}

/// The model: explores every interleaving of the two handler threads (exhaustive: two threads,
/// a handful of lock sections, no preemption bound needed). Panics on a violation.
fn two_candidates_one_voter(mutations: MutationSet) {
    static EXECUTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    EXECUTIONS.store(0, std::sync::atomic::Ordering::SeqCst);
    loom::model(move || {
        EXECUTIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let disk = Arc::new(RecordingPersister::new());
        let node = node_without_threads(&disk, &mutations);
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
        Err(panic) => panic_message(panic.as_ref()),
    };
    assert!(
        message.contains("left before it was persisted"),
        "{message}"
    );
}

/// A vote request of term 2 races an append from the leader of term 2 on one node.
fn vote_against_append(mutations: MutationSet) {
    loom::model(move || {
        let disk = Arc::new(RecordingPersister::new());
        let node = node_without_threads(&disk, &mutations);
        let vote = Request::RequestVote(RequestVoteArgs {
            term: Term(2),
            candidate: NodeId(0),
            last_log_index: LogIndex(0),
            last_log_term: Term(0),
            pre_vote: false,
            transfer: false,
        });
        let append = Request::AppendEntries(AppendEntriesArgs {
            term: Term(2),
            leader: NodeId(1),
            prev_log_index: LogIndex(0),
            prev_log_term: Term(0),
            entries: vec![Entry {
                term: Term(2),
                command: Command::from_text("x"),
            }],
            leader_commit: LogIndex(0),
            read_round: 0,
            sent_at: threadsim::Instant::ZERO,
        });
        let handles: Vec<_> = [vote, append]
            .into_iter()
            .map(|request| {
                let handler = node.rpc_handler();
                let disk = disk.clone();
                thread::spawn(move || {
                    let reply = handler.handle(request).expect("alive");
                    (reply, disk.save_count())
                })
            })
            .collect();
        for handle in handles {
            let (reply, durable) = handle.join().expect("handler thread");
            let state = disk.state_after(durable);
            match reply {
                Response::RequestVote(reply) if reply.vote_granted => assert_eq!(
                    (state.current_term, state.voted_for),
                    (Term(2), Some(NodeId(0))),
                    "the vote left before it was persisted"
                ),
                Response::AppendEntries(reply) if reply.success => {
                    assert!(
                        state.current_term >= Term(2),
                        "the append's term left before it was persisted"
                    );
                    assert_eq!(
                        state.log.last_index(),
                        LogIndex(1),
                        "the appended entry left before it was persisted"
                    );
                }
                _ => {}
            }
        }
        node.kill();
    });
}

#[test]
fn a_vote_racing_an_append_keeps_every_promise_durable() {
    vote_against_append(MutationSet::default());
}

#[test]
fn a_vote_racing_an_append_rejects_replying_before_persisting() {
    let outcome = std::panic::catch_unwind(|| {
        vote_against_append(MutationSet::only(Mutation::ReplyBeforePersist))
    });
    assert!(
        outcome.is_err(),
        "reply-before-persist survived every interleaving of vote and append"
    );
}
