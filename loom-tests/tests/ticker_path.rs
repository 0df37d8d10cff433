//! Ticker path: the election deadline has just passed when a heartbeat of the current leader
//! arrives; the ticker thread deciding to start an election races the heartbeat that pushes the
//! deadline forward, and then `kill`. Under every interleaving (within the preemption bound): no
//! election starts from a deadline the heartbeat had already pushed forward (the node ends as a
//! follower of the leader that just reached it), and the ticker exits when the node is killed
//! (otherwise `kill`, which joins it, would deadlock).
#![cfg(loom)]

use loom_tests::{model_node, panic_message, preemption_bound};
use node::messages::{AppendEntriesArgs, Request, Response};
use node::{LogIndex, MemoryPersister, Mutation, MutationSet, NodeId, Role, Term, Workers};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use threadsim::sync::{thread, Arc};
use threadsim::ManualClock;

fn heartbeat() -> Request {
    Request::AppendEntries(AppendEntriesArgs {
        term: Term(1),
        leader: NodeId(0),
        prev_log_index: LogIndex(0),
        prev_log_term: Term(0),
        entries: vec![],
        leader_commit: LogIndex(0),
        read_round: 0,
        sent_at: threadsim::Instant::ZERO,
    })
}

static EXECUTIONS: AtomicUsize = AtomicUsize::new(0);
const BOUND: usize = 3;

fn ticker_model(mutations: MutationSet) {
    EXECUTIONS.store(0, Ordering::SeqCst);
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemption_bound(BOUND));
    builder.check(move || {
        EXECUTIONS.fetch_add(1, Ordering::SeqCst);
        let loom_clock = ManualClock::new();
        let workers = Workers {
            ticker: true,
            ..Workers::NONE
        };
        let persister = Arc::new(MemoryPersister::new());
        let peers = vec![NodeId(0), NodeId(1)];
        let (node, _receiver) = model_node(
            NodeId(2),
            peers,
            &loom_clock,
            persister,
            &mutations,
            workers,
            1,
        );
        let handler = node.rpc_handler();
        // n0 leads term 1 and n2 follows it.
        let first = handler.handle(heartbeat()).expect("alive");
        assert!(matches!(first, Response::AppendEntries(reply) if reply.success));
        // The election deadline passes; at the same moment the leader's next heartbeat arrives.
        loom_clock.advance(Duration::from_secs(1));
        let beat = thread::spawn(move || handler.handle(heartbeat()).expect("alive"));
        let reply = beat.join().expect("heartbeat thread");
        assert!(matches!(reply, Response::AppendEntries(reply) if reply.success));
        node.kill();
        let status = node.status();
        assert_eq!(
            (status.term, status.role),
            (Term(1), Role::Follower),
            "an election started from a deadline the heartbeat had pushed forward"
        );
    });
    eprintln!(
        "ticker path: {} executions, preemption bound {}",
        EXECUTIONS.load(Ordering::SeqCst),
        preemption_bound(BOUND)
    );
}

#[test]
fn no_election_starts_from_a_deadline_a_heartbeat_pushed_forward() {
    ticker_model(MutationSet::default());
}

#[test]
fn a_ticker_that_checks_then_acts_across_a_lock_release_is_rejected() {
    let outcome =
        std::panic::catch_unwind(|| ticker_model(MutationSet::only(Mutation::TickerCheckThenAct)));
    let message = match outcome {
        Ok(()) => panic!("ticker-check-then-act survived every interleaving"),
        Err(panic) => panic_message(panic.as_ref()),
    };
    assert!(message.contains("pushed forward"), "{message}");
}
