//! The Raft rules checked on the effects they return, without threads: one file per rule.

mod election;
mod invariants;
mod lease;
mod membership;
mod own_sync;
mod read_index;
mod replication;
mod snapshot;
mod term_ceiling;
mod timing;
mod transfer;

use super::*;
use crate::log::RaftLog;
use crate::messages::*;
use crate::mutation::MutationSet;
use crate::Entry;
use std::time::Duration;

fn n(id: u32) -> NodeId {
    NodeId(id)
}

/// `ms` milliseconds after the epoch.
fn t(ms: u64) -> Instant {
    Instant::from_epoch(Duration::from_millis(ms))
}

/// The first moment a node started at `t(0)` grants votes: a node that starts refuses them
/// for one minimum election timeout (it may have acknowledged a leader's lease just before).
fn after_boot() -> Instant {
    t(0) + Config::default().election_timeout_min
}

fn config(mutations: MutationSet) -> Config {
    Config {
        mutations,
        ..Config::default()
    }
}

fn core_with(id: u32, cluster: u32, state: PersistentState, mutations: MutationSet) -> RaftCore {
    let peers = (0..cluster).filter(|&p| p != id).map(NodeId).collect();
    let config = Config {
        max_entries_per_append: 16,
        ..config(mutations)
    };
    RaftCore::new(n(id), peers, state, config, t(0))
}

fn core(id: u32, cluster: u32) -> RaftCore {
    core_with(
        id,
        cluster,
        PersistentState::default(),
        MutationSet::default(),
    )
}

fn log_of(terms: &[u64]) -> RaftLog {
    RaftLog::from_entries(
        terms
            .iter()
            .enumerate()
            .map(|(i, &t)| Entry {
                term: Term(t),
                command: Command(vec![i as u8]),
            })
            .collect(),
    )
}

fn position(effects: &Effects, wanted: impl Fn(&Effect) -> bool) -> usize {
    effects
        .as_slice()
        .iter()
        .position(wanted)
        .unwrap_or_else(|| panic!("missing in {effects:?}"))
}

fn reply_of(effects: &Effects) -> Response {
    match effects.as_slice().last() {
        Some(Effect::Reply(response)) => response.clone(),
        other => panic!("last effect is not a reply: {other:?}"),
    }
}

fn vote_granted(term: Term) -> Response {
    Response::RequestVote(RequestVoteReply {
        term,
        vote_granted: true,
    })
}

/// Elects `core` at time `now` (its election deadline must have passed), with every peer voting
/// yes until it leads.
fn elect_at(core: &mut RaftCore, now: Instant) {
    core.start_election(now);
    for peer in core.peers().to_vec() {
        if core.role() == Role::Leader {
            break;
        }
        let (_, request) = core.next_request(peer, t(0)).expect("vote request");
        let term = core.term();
        core.handle_response(now, peer, &request, Some(&vote_granted(term)));
    }
    assert_eq!(core.role(), Role::Leader);
}

fn elect(core: &mut RaftCore) {
    elect_at(core, t(1_000));
}

/// Node 0 of a `cluster`-node cluster, elected at 1 s, with an entry of its term committed
/// (every peer answered its AppendEntries, sent at 1 s).
fn leader_with_a_commit_in_its_term(cluster: u32, mutations: MutationSet) -> RaftCore {
    let mut leader = core_with(0, cluster, PersistentState::default(), mutations);
    elect(&mut leader);
    leader.propose(Command::from_text("no-op")).expect("leader");
    for peer in leader.peers().to_vec() {
        let (_, request) = leader.next_request(peer, t(1_000)).expect("the entry");
        let term = leader.term();
        leader.handle_response(t(1_001), peer, &request, Some(&success(&request, term)));
    }
    assert_eq!(leader.commit_index(), LogIndex(1));
    leader
}

/// An AppendEntries from leader `leader` of `term`, with no entries, at `prev` (term 0).
fn heartbeat_from(leader: u32, term: u64) -> Request {
    Request::AppendEntries(AppendEntriesArgs {
        term: Term(term),
        leader: n(leader),
        prev_log_index: LogIndex(0),
        prev_log_term: Term(0),
        entries: vec![],
        leader_commit: LogIndex(0),
        read_round: 0,
        sent_at: threadsim::Instant::ZERO,
    })
}

/// The success reply `peer` would give to `request` in `term`, echoing its read round.
fn success(request: &Request, term: Term) -> Response {
    let Request::AppendEntries(args) = request else {
        panic!("not an AppendEntries: {request:?}")
    };
    Response::AppendEntries(AppendEntriesReply {
        term,
        success: true,
        conflict: None,
        read_round: args.read_round,
    })
}

/// An AppendEntries refusal from a follower in `term` (a higher term deposes the leader).
fn refusal_in(term: Term) -> Response {
    Response::AppendEntries(AppendEntriesReply {
        term,
        success: false,
        conflict: None,
        read_round: 0,
    })
}

/// The heartbeat the leader would send `peer` at `now` (panics if none is due).
fn heartbeat_now(leader: &mut RaftCore, peer: NodeId, now: Instant) -> Request {
    match leader.heartbeat(peer, now) {
        HeartbeatDue::Send(request) => request,
        HeartbeatDue::WaitUntil(when) => panic!("no heartbeat due at {now}: wait until {when:?}"),
    }
}
