//! What the cluster key costs on a node port: AppendEntries round trips over loopback TCP between
//! a `Caller` and a `Listener`, with the key (a handshake per connection, an HMAC-SHA256 tag on
//! every frame, checked on arrival) and without, measured alternately in one run (a chunk of
//! calls without, the same chunk with, and so on) for a heartbeat and for a batch of 64 entries
//! of 1 KiB.
//!
//! `cargo bench -p interleave --bench node_port_auth` (20,000 calls a case); with `--test` (as the
//! suite runs it) 200.

use node::messages::{AppendEntriesArgs, AppendEntriesReply, Request, Response};
use node::{Command, Entry, LogIndex, NodeId, Term};
use server::tcp::{Admission, Caller, ClusterKey, Listener, RaftRpc};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn append(entries: usize, bytes: usize) -> Request {
    Request::AppendEntries(AppendEntriesArgs {
        term: Term(3),
        leader: NodeId(0),
        prev_log_index: LogIndex(10),
        prev_log_term: Term(3),
        entries: (0..entries)
            .map(|_| Entry {
                term: Term(3),
                command: Command(vec![7; bytes]),
            })
            .collect(),
        leader_commit: LogIndex(10),
        read_round: 0,
        sent_at: threadsim::Instant::ZERO,
    })
}

/// The wall time of `calls` round trips of `request` on one connection (made before timing).
fn round_trips(caller: &Caller<RaftRpc>, request: &Request, calls: usize) -> Duration {
    assert!(
        caller.call(request, Duration::from_secs(5)).is_some(),
        "the connection is made and answered"
    );
    #[allow(clippy::disallowed_methods)] // wall time is what is measured
    let started = Instant::now();
    for _ in 0..calls {
        let reply = caller.call(request, Duration::from_secs(5));
        assert!(reply.is_some(), "every call is answered");
    }
    started.elapsed()
}

fn main() {
    let test_mode = std::env::args().any(|arg| arg == "--test");
    let calls = if test_mode { 200 } else { 20_000 };
    let chunk = calls / 10;
    let answer = Arc::new(|_, _: Request| {
        Some(Response::AppendEntries(AppendEntriesReply {
            term: Term(3),
            success: true,
            conflict: None,
            read_round: 0,
        }))
    });
    let key = ClusterKey::generate().expect("random bytes for a key");
    let loopback = "127.0.0.1:0".parse().expect("an address");
    let plain_port =
        Listener::bind::<RaftRpc>(loopback, answer.clone(), Admission::Anyone).expect("bind");
    let keyed_port =
        Listener::bind::<RaftRpc>(loopback, answer, Admission::KeyHolders(key.clone()))
            .expect("bind");
    let plain = Caller::<RaftRpc>::new(plain_port.local_addr(), None);
    let keyed = Caller::<RaftRpc>::new(keyed_port.local_addr(), Some(key));
    println!("node port round trips, {calls} calls a case, chunks of {chunk} alternating");
    for (name, request) in [
        ("heartbeat", append(0, 0)),
        ("64 entries of 1 KiB", append(64, 1024)),
    ] {
        let (mut without, mut with) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..calls / chunk {
            without += round_trips(&plain, &request, chunk);
            with += round_trips(&keyed, &request, chunk);
        }
        let rate = |took: Duration| calls as f64 / took.as_secs_f64();
        println!(
            "{name:>20}: {:>8.0} calls/s without the key, {:>8.0} with it: {:+.1}% time a call",
            rate(without),
            rate(with),
            100.0 * (with.as_secs_f64() / without.as_secs_f64() - 1.0)
        );
    }
    assert_eq!(keyed_port.refused(), 0, "the member was never refused");
}
