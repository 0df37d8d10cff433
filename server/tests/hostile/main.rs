//! Hostile clients against real `interleave-server` processes: oversized values, garbage frames,
//! huge announced lengths, more connections than a server takes, and frames that would hold
//! more memory than it allows. Every one is refused or closed; honest clerks go on being served
//! throughout, the servers' memory stays within their frame budget, and SIGTERM still stops
//! every server cleanly (exit 0). A test binary of its own: the load it makes must not run
//! beside the process tests that measure elections.
#![cfg(not(any(loom, shuttle)))]

use lab::system::InterleaveServer;
use lab::{LocalCluster, LocalClusterSpec, ServerProgram};
use node::kv::{
    Clerk, ClerkConfig, ClerkError, ClientId, KvOp, KvReply, KvRequest, KvTransport, Part, Seq,
    MAX_VALUE_BYTES,
};
use node::NodeId;
use server::tcp::{ClientProtocol, Protocol, RaftRpc};
use server::wire::admin::AdminRequest;
use server::wire::kv::ClientReply;
use server::TcpKvTransport;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use threadsim::SystemClock;

/// `nodes` `interleave-server` processes in a folder of their own, removed when dropped (after
/// every server is killed).
struct Servers {
    cluster: LocalCluster,
    root: PathBuf,
}

impl Servers {
    fn start(nodes: u32, name: &str) -> Servers {
        let root = std::env::temp_dir().join(format!("interleave-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let cluster = LocalCluster::start(LocalClusterSpec {
            nodes,
            system: InterleaveServer::system(
                ServerProgram {
                    program: env!("CARGO_BIN_EXE_interleave-server").into(),
                    leading_args: Vec::new(),
                },
                vec!["--read-mode".into(), "read-index".into()],
            )
            .expect("random bytes for a key"),
            root: root.clone(),
            network: lab::Network::Direct,
            lossy_disks: false,
            seed: 0,
        })
        .expect("the cluster starts");
        Servers { cluster, root }
    }

    /// Stops every server with SIGTERM: each must exit 0.
    fn stop_cleanly(&mut self) {
        for (id, status) in self.cluster.stop_all(Duration::from_secs(10)) {
            let status = status.unwrap_or_else(|| panic!("{id} did not stop on SIGTERM"));
            assert!(status.success(), "{id}: {status}\n{}", self.cluster.log(id));
        }
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn honest_clerk(servers: &Servers) -> Clerk {
    let clients = servers.cluster.clients();
    Clerk::new(
        clients.keys().copied().collect(),
        Arc::new(TcpKvTransport::new(clients)),
        Arc::new(SystemClock::new()),
        ClerkConfig::default(),
    )
}

/// Whether the server closes `stream` (a read ends or fails) within `limit`.
fn closed_within(mut stream: &TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).expect("timeout");
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(error) => !matches!(
            error.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

/// Where the hostile peer's connections come from: another address than the honest clients'
/// (127.0.0.1), as a stranger elsewhere on the network.
const STRANGER: [u8; 4] = [127, 0, 0, 66];

/// A connection from [`STRANGER`] to `address`.
fn connect_as_stranger(address: SocketAddr) -> TcpStream {
    server::tcp::connect_from(STRANGER.into(), address).expect("connect")
}

/// A connection from [`STRANGER`] to `address` that has sent `bytes`.
fn send_raw(address: SocketAddr, bytes: &[u8]) -> TcpStream {
    let mut stream = connect_as_stranger(address);
    // The server may close before everything is written: that is the point.
    let _ = stream.write_all(bytes);
    stream
}

/// The server's peak resident memory (VmHWM), in MiB.
fn peak_memory_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("VmHWM");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a number");
    kib / 1024
}

#[test]
fn oversized_values_are_refused_with_what_and_how_much_and_the_cluster_goes_on() {
    let mut servers = Servers::start(3, "hostile-values");
    let mut clerk = honest_clerk(&servers);
    clerk.put("k", "before", None).expect("no deadline");
    let transport = TcpKvTransport::new(servers.cluster.clients());
    // Past the clerk's own check: every server refuses a put over the value limit, leader or
    // not, and says what and how much.
    let over = KvRequest::Op {
        client: ClientId(99),
        seq: Seq(1),
        op: KvOp::Put("big".into(), "v".repeat(MAX_VALUE_BYTES + 1)),
    };
    for id in servers.cluster.clients().keys() {
        match transport.call(*id, over.clone(), Duration::from_secs(5)) {
            Ok(KvReply::Refused(refusal)) => {
                assert_eq!(refusal.part, Part::Value);
                assert_eq!(refusal.bytes, MAX_VALUE_BYTES as u64 + 1);
            }
            other => panic!("{id} answered {other:?}"),
        }
    }
    // A 2 MB put (what once wedged the cluster) is over the client frame: its connection is
    // closed, with no answer.
    let two_mb = KvRequest::Op {
        client: ClientId(99),
        seq: Seq(2),
        op: KvOp::Put("big".into(), "v".repeat(2 << 20)),
    };
    assert!(transport
        .call(NodeId(0), two_mb, Duration::from_secs(2))
        .is_err());
    // Appends grow a value up to the limit and not past it.
    clerk
        .put("grown", &"x".repeat(MAX_VALUE_BYTES - 10), None)
        .expect("at the limit");
    clerk
        .append("grown", "0123456789", None)
        .expect("exactly at the limit");
    let refused = clerk
        .append("grown", "y", None)
        .expect_err("past the limit");
    assert!(matches!(refused, ClerkError::Refused(_)), "{refused:?}");
    assert_eq!(
        clerk.get("grown", None).expect("served").len(),
        MAX_VALUE_BYTES
    );
    assert_eq!(clerk.get("k", None).expect("served"), "before");
    servers.stop_cleanly();
}

#[test]
fn garbage_huge_lengths_many_connections_and_memory_hogs_are_closed_and_honest_clients_go_on() {
    let mut servers = Servers::start(1, "hostile-frames");
    let mut clerk = honest_clerk(&servers);
    clerk.put("k", "v", None).expect("no deadline");
    let client_port = servers.cluster.clients()[&NodeId(0)];
    let rpc_port = servers.cluster.rpc_address(NodeId(0));
    let pid = servers.cluster.pid(NodeId(0)).expect("running");
    // Garbage, a length of 4 GiB, and one just over each port's largest request: closed.
    let just_over = |limit: usize| {
        let mut bytes = u32::try_from(limit + 1)
            .expect("small")
            .to_le_bytes()
            .to_vec();
        bytes.extend_from_slice(&[7; 64]);
        bytes
    };
    for (address, limit) in [
        (client_port, ClientProtocol::LIMITS.max_request_bytes),
        (rpc_port, RaftRpc::LIMITS.max_request_bytes),
    ] {
        let garbage: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        for bytes in [garbage, u32::MAX.to_le_bytes().to_vec(), just_over(limit)] {
            let stream = send_raw(address, &bytes);
            assert!(
                closed_within(&stream, Duration::from_secs(5)),
                "{address} kept a connection that sent {} bad bytes",
                bytes.len()
            );
        }
    }
    // More connections from one address than the client port takes in all: the ones past that
    // address's share are closed at once, and the honest clerk, whose connection came first,
    // and a new one that connects while they stand are served.
    let limit = ClientProtocol::LIMITS.max_connections;
    let share = ClientProtocol::LIMITS.max_connections_per_address;
    let idle: Vec<TcpStream> = (0..limit + 20)
        .map(|_| connect_as_stranger(client_port))
        .collect();
    #[allow(clippy::disallowed_methods)] // real processes, real time
    std::thread::sleep(Duration::from_millis(500));
    let closed = idle
        .iter()
        .filter(|stream| closed_within(stream, Duration::from_millis(1)))
        .count();
    // (Connections the stranger made before may still be counted for a moment.)
    assert!(
        closed >= idle.len() - share,
        "{closed} of {} connections closed, not all but the address's share of {share}",
        idle.len()
    );
    clerk
        .put("k", "with many connections open", None)
        .expect("served");
    let mut newcomer = honest_clerk(&servers);
    assert_eq!(
        newcomer.get("k", None).expect("served"),
        "with many connections open"
    );
    drop(idle);
    // Eight connections each announcing 60 MiB on the node port and sending 40 MiB: the
    // frames the server may hold at once (4 x 64 MiB) close the later ones, so its memory
    // stays near the budget instead of 8 x 40 MiB.
    let before = peak_memory_mib(pid);
    let announced = 60usize << 20;
    let chunk = vec![0u8; 1 << 20];
    let mut hogs: Vec<TcpStream> = Vec::new();
    for _ in 0..8 {
        let mut stream = send_raw(rpc_port, &(announced as u32).to_le_bytes());
        for _ in 0..40 {
            if stream.write_all(&chunk).is_err() {
                break;
            }
        }
        hogs.push(stream);
    }
    let peak = peak_memory_mib(pid);
    let budget_mib = (RaftRpc::LIMITS.max_buffered_bytes >> 20) as u64;
    assert!(
        peak <= before + budget_mib,
        "peak memory {peak} MiB, from {before} MiB before, over the frame budget of {budget_mib} MiB"
    );
    drop(hogs);
    clerk.put("k", "after the hogs", None).expect("served");
    assert_eq!(clerk.get("k", None).expect("served"), "after the hogs");
    servers.stop_cleanly();
}

#[test]
fn forged_votes_appends_handovers_and_administrators_requests_from_outside_are_refused() {
    use node::messages::{AppendEntriesArgs, Request, RequestVoteArgs, TimeoutNowArgs};
    use node::{Command, Entry, LogIndex, Term};
    let mut servers = Servers::start(3, "hostile-peers");
    let mut clerk = honest_clerk(&servers);
    clerk.put("k", "v", None).expect("no deadline");
    let vote = |term| {
        Request::RequestVote(RequestVoteArgs {
            term: Term(term),
            candidate: NodeId(1),
            last_log_index: LogIndex(1 << 40),
            last_log_term: Term(0),
            pre_vote: false,
            transfer: true,
        })
    };
    let forged = [
        // The 38-byte vote that once left a cluster at the last term for good.
        vote(u64::MAX),
        vote(1_000),
        Request::AppendEntries(AppendEntriesArgs {
            term: Term(1_000),
            leader: NodeId(1),
            prev_log_index: LogIndex(0),
            prev_log_term: Term(0),
            entries: vec![Entry {
                term: Term(1_000),
                command: Command(vec![0xff, 0, 0x13]),
            }],
            leader_commit: LogIndex(1),
            read_round: 0,
            sent_at: threadsim::Instant::ZERO,
        }),
        Request::TimeoutNow(TimeoutNowArgs {
            term: Term(1_000),
            leader: NodeId(1),
            last_log_index: LogIndex(0),
            last_log_term: Term(0),
        }),
    ];
    for id in (0..3).map(NodeId) {
        let port = servers.cluster.rpc_address(id);
        for request in &forged {
            let mut frame = Vec::new();
            server::wire::frame::write_frame(&mut frame, &RaftRpc::encode_request(1, request))
                .expect("to memory");
            let stream = send_raw(port, &frame);
            assert!(
                closed_within(&stream, Duration::from_secs(5)),
                "{id} answered or kept a forged {request:?}"
            );
        }
    }
    // The administrator's requests from a client without the administrators' key: refused by
    // name on every server (once, two of them took a cluster down to one voter).
    let stranger = TcpKvTransport::new(servers.cluster.clients());
    for request in [
        AdminRequest::Change(node::MembershipChange::Remove(NodeId(0))),
        AdminRequest::Change(node::MembershipChange::Demote(NodeId(1))),
        AdminRequest::Transfer(NodeId(2)),
    ] {
        for &id in servers.cluster.clients().keys() {
            let answer = stranger.admin(id, request, Duration::from_secs(2));
            assert_eq!(
                answer,
                Some(ClientReply::Refused(server::NOT_AN_ADMINISTRATOR.into())),
                "{id} answered {request:?}"
            );
        }
    }
    stranger.close();
    let key = server::tcp::ClusterKey::read(&servers.root.join("admin.key")).expect("the key");
    let administrator = TcpKvTransport::administering(servers.cluster.clients(), key);
    let (_, membership) = server::administer(
        &administrator,
        AdminRequest::Membership,
        Duration::from_secs(10),
    )
    .expect("the administrator is answered");
    assert_eq!(membership.voters().len(), 3, "{membership}");
    administrator.close();
    for (&id, &client_port) in servers.cluster.clients() {
        let status = server::tcp::Caller::<ClientProtocol>::new(client_port, None).call(
            &server::wire::kv::ClientRequest::Status,
            Duration::from_secs(2),
        );
        let Some(server::wire::kv::ClientReply::Status(status)) = status else {
            panic!("{id} answered no status: {status:?}")
        };
        assert!(status.term.0 < 1_000, "{id} took a forged term: {status:?}");
    }
    clerk.put("k", "after the forgeries", None).expect("served");
    assert_eq!(clerk.get("k", None).expect("served"), "after the forgeries");
    let log = servers.cluster.log(NodeId(0));
    assert!(
        log.contains("a connection refused: no cluster handshake"),
        "the refusals are logged:\n{log}"
    );
    servers.stop_cleanly();
}

/// The nemesis's `forged` fault against real servers while a clerk writes: every forged
/// message refused, none unanswered, and the clerk's writes go on.
#[test]
fn the_nemesis_forger_is_refused_everything_while_a_clerk_writes() {
    let mut servers = Servers::start(3, "hostile-forger");
    let mut clerk = honest_clerk(&servers);
    clerk.put("k", "before", None).expect("no deadline");
    let targets = lab::nemesis::Targets::of(&servers.cluster);
    let forger = lab::nemesis::Forger::start(targets).expect("a thread");
    for i in 0..60 {
        clerk
            .append("k", &format!("{i};"), None)
            .expect("served while forged messages arrive");
        #[allow(clippy::disallowed_methods)] // real processes, real time
        std::thread::sleep(Duration::from_millis(50));
    }
    let tally = forger.stop();
    assert!(
        tally.taken.is_empty(),
        "{}: {:?}",
        tally.describe(),
        tally.taken
    );
    assert_eq!(tally.unanswered, 0, "{}", tally.describe());
    assert!(tally.refused >= 12, "{}", tally.describe());
    servers.stop_cleanly();
}
