//! Snapshots: the service's compaction, a leader sending a snapshot to a follower that needs
//! compacted entries, and the follower taking it (or not) (Raft section 7).

use super::*;

/// Node 0 of 3, leading in term 1 with entries 1..=4 of its term committed: both peers hold
/// them.
fn leader_with_four_committed() -> RaftCore {
    leader_with_four_committed_by(&[1, 2])
}

/// [`leader_with_four_committed`], the entries sent only to `peers` (the others never
/// answered anything).
fn leader_with_four_committed_by(peers: &[u32]) -> RaftCore {
    four_committed_by(core(0, 3), peers)
}

/// `leader` (node 0 of 3) elected, with entries 1..=4 of its term committed by `peers`.
fn four_committed_by(mut leader: RaftCore, peers: &[u32]) -> RaftCore {
    elect(&mut leader);
    for i in 0..4 {
        leader
            .propose(Command::from_text(&format!("c{i}")))
            .expect("leader");
    }
    for peer in peers.iter().map(|&peer| n(peer)) {
        let (_, request) = leader.next_request(peer, t(1_000)).expect("entries");
        let term = leader.term();
        leader.handle_response(t(1_001), peer, &request, Some(&success(&request, term)));
    }
    assert_eq!(leader.commit_index(), LogIndex(4));
    leader
}

fn install(term: u64, index: u64, last_term: u64) -> Request {
    let whole = stored(b"state");
    Request::InstallSnapshot(chunk(term, index, last_term, &whole, 0, whole.len()))
}

/// A snapshot as a node stores and sends it: a three-voter configuration, then `service`.
fn stored(service: &[u8]) -> Vec<u8> {
    crate::core::Membership::of_voters([n(0), n(1), n(2)]).wrap_snapshot(service)
}

/// The chunk of `whole` from `offset`, `len` bytes long, of the snapshot up to `index`.
fn chunk(
    term: u64,
    index: u64,
    last_term: u64,
    whole: &[u8],
    offset: usize,
    len: usize,
) -> InstallSnapshotArgs {
    InstallSnapshotArgs {
        term: Term(term),
        leader: n(0),
        last_included_index: LogIndex(index),
        last_included_term: Term(last_term),
        offset: offset as u64,
        total_bytes: whole.len() as u64,
        checksum: crate::persist::checksum(whole),
        data: whole[offset..offset + len].to_vec(),
        read_round: 0,
        sent_at: Instant::ZERO,
    }
}

fn snapshot_reply(term: Term, received: u64) -> Response {
    Response::InstallSnapshot(InstallSnapshotReply {
        term,
        received,
        read_round: 0,
    })
}

fn follower_with(terms: &[u64], term: u64) -> RaftCore {
    let state = PersistentState {
        current_term: Term(term),
        voted_for: None,
        log: log_of(terms),
        snapshot: Vec::new(),
    };
    core_with(1, 3, state, MutationSet::default())
}

#[test]
fn compacting_keeps_indices_and_writes_log_and_snapshot_in_one_persist() {
    let mut leader = leader_with_four_committed();
    let effects = leader.compact(LogIndex(3), b"up to 3".to_vec());
    let term = leader.persistent().log.snapshot_term();
    assert_eq!(
        effects.as_slice(),
        &[
            Effect::Persist,
            Effect::LogCompacted {
                index: LogIndex(3),
                term
            }
        ]
    );
    let state = leader.persistent();
    assert_eq!(state.log.snapshot_index(), LogIndex(3));
    assert_eq!(state.log.last_index(), LogIndex(4));
    assert_eq!(service_bytes(&state.snapshot), b"up to 3");
    assert!(
        leader.compact(LogIndex(2), b"older".to_vec()).is_empty(),
        "an older snapshot is ignored"
    );
    assert_eq!(service_bytes(&leader.persistent().snapshot), b"up to 3");
    leader.check_invariants().expect("invariants");
}

#[test]
#[should_panic(expected = "past the commit index")]
fn only_committed_entries_are_compacted() {
    let mut leader = leader_with_four_committed();
    leader.propose(Command::from_text("uncommitted")).unwrap();
    leader.compact(LogIndex(5), Vec::new());
}

#[test]
fn a_follower_that_needs_compacted_entries_gets_the_snapshot_and_then_the_rest() {
    // Peer 2 never answered: it needs every entry, and 1..=3 are compacted.
    let mut leader = leader_with_four_committed_by(&[1]);
    leader.compact(LogIndex(3), b"up to 3".to_vec());
    let heartbeat = match leader.heartbeat(n(2), t(3_000)) {
        HeartbeatDue::Send(request) => request,
        other => panic!("no heartbeat: {other:?}"),
    };
    let Request::AppendEntries(args) = &heartbeat else {
        panic!("{heartbeat:?}")
    };
    assert_eq!(
        args.prev_log_index,
        LogIndex(3),
        "a heartbeat to a peer behind the snapshot is checked where the log starts"
    );
    let (effects, request) = leader.next_request(n(2), t(3_000)).expect("the snapshot");
    assert!(effects.is_empty());
    let Request::InstallSnapshot(args) = &request else {
        panic!("not a snapshot: {request:?}")
    };
    assert_eq!(
        (args.last_included_index, args.last_included_term),
        (LogIndex(3), leader.term())
    );
    assert_eq!(service_bytes(&args.data), b"up to 3");
    let reply = Response::InstallSnapshot(InstallSnapshotReply {
        term: leader.term(),
        received: args.total_bytes,
        read_round: args.read_round,
    });
    let effects = leader.handle_response(t(3_001), n(2), &request, Some(&reply));
    assert!(effects.as_slice().contains(&Effect::WakePeers));
    assert_eq!(leader.progress(n(2)).unwrap().match_index, LogIndex(3));
    let (_, request) = leader.next_request(n(2), t(3_002)).expect("the rest");
    let Request::AppendEntries(args) = &request else {
        panic!("{request:?}")
    };
    assert_eq!((args.prev_log_index, args.entries.len()), (LogIndex(3), 1));
}

#[test]
fn a_lagging_follower_takes_the_snapshot_in_place_of_its_log() {
    let mut follower = follower_with(&[1, 1, 5], 5);
    let effects = follower.handle_request(t(10), &install(6, 4, 6));
    let installed = position(&effects, |e| matches!(e, Effect::SnapshotInstalled { .. }));
    assert!(position(&effects, |e| *e == Effect::Persist) < installed);
    assert_eq!(
        effects.as_slice()[installed],
        Effect::SnapshotInstalled {
            index: LogIndex(4),
            term: Term(6),
            kept_suffix: false
        }
    );
    let total = stored(b"state").len() as u64;
    assert_eq!(reply_of(&effects), snapshot_reply(Term(6), total));
    let state = follower.persistent();
    assert_eq!(
        state.log,
        RaftLog::after_snapshot(LogIndex(4), Term(6), Vec::new()),
        "its own entry 3 of term 5 conflicted: the whole log gave way"
    );
    assert_eq!(service_bytes(&state.snapshot), b"state");
    assert_eq!(follower.commit_index(), LogIndex(4));
    follower.check_invariants().expect("invariants");
}

#[test]
fn a_follower_whose_log_agrees_at_the_snapshot_keeps_what_follows() {
    let mut follower = follower_with(&[1, 2, 2, 2], 2);
    let effects = follower.handle_request(t(10), &install(2, 2, 2));
    assert!(effects.as_slice().contains(&Effect::SnapshotInstalled {
        index: LogIndex(2),
        term: Term(2),
        kept_suffix: true
    }));
    assert_eq!(follower.persistent().log.last_index(), LogIndex(4));
    assert_eq!(follower.commit_index(), LogIndex(2));
}

#[test]
fn a_snapshot_no_newer_than_what_is_committed_changes_nothing() {
    let mut follower = follower_with(&[1, 1, 1], 1);
    follower.handle_request(
        t(10),
        &Request::AppendEntries(AppendEntriesArgs {
            leader_commit: LogIndex(3),
            prev_log_index: LogIndex(3),
            prev_log_term: Term(1),
            ..match heartbeat_from(0, 1) {
                Request::AppendEntries(args) => args,
                _ => unreachable!(),
            }
        }),
    );
    assert_eq!(follower.commit_index(), LogIndex(3));
    let effects = follower.handle_request(t(20), &install(1, 2, 1));
    assert!(
        !effects
            .as_slice()
            .iter()
            .any(|e| matches!(e, Effect::Persist | Effect::SnapshotInstalled { .. })),
        "{effects:?}"
    );
    assert_eq!(follower.persistent().log.snapshot_index(), LogIndex(0));
}

#[test]
fn a_snapshot_from_an_old_term_is_refused_with_the_newer_term() {
    let mut follower = follower_with(&[1], 7);
    let effects = follower.handle_request(t(10), &install(6, 5, 6));
    assert_eq!(effects.as_slice().len(), 1, "{effects:?}");
    assert_eq!(reply_of(&effects), snapshot_reply(Term(7), 0));
    assert_eq!(follower.persistent().log.last_index(), LogIndex(1));
}

#[test]
fn a_compacted_follower_takes_entries_sent_from_before_its_snapshot() {
    let mut follower = follower_with(&[], 2);
    follower.handle_request(t(10), &install(2, 3, 2));
    let entries: Vec<Entry> = [2, 2, 2, 2, 2]
        .iter()
        .map(|&term| Entry {
            term: Term(term),
            command: Command::from_text("x"),
        })
        .collect();
    // An AppendEntries from before the snapshot reached it: entries 2..=6.
    let effects = follower.handle_request(
        t(20),
        &Request::AppendEntries(AppendEntriesArgs {
            term: Term(2),
            leader: n(0),
            prev_log_index: LogIndex(1),
            prev_log_term: Term(2),
            entries,
            leader_commit: LogIndex(6),
            read_round: 0,
            sent_at: Instant::ZERO,
        }),
    );
    let Response::AppendEntries(reply) = reply_of(&effects) else {
        panic!("{effects:?}")
    };
    assert!(reply.success, "{reply:?}");
    assert_eq!(follower.persistent().log.last_index(), LogIndex(6));
    assert_eq!(follower.persistent().log.snapshot_index(), LogIndex(3));
    assert_eq!(follower.commit_index(), LogIndex(6));
}

#[test]
fn a_node_restarted_from_a_snapshot_has_committed_what_it_covers() {
    let mut log = log_of(&[1, 1, 2]);
    log.compact_to(LogIndex(2));
    let state = PersistentState {
        current_term: Term(2),
        voted_for: None,
        log,
        snapshot: b"up to 2".to_vec(),
    };
    let restarted = core_with(1, 3, state, MutationSet::default());
    assert_eq!(restarted.commit_index(), LogIndex(2));
    restarted.check_invariants().expect("invariants");
}

#[test]
fn a_higher_term_in_a_snapshot_reply_deposes_the_leader() {
    let mut leader = leader_with_four_committed();
    leader.compact(LogIndex(4), Vec::new());
    let term = leader.term();
    let Request::InstallSnapshot(args) = install(term.0, 4, term.0) else {
        unreachable!()
    };
    let request = Request::InstallSnapshot(args);
    let reply = snapshot_reply(Term(term.0 + 1), 0);
    leader.handle_response(t(2_000), n(1), &request, Some(&reply));
    assert_eq!(leader.role(), Role::Follower);
    assert_eq!(leader.term(), Term(term.0 + 1));
}

#[test]
fn a_snapshot_goes_in_chunks_of_the_byte_budget_and_the_leader_resumes_where_the_follower_is() {
    let config = Config {
        max_bytes_per_append: 8,
        ..Config::default()
    };
    let node_0 = RaftCore::new(
        n(0),
        vec![n(1), n(2)],
        PersistentState::default(),
        config,
        t(0),
    );
    let mut leader = four_committed_by(node_0, &[1]);
    let snapshot = b"0123456789abcdefghij".to_vec();
    leader.compact(LogIndex(3), snapshot.clone());
    let mut follower = follower_with(&[], leader.term().0);
    let mut chunks = Vec::new();
    loop {
        let (_, request) = leader.next_request(n(2), t(3_000)).expect("a chunk");
        let Request::InstallSnapshot(args) = &request else {
            panic!("{request:?}")
        };
        chunks.push((args.offset, args.data.len()));
        let effects = follower.handle_request(t(3_001), &request);
        let reply = reply_of(&effects);
        leader.handle_response(t(3_002), n(2), &request, Some(&reply));
        if leader.progress(n(2)).unwrap().match_index == LogIndex(3) {
            break;
        }
        assert!(chunks.len() < 10, "{chunks:?}");
    }
    // The node's configuration goes first (37 bytes for three voters), then the service's 20.
    let stored = follower.persistent().snapshot.clone();
    assert_eq!(stored.len(), 57);
    let expected: Vec<(u64, usize)> = (0..8).map(|i| (i * 8, if i < 7 { 8 } else { 1 })).collect();
    assert_eq!(chunks, expected);
    assert_eq!(service_bytes(&stored), snapshot);
    assert_eq!(follower.commit_index(), LogIndex(3));
}

#[test]
fn a_chunk_out_of_order_is_not_taken_and_damaged_bytes_are_never_installed() {
    let whole = b"0123456789";
    let mut follower = follower_with(&[1], 2);
    // Sends the chunk at `offset` of `len` bytes (damaged or not) at `ms`; the effects.
    let mut send = |ms: u64, offset: usize, len: usize, damaged: bool| {
        let mut args = chunk(2, 4, 2, whole, offset, len);
        if damaged {
            args.data[0] ^= 1;
        }
        follower.handle_request(t(ms), &Request::InstallSnapshot(args))
    };
    let start_from_0 = send(10, 4, 4, false);
    assert_eq!(reply_of(&start_from_0), snapshot_reply(Term(2), 0));
    assert_eq!(reply_of(&send(11, 0, 4, false)), snapshot_reply(Term(2), 4));
    let go_on_from_4 = send(12, 8, 2, false);
    assert_eq!(reply_of(&go_on_from_4), snapshot_reply(Term(2), 4));
    // The last chunks arrive, but bytes 4..8 were damaged on the way: nothing is installed and
    // the follower starts over.
    send(13, 4, 4, true);
    let effects = send(14, 8, 2, false);
    assert!(
        !effects
            .as_slice()
            .iter()
            .any(|e| matches!(e, Effect::SnapshotInstalled { .. } | Effect::Persist)),
        "{effects:?}"
    );
    assert_eq!(reply_of(&effects), snapshot_reply(Term(2), 0));
    assert_eq!(follower.persistent().log.snapshot_index(), LogIndex(0));
}

/// The service's part of a snapshot the node stores or sends (after its configuration).
fn service_bytes(snapshot: &[u8]) -> &[u8] {
    crate::core::Membership::unwrap_snapshot(snapshot)
        .expect("a snapshot with its configuration")
        .1
}

#[test]
fn a_whole_snapshot_without_its_configuration_is_not_installed() {
    let mut follower = follower_with(&[1], 2);
    let whole = b"state without a configuration";
    let args = chunk(2, 4, 2, whole, 0, whole.len());
    let effects = follower.handle_request(t(10), &Request::InstallSnapshot(args));
    assert!(
        !effects
            .as_slice()
            .iter()
            .any(|e| matches!(e, Effect::SnapshotInstalled { .. })),
        "{effects:?}"
    );
    assert_eq!(reply_of(&effects), snapshot_reply(Term(2), 0), "start over");
    assert!(follower.persistent().snapshot.is_empty());
}
