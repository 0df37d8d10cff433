//! The node in real time: system clock, in-process transport without artificial delays.
#![cfg(not(any(loom, shuttle)))]

use node::{Applied, Delivery, LogIndex};
use node::{
    Command, LocalNetwork, MemoryPersister, Node, NodeError, NodeId, NodeParams, Persister,
    StorageError,
};
use std::sync::Arc;
use std::time::Duration;
use threadsim::sync::atomic::{AtomicU64, Ordering};
use threadsim::{channel, ClockRef, Receiver, SystemClock};

/// A persister that counts its saves.
#[derive(Default)]
struct CountingPersister {
    inner: MemoryPersister,
    saves: AtomicU64,
}

impl Persister for CountingPersister {
    fn save(&self, bytes: &[u8]) -> Result<(), StorageError> {
        self.saves.fetch_add(1, Ordering::SeqCst);
        self.inner.save(bytes)
    }
    fn load(&self) -> Result<Option<Vec<u8>>, StorageError> {
        self.inner.load()
    }
}

struct RealCluster {
    clock: ClockRef,
    nodes: Vec<Node>,
    applied: Vec<Receiver<Delivery>>,
    disks: Vec<Arc<CountingPersister>>,
}

fn params(
    clock: &ClockRef,
    network: &Arc<LocalNetwork>,
    id: NodeId,
    disk: Arc<dyn Persister>,
) -> (NodeParams, Receiver<Delivery>) {
    let (apply_sender, receiver) = channel(clock, 64, "apply");
    let members: Vec<NodeId> = (0..3).map(NodeId).collect();
    let params = NodeParams::with_defaults(
        id,
        &members,
        network.clone(),
        disk,
        clock.clone(),
        apply_sender,
    );
    (params, receiver)
}

fn real_cluster() -> RealCluster {
    let clock: ClockRef = Arc::new(SystemClock::new());
    let network = LocalNetwork::new(clock.clone(), Duration::from_millis(20));
    let mut cluster = RealCluster {
        clock: clock.clone(),
        nodes: vec![],
        applied: vec![],
        disks: vec![],
    };
    for id in (0..3).map(NodeId) {
        let disk = Arc::new(CountingPersister::default());
        let (params, receiver) = params(&clock, &network, id, disk.clone());
        let node = Node::new(params).expect("valid node");
        network.register(id, node.rpc_handler());
        cluster.nodes.push(node);
        cluster.applied.push(receiver);
        cluster.disks.push(disk);
    }
    cluster
}

fn commit(cluster: &RealCluster, text: &str) -> LogIndex {
    for _ in 0..500 {
        if let Some(Ok((index, _))) = cluster
            .nodes
            .iter()
            .map(|n| n.start(Command::from_text(text)))
            .find(Result::is_ok)
        {
            return index;
        }
        cluster.clock.sleep(Duration::from_millis(10));
    }
    panic!("no leader accepted {text} within 5 s");
}

#[test]
fn elects_a_leader_and_commits_in_real_time() {
    let cluster = real_cluster();
    let index = commit(&cluster, "hello");
    for receiver in &cluster.applied {
        let Some(Delivery::Entry(entry)) = receiver.recv() else {
            panic!("the entry first")
        };
        assert_eq!(
            (entry.index, entry.command),
            (index, Command::from_text("hello"))
        );
    }
    let leaders = cluster.nodes.iter().filter(|n| n.state().1).count();
    assert_eq!(leaders, 1);
}

#[test]
fn a_killed_node_persists_applies_and_answers_nothing() {
    let cluster = real_cluster();
    commit(&cluster, "before");
    let victim = 2;
    cluster.nodes[victim].kill();
    let saves = cluster.disks[victim].saves.load(Ordering::SeqCst);
    while cluster.applied[victim].try_recv().is_some() {}
    // The others keep going and keep calling the dead node's handler.
    let handler = cluster.nodes[victim].rpc_handler();
    commit(&cluster, "after");
    cluster.clock.sleep(Duration::from_millis(300));
    assert_eq!(
        cluster.disks[victim].saves.load(Ordering::SeqCst),
        saves,
        "persisted after kill"
    );
    assert_eq!(cluster.applied[victim].recv(), None, "applied after kill");
    let request = node::messages::Request::RequestVote(node::messages::RequestVoteArgs {
        pre_vote: false,
        transfer: false,
        term: node::Term(1000),
        candidate: NodeId(0),
        last_log_index: LogIndex(0),
        last_log_term: node::Term(0),
    });
    assert_eq!(handler.handle(request), None, "answered after kill");
}

#[test]
fn a_node_refuses_to_start_on_corrupt_storage() {
    let clock: ClockRef = Arc::new(SystemClock::new());
    let network = LocalNetwork::new(clock.clone(), Duration::from_millis(20));
    let disk = Arc::new(MemoryPersister::new());
    disk.save(b"not a raft state")
        .expect("memory never crashes");
    let (params, _receiver) = params(&clock, &network, NodeId(0), disk);
    match Node::new(params) {
        Err(NodeError::Storage(StorageError::Corrupt(reason))) => {
            assert!(reason.contains("shorter"), "{reason}")
        }
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("started on corrupt storage"),
    }
}

/// A key-value server on a one-node cluster in real time, with a handle on its node.
fn lone_kv_server(read_mode: node::kv::ReadMode) -> (Arc<Node>, node::kv::KvServer) {
    use node::kv::{KvObserver, KvServer, KvServerConfig, ReadMode};
    struct Unobserved;
    impl KvObserver for Unobserved {
        fn on_applied(&self, _node: NodeId, _applied: &Applied) {}
        fn on_local_read(&self, _node: NodeId, _term: node::Term, _mode: ReadMode) {}
    }
    let clock: ClockRef = Arc::new(SystemClock::new());
    let network = LocalNetwork::new(clock.clone(), Duration::from_millis(20));
    let (apply_sender, receiver) = channel(&clock, 64, "apply");
    let params = NodeParams::with_defaults(
        NodeId(0),
        &[NodeId(0)],
        network,
        Arc::new(MemoryPersister::new()),
        clock.clone(),
        apply_sender,
    );
    let node = Arc::new(Node::new(params).expect("valid node"));
    let server = KvServer::start(
        node.clone(),
        receiver,
        clock,
        KvServerConfig {
            read_mode,
            ..KvServerConfig::default()
        },
        Arc::new(Unobserved),
    );
    (node, server)
}

fn request(client: node::kv::ClientId, seq: u64, op: node::kv::KvOp) -> node::kv::KvRequest {
    node::kv::KvRequest::Op {
        client,
        seq: node::kv::Seq(seq),
        op,
    }
}

/// Registers a session and puts `k = v` in it through `server` once its lone node leads;
/// returns the session's id.
fn put_once_leading(server: &node::kv::KvServer) -> node::kv::ClientId {
    use node::kv::{KvOp, KvReply, KvRequest, KvResult};
    let clock = SystemClock::new();
    let mut client = None;
    for _ in 0..200 {
        if let Some(KvReply::Registered(id)) = server.handle(KvRequest::Register) {
            client = Some(id);
            break;
        }
        threadsim::Clock::sleep(&clock, Duration::from_millis(10));
    }
    let client = client.expect("a lone node leads and registers a client");
    let put = KvOp::Put("k".into(), "v".into());
    assert_eq!(
        server.handle(request(client, 1, put)),
        Some(KvReply::Ok(KvResult::Done)),
        "a lone leader applies a put"
    );
    client
}

#[test]
fn unsafe_local_reads_are_served_by_the_node_that_believes_it_leads() {
    use node::kv::{KvOp, KvReply, KvResult, ReadMode};
    let (_node, server) = lone_kv_server(ReadMode::UnsafeLocal);
    let client = put_once_leading(&server);
    assert_eq!(
        server.handle(request(client, 2, KvOp::Get("k".into()))),
        Some(KvReply::Ok(KvResult::Value("v".into())))
    );
}

#[test]
fn a_killed_or_dropped_kv_server_answers_nothing_and_stops_its_node() {
    use node::kv::{KvOp, ReadMode};
    let (node, server) = lone_kv_server(ReadMode::Log);
    let client = put_once_leading(&server);
    server.kill();
    assert!(node.is_stopped(), "killing the server kills its node");
    assert_eq!(
        server.handle(request(client, 2, KvOp::Get("k".into()))),
        None
    );

    let (node, server) = lone_kv_server(ReadMode::Log);
    drop(server);
    assert!(node.is_stopped(), "dropping the server kills its node");
}

#[test]
fn an_entry_that_is_no_command_is_applied_as_a_counted_no_op_and_the_store_goes_on() {
    use node::kv::{KvOp, KvReply, KvResult, ReadMode};
    let (node, server) = lone_kv_server(ReadMode::Log);
    let client = put_once_leading(&server);
    // What a forged AppendEntries once put into every store: bytes no clerk encodes. Every
    // server panicked applying it, and again after every restart.
    node.start(node::Command(vec![0xff, 0x00, 0x13]))
        .expect("a lone leader takes any command");
    assert_eq!(
        server.handle(request(client, 2, KvOp::Get("k".into()))),
        Some(KvReply::Ok(KvResult::Value("v".into()))),
        "applied after the refused entry: the store goes on"
    );
    assert_eq!(server.refused_entries(), 1);
}
