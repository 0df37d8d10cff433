//! The shell on its own: a node built with no worker threads over a [`ManualClock`], driven one
//! pass at a time on the test's thread, with test doubles for the network, the disk and the
//! observer. Each test checks one duty of the shell: carrying out effects in order, stopping on a
//! crashed write, delivering what a handler commits, answering reads, checking Figure 2's term
//! rule independently of the core.

use super::*;
use crate::messages::{AppendEntriesArgs, AppendEntriesReply, Request, RequestVoteArgs, Response};
use crate::observer::NodeEvent;
use crate::persist::RecordingPersister;
use crate::{Entry, MutationSet, TransportError};
use std::time::Duration;
use threadsim::sync::Mutex;
use threadsim::{channel, ManualClock, Receiver};

/// What a test network saw, in order, with the saves of the node's persister interleaved.
#[derive(Default)]
struct Journal {
    lines: Mutex<Vec<String>>,
}

impl Journal {
    fn push(&self, line: String) {
        self.lines.lock().push(line);
    }
    fn lines(&self) -> Vec<String> {
        self.lines.lock().clone()
    }
}

/// How the peers of a test answer a request (`None`: no answer).
type Answer = Box<dyn Fn(NodeId, &Request) -> Option<Response> + Send + Sync>;

/// A network whose calls are written to the journal and answered by `answer`.
struct ScriptedNetwork {
    journal: Arc<Journal>,
    answer: Answer,
}

impl Transport for ScriptedNetwork {
    fn call(&self, to: NodeId, request: Request, _: Duration) -> Result<Response, TransportError> {
        let kind = match &request {
            Request::RequestVote(_) => "vote request".to_string(),
            Request::AppendEntries(args) => format!("append of {}", args.entries.len()),
            Request::InstallSnapshot(args) => format!("snapshot to {}", args.last_included_index),
            Request::TimeoutNow(_) => "timeout-now".to_string(),
        };
        self.journal.push(format!("send {kind} to {to}"));
        (self.answer)(to, &request).ok_or(TransportError::NoReply(to))
    }
}

/// A persister that writes each save to the journal, and fails once it has been asked to.
struct JournaledDisk {
    journal: Arc<Journal>,
    inner: RecordingPersister,
    crash: Mutex<bool>,
}

impl Persister for JournaledDisk {
    fn save(&self, bytes: &[u8]) -> Result<(), StorageError> {
        if *self.crash.lock() {
            return Err(StorageError::Crashed);
        }
        self.journal.push("save".to_string());
        self.inner.save(bytes)
    }
    fn load(&self) -> Result<Option<Vec<u8>>, StorageError> {
        self.inner.load()
    }
}

/// Every event the node reported.
#[derive(Default)]
struct Events(Mutex<Vec<NodeEvent>>);

impl Observer for Events {
    fn on_event(&self, _node: NodeId, event: &NodeEvent) {
        self.0.lock().push(event.clone());
    }
}

impl Events {
    fn violations(&self) -> Vec<String> {
        self.0
            .lock()
            .iter()
            .filter_map(|event| match event {
                NodeEvent::InvariantViolated { description } => Some(description.clone()),
                _ => None,
            })
            .collect()
    }
}

struct Rig {
    node: Node,
    clock: ManualClock,
    journal: Arc<Journal>,
    disk: Arc<JournaledDisk>,
    events: Arc<Events>,
    applied: Receiver<Delivery>,
}

/// Node 0 of a cluster of `size`, no worker threads; `answer` plays the peers.
fn rig(
    size: u32,
    mutations: MutationSet,
    answer: impl Fn(NodeId, &Request) -> Option<Response> + Send + Sync + 'static,
) -> Rig {
    let clock = ManualClock::new();
    let clock_ref: ClockRef = Arc::new(clock.clone());
    let journal = Arc::new(Journal::default());
    let disk = Arc::new(JournaledDisk {
        journal: journal.clone(),
        inner: RecordingPersister::new(),
        crash: Mutex::new(false),
    });
    let events = Arc::new(Events::default());
    let (apply_sender, applied) = channel(&clock_ref, 8, "apply");
    let node = Node::new(NodeParams {
        id: NodeId(0),
        peers: (1..size).map(NodeId).collect(),
        membership: None,
        transport: Arc::new(ScriptedNetwork {
            journal: journal.clone(),
            answer: Box::new(answer),
        }),
        persister: disk.clone(),
        clock: clock_ref,
        apply_sender,
        config: Config {
            mutations,
            ..Config::default()
        },
        observer: events.clone(),
        workers: Workers::NONE,
    })
    .expect("valid node");
    Rig {
        node,
        clock,
        journal,
        disk,
        events,
        applied,
    }
}

/// Every peer grants every vote and accepts every append, in the request's term.
fn agreeable(_: NodeId, request: &Request) -> Option<Response> {
    Some(match request {
        // A voter answers a pre-vote in its own (earlier) term.
        Request::RequestVote(args) => Response::RequestVote(crate::messages::RequestVoteReply {
            term: if args.pre_vote {
                Term(args.term.0 - 1)
            } else {
                args.term
            },
            vote_granted: true,
        }),
        Request::AppendEntries(args) => Response::AppendEntries(AppendEntriesReply {
            term: args.term,
            success: true,
            conflict: None,
            read_round: args.read_round,
        }),
        Request::InstallSnapshot(args) => {
            Response::InstallSnapshot(crate::messages::InstallSnapshotReply {
                term: args.term,
                received: args.total_bytes,
                read_round: args.read_round,
            })
        }
        Request::TimeoutNow(args) => {
            Response::TimeoutNow(crate::messages::TimeoutNowReply { term: args.term })
        }
    })
}

/// Runs the ticker past the election deadline, then the replicators until node 0 leads.
fn elect(rig: &Rig) {
    rig.clock.advance(Config::default().election_timeout_max);
    rig.node.tick_once();
    for _ in 0..2 {
        for peer in 1..3 {
            rig.node.replicate_once(NodeId(peer));
        }
    }
    assert_eq!(rig.node.status().role, Role::Leader);
}

#[test]
fn a_leader_writes_its_new_entries_before_the_first_send_and_once_per_round() {
    let rig = rig(3, MutationSet::default(), agreeable);
    elect(&rig);
    let before = rig.journal.lines().len();
    rig.node.start(Command::from_text("a")).expect("leader");
    rig.node.start(Command::from_text("b")).expect("leader");
    assert_eq!(rig.journal.lines().len(), before, "start writes nothing");
    rig.node.replicate_once(NodeId(1));
    rig.node.replicate_once(NodeId(2));
    assert_eq!(
        rig.journal.lines()[before..],
        ["save", "send append of 2 to n1", "send append of 2 to n2"],
        "one write, before the first send"
    );
}

#[test]
fn a_crashed_write_stops_the_node_before_any_reply() {
    let rig = rig(3, MutationSet::default(), agreeable);
    *rig.disk.crash.lock() = true;
    // Past the minimum election timeout: a node that starts refuses votes until then.
    rig.clock.advance(Config::default().election_timeout_min);
    let handler = rig.node.rpc_handler();
    let vote = Request::RequestVote(RequestVoteArgs {
        term: Term(1),
        candidate: NodeId(1),
        last_log_index: LogIndex(0),
        last_log_term: Term(0),
        pre_vote: false,
        transfer: false,
    });
    assert_eq!(handler.handle(vote), None, "no promise without the write");
    assert!(rig.node.is_stopped());
    assert_eq!(rig.node.tick_once(), Pass::Exit);
    assert_eq!(rig.node.apply_once(), Pass::Exit);
}

#[test]
fn a_follower_handler_delivers_what_it_commits_on_its_own_thread() {
    let rig = rig(3, MutationSet::default(), agreeable);
    let handler = rig.node.rpc_handler();
    let entries: Vec<Entry> = ["x", "y"]
        .iter()
        .map(|text| Entry {
            term: Term(1),
            command: Command::from_text(text),
        })
        .collect();
    let reply = handler.handle(Request::AppendEntries(AppendEntriesArgs {
        term: Term(1),
        leader: NodeId(1),
        prev_log_index: LogIndex(0),
        prev_log_term: Term(0),
        entries,
        leader_commit: LogIndex(2),
        read_round: 7,
        sent_at: threadsim::Instant::ZERO,
    }));
    let Some(Response::AppendEntries(reply)) = reply else {
        panic!("no reply: {reply:?}")
    };
    assert!(reply.success);
    assert_eq!(reply.read_round, 7, "the read round is echoed");
    let delivered: Vec<LogIndex> = std::iter::from_fn(|| rig.applied.try_recv())
        .map(|delivery| delivery.index())
        .collect();
    assert_eq!(
        delivered,
        [LogIndex(1), LogIndex(2)],
        "without an applier pass"
    );
    assert_eq!(rig.node.apply_once(), Pass::WaitUntil(None), "nothing left");
}

#[test]
fn a_paused_node_answers_nothing_and_its_workers_wait() {
    let rig = rig(3, MutationSet::default(), agreeable);
    rig.node.pause();
    let handler = rig.node.rpc_handler();
    assert_eq!(
        handler.handle(Request::AppendEntries(AppendEntriesArgs {
            term: Term(1),
            leader: NodeId(1),
            prev_log_index: LogIndex(0),
            prev_log_term: Term(0),
            entries: vec![],
            leader_commit: LogIndex(0),
            read_round: 0,
            sent_at: threadsim::Instant::ZERO,
        })),
        None
    );
    assert_eq!(rig.node.tick_once(), Pass::WaitUntil(None));
    rig.node.resume();
    assert_ne!(rig.node.tick_once(), Pass::WaitUntil(None));
}

#[test]
fn a_higher_term_left_unadopted_is_reported_by_the_shell_not_the_core() {
    // The broken core ignores a higher term in a reply; the shell's own check catches it.
    let stubborn = MutationSet::only(Mutation::NoStepDownOnHigherTermReply);
    let rig = rig(3, stubborn, |peer, request| match request {
        Request::AppendEntries(args) if peer == NodeId(2) => {
            Some(Response::AppendEntries(AppendEntriesReply {
                term: Term(args.term.0 + 5),
                success: false,
                conflict: None,
                read_round: args.read_round,
            }))
        }
        _ => agreeable(peer, request),
    });
    elect(&rig);
    assert!(rig.events.violations().is_empty());
    rig.node.heartbeat_once(NodeId(2));
    let violations = rig.events.violations();
    assert!(
        violations
            .iter()
            .any(|v| v.contains("saw t6 in a reply but stayed in t1")),
        "{violations:?}"
    );
}

#[test]
fn a_read_waits_for_a_round_that_a_majority_answers_and_a_lone_leader_needs_none() {
    let rig = rig(3, MutationSet::default(), agreeable);
    elect(&rig);
    rig.node.start(Command::from_text("no-op")).expect("leader");
    rig.node.replicate_once(NodeId(1));
    assert_eq!(rig.node.status().commit_index, LogIndex(1));
    let node = Arc::new(rig.node);
    let reader = {
        let node = node.clone();
        std::thread::spawn(move || node.read_index())
    };
    // The heartbeaters' passes, on this thread, until the reader has its answer: a heartbeat
    // sent before the reader asked does not count, the round's does.
    while !reader.is_finished() {
        node.heartbeat_once(NodeId(1));
        std::thread::yield_now();
    }
    assert_eq!(reader.join().expect("reader"), Ok(LogIndex(1)));

    let alone = rig_alone();
    alone.clock.advance(Config::default().election_timeout_max);
    alone.node.tick_once();
    let (index, _) = alone.node.start(Command::from_text("x")).expect("leader");
    assert_eq!(alone.node.read_index(), Ok(index), "no one to ask");
}

/// A cluster of one.
fn rig_alone() -> Rig {
    rig(1, MutationSet::default(), agreeable)
}

#[test]
fn default_parameters_seed_each_node_by_its_id_and_leave_it_out_of_its_peers() {
    let clock: ClockRef = Arc::new(ManualClock::new());
    let (apply_sender, _applied) = channel(&clock, 8, "apply");
    let network = ScriptedNetwork {
        journal: Arc::new(Journal::default()),
        answer: Box::new(|_, _| None),
    };
    let members = [NodeId(1), NodeId(3), NodeId(4)];
    let params = NodeParams::with_defaults(
        NodeId(3),
        &members,
        Arc::new(network),
        Arc::new(RecordingPersister::new()),
        clock,
        apply_sender,
    );
    assert_eq!(params.peers, [NodeId(1), NodeId(4)]);
    // Equal seeds would give every node the same election timeouts: split votes.
    assert_eq!(params.config.seed, 3);
    assert_eq!(
        params.config.election_timeout_min,
        Config::default().election_timeout_min
    );
}

#[test]
fn replication_counts_subtract_add_and_average() {
    let earlier = ReplicationStats {
        appends: 2,
        entries: 5,
    };
    let later = ReplicationStats {
        appends: 6,
        entries: 17,
    };
    let between = later.since(&earlier);
    assert_eq!(
        between,
        ReplicationStats {
            appends: 4,
            entries: 12
        }
    );
    assert_eq!(
        earlier.plus(&later),
        ReplicationStats {
            appends: 8,
            entries: 22
        }
    );
    assert_eq!(between.entries_per_append(), 3.0);
    assert_eq!(ReplicationStats::default().entries_per_append(), 0.0);
}

#[test]
fn a_paused_or_killed_leader_serves_no_reads_and_takes_no_commands() {
    let alone = rig_alone();
    alone.clock.advance(Config::default().election_timeout_max);
    alone.node.tick_once();
    let (index, _) = alone.node.start(Command::from_text("x")).expect("leader");
    assert_eq!(alone.node.lease_read(), Ok(index), "no one to ask");
    alone.node.pause();
    assert!(matches!(
        alone.node.lease_read(),
        Err(ReadIndexError::NotLeader(_))
    ));
    assert!(matches!(
        alone.node.read_index(),
        Err(ReadIndexError::NotLeader(_))
    ));
    assert!(alone.node.start(Command::from_text("y")).is_err());
    alone.node.resume();
    assert_eq!(alone.node.lease_read(), Ok(index));
    alone.node.kill();
    assert!(matches!(
        alone.node.lease_read(),
        Err(ReadIndexError::NotLeader(_))
    ));
    assert!(alone.node.start(Command::from_text("z")).is_err());
}

#[test]
fn dropping_a_node_stops_and_joins_every_thread() {
    let clock: ClockRef = Arc::new(ManualClock::new());
    let (apply_sender, _applied) = channel(&clock, 8, "apply");
    let persister = Arc::new(RecordingPersister::new());
    let network = ScriptedNetwork {
        journal: Arc::new(Journal::default()),
        answer: Box::new(|_, _| None),
    };
    let params = NodeParams::with_defaults(
        NodeId(0),
        &[NodeId(0), NodeId(1), NodeId(2)],
        Arc::new(network),
        persister.clone(),
        clock,
        apply_sender,
    );
    assert_eq!(params.workers, Workers::ALL);
    let node = Node::new(params).expect("valid node");
    assert!(Arc::strong_count(&persister) > 1, "the node holds it");
    drop(node);
    assert_eq!(
        Arc::strong_count(&persister),
        1,
        "a thread of the dropped node still holds its state"
    );
}

#[test]
fn a_local_invariant_the_core_breaks_is_reported_after_the_step() {
    // The broken core truncates its log on a heartbeat that matches an earlier entry, below
    // what it already committed: the shell's check after the step reports it.
    let rig = rig(
        3,
        MutationSet::only(Mutation::TruncateOnMatchingHeartbeat),
        agreeable,
    );
    let handler = rig.node.rpc_handler();
    let append = |prev: u64, texts: &[&str]| {
        Request::AppendEntries(AppendEntriesArgs {
            term: Term(1),
            leader: NodeId(1),
            prev_log_index: LogIndex(prev),
            prev_log_term: Term(u64::from(prev > 0)),
            entries: texts
                .iter()
                .map(|text| Entry {
                    term: Term(1),
                    command: Command::from_text(text),
                })
                .collect(),
            leader_commit: LogIndex(2),
            read_round: 0,
            sent_at: threadsim::Instant::ZERO,
        })
    };
    handler.handle(append(0, &["x", "y"]));
    assert!(rig.events.violations().is_empty());
    handler.handle(append(1, &[]));
    let violations = rig.events.violations();
    assert!(
        violations
            .iter()
            .any(|v| v.contains("commit index #2 beyond last log index #1")),
        "{violations:?}"
    );
}

#[test]
fn a_stored_snapshot_without_its_configuration_is_refused_at_start_with_the_reason() {
    let clock: ClockRef = Arc::new(ManualClock::new());
    let (apply_sender, _applied) = channel(&clock, 8, "apply");
    let network = ScriptedNetwork {
        journal: Arc::new(Journal::default()),
        answer: Box::new(|_, _| None),
    };
    let state = PersistentState {
        log: crate::log::RaftLog::after_snapshot(LogIndex(3), Term(1), Vec::new()),
        snapshot: b"a service state from an older version".to_vec(),
        ..PersistentState::default()
    };
    let persister = Arc::new(crate::persist::MemoryPersister::new());
    persister.save(&state.encode()).expect("in memory");
    let params = NodeParams::with_defaults(
        NodeId(0),
        &[NodeId(0), NodeId(1)],
        Arc::new(network),
        persister,
        clock,
        apply_sender,
    );
    let Err(refused) = Node::new(params) else {
        panic!("started from a snapshot without its configuration");
    };
    assert!(
        refused
            .to_string()
            .contains("does not start with its configuration"),
        "{refused}"
    );
}
