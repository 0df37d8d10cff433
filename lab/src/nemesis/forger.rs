//! The `forged` fault: a process outside the cluster, holding neither key, sends every node
//! what would hurt it if taken (the hostile peer of issue 59): on node ports, a vote at the last
//! term, a vote and a handover at a term far ahead, an append carrying an entry no store can
//! decode, a frame announcing 60 MiB, a handshake under another cluster's key; on client ports,
//! the administrator's requests (remove, demote, transfer) and the nemesis's own faults (a
//! failing disk, a clock an hour ahead). Each is sent on a connection of its own, round after
//! round until the fault is healed, and each must be refused: a node port closes the connection
//! unanswered, a client port answers `Refused` naming the administrators' key. One answered or
//! taken is a finding.

use node::messages::{AppendEntriesArgs, Request, RequestVoteArgs, TimeoutNowArgs};
use node::{Command, Entry, LogIndex, MembershipChange, NodeId, Term};
use server::real_time::{now, sleep_until};
use server::tcp::{Caller, ClusterKey, Protocol, RaftRpc};
use server::wire::admin::AdminRequest;
use server::wire::frame::write_frame;
use server::wire::kv::{ClientReply, ClockChange};
use server::{FaultError, TcpKvTransport};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a forged message waits for its refusal: a closed connection or a `Refused`.
const PATIENCE: Duration = Duration::from_secs(2);
/// The pause between two rounds.
const BETWEEN_ROUNDS: Duration = Duration::from_millis(200);
/// A term far past any a run reaches, and under the ceiling a node refuses above.
const FAR_TERM: Term = Term(1 << 40);

/// What came of the forged messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Messages sent.
    pub sent: u64,
    /// Refused as they must be.
    pub refused: u64,
    /// Neither refused nor answered (a node down for another reason, a connection that could
    /// not be made).
    pub unanswered: u64,
    /// What was answered or taken, and by whom: each a finding.
    pub taken: Vec<String>,
}

impl Tally {
    /// The tally in a line.
    pub fn describe(&self) -> String {
        format!(
            "{} forged messages: {} refused, {} unanswered, {} taken",
            self.sent,
            self.refused,
            self.unanswered,
            self.taken.len()
        )
    }
}

/// Where the forger sends: each node's node port and client port.
#[derive(Clone, Debug)]
pub struct Targets {
    /// Node ports, by node.
    pub node_ports: BTreeMap<NodeId, SocketAddr>,
    /// Client ports, by node.
    pub client_ports: BTreeMap<NodeId, SocketAddr>,
}

impl Targets {
    /// Every node of `cluster`: where a stranger reaches its node port and its client port.
    pub fn of(cluster: &crate::LocalCluster) -> Targets {
        Targets {
            node_ports: cluster
                .ids()
                .into_iter()
                .map(|node| (node, cluster.rpc_address(node)))
                .collect(),
            client_ports: cluster.clients().clone(),
        }
    }
}

/// The forger at work (see the module's documentation); [`Forger::stop`] ends it.
#[derive(Debug)]
pub struct Forger {
    stopping: Arc<AtomicBool>,
    tally: Arc<Mutex<Tally>>,
    thread: Option<JoinHandle<()>>,
}

impl Forger {
    /// Starts sending forged messages to `targets`, one round after another.
    pub fn start(targets: Targets) -> std::io::Result<Forger> {
        let stopping = Arc::new(AtomicBool::new(false));
        let tally = Arc::new(Mutex::new(Tally::default()));
        let thread = {
            let stopping = stopping.clone();
            let tally = tally.clone();
            std::thread::Builder::new()
                .name("forger".into())
                .spawn(move || {
                    let mut round = 0usize;
                    while !stopping.load(Ordering::SeqCst) {
                        forge_round(&targets, round, &tally, &stopping);
                        round += 1;
                        sleep_until(now() + BETWEEN_ROUNDS);
                    }
                })?
        };
        Ok(Forger {
            stopping,
            tally,
            thread: Some(thread),
        })
    }

    /// Stops it (after the message under way) and says what came of every message.
    pub fn stop(mut self) -> Tally {
        self.stopping.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.tally.lock().expect("not poisoned").clone()
    }
}

impl Drop for Forger {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What one forged message came to.
enum Verdict {
    Refused,
    Unanswered,
    Taken(String),
}

/// Sends every node one forged message on each of its ports: which, by `round`.
fn forge_round(targets: &Targets, round: usize, tally: &Mutex<Tally>, stopping: &AtomicBool) {
    let nodes: Vec<NodeId> = targets.node_ports.keys().copied().collect();
    for (position, &node) in nodes.iter().enumerate() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        let other = nodes[(position + 1) % nodes.len()];
        let verdicts = [
            forge_on_node_port(targets.node_ports[&node], round, other),
            forge_on_client_port(&targets.client_ports, node, round, other),
        ];
        let mut tally = tally.lock().expect("not poisoned");
        for verdict in verdicts {
            tally.sent += 1;
            match verdict {
                Verdict::Refused => tally.refused += 1,
                Verdict::Unanswered => tally.unanswered += 1,
                Verdict::Taken(what) => tally.taken.push(format!("{node} {what}")),
            }
        }
    }
}

/// The node-port forgeries, in turn.
const NODE_PORT_FORGERIES: usize = 6;

fn forge_on_node_port(port: SocketAddr, round: usize, other: NodeId) -> Verdict {
    let vote = |term, transfer| {
        Request::RequestVote(RequestVoteArgs {
            term,
            candidate: other,
            last_log_index: LogIndex(1 << 40),
            last_log_term: Term(0),
            pre_vote: false,
            transfer,
        })
    };
    let request = match round % NODE_PORT_FORGERIES {
        0 => vote(Term(u64::MAX), false),
        1 => vote(FAR_TERM, true),
        2 => Request::AppendEntries(AppendEntriesArgs {
            term: FAR_TERM,
            leader: other,
            prev_log_index: LogIndex(0),
            prev_log_term: Term(0),
            entries: vec![Entry {
                term: FAR_TERM,
                command: Command(vec![0xff, 0, 0x13]),
            }],
            leader_commit: LogIndex(1),
            read_round: 0,
            sent_at: threadsim::Instant::ZERO,
        }),
        3 => Request::TimeoutNow(TimeoutNowArgs {
            term: FAR_TERM,
            leader: other,
            last_log_index: LogIndex(0),
            last_log_term: Term(0),
        }),
        4 => return huge_frame(port),
        _ => return another_clusters_key(port, &vote(FAR_TERM, false)),
    };
    let mut frame = Vec::new();
    write_frame(&mut frame, &RaftRpc::encode_request(1, &request)).expect("to memory");
    let what = format!("answered a forged {}", kind_of(&request));
    sent_and_closed(port, &frame, &what)
}

fn kind_of(request: &Request) -> &'static str {
    match request {
        Request::RequestVote(args) if args.term == Term(u64::MAX) => "vote at the last term",
        Request::RequestVote(_) => "vote far ahead",
        Request::AppendEntries(_) => "append of an undecodable entry",
        Request::TimeoutNow(_) => "TimeoutNow",
        _ => "request",
    }
}

/// A frame announcing 60 MiB, and 1 MiB of it: the port must close before reading it.
fn huge_frame(port: SocketAddr) -> Verdict {
    let mut bytes = (60u32 << 20).to_le_bytes().to_vec();
    bytes.resize(bytes.len() + (1 << 20), 0);
    sent_and_closed(port, &bytes, "read a frame announcing 60 MiB")
}

/// A call proving it holds another cluster's key: refused at the handshake.
fn another_clusters_key(port: SocketAddr, request: &Request) -> Verdict {
    let Ok(key) = ClusterKey::generate() else {
        return Verdict::Unanswered;
    };
    let caller = Caller::<RaftRpc>::new(port, Some(key));
    let answer = caller.call(request, PATIENCE);
    caller.close();
    match answer {
        None => Verdict::Refused,
        Some(_) => Verdict::Taken("answered a member of another cluster".into()),
    }
}

/// Sends `bytes` on a connection of its own: refused if the port closes it without a byte back.
fn sent_and_closed(port: SocketAddr, bytes: &[u8], taken: &str) -> Verdict {
    let Ok(mut stream) = TcpStream::connect_timeout(&port, PATIENCE) else {
        return Verdict::Unanswered;
    };
    // The port may close before everything is written: that is a refusal too.
    let _ = stream.write_all(bytes);
    match closed_unanswered(&mut stream) {
        Some(true) => Verdict::Refused,
        Some(false) => Verdict::Taken(taken.to_string()),
        None => Verdict::Unanswered,
    }
}

/// Whether the other side closed `stream` without sending a byte (`Some(false)`: it sent one;
/// `None`: neither within [`PATIENCE`]).
fn closed_unanswered(stream: &mut TcpStream) -> Option<bool> {
    stream.set_read_timeout(Some(PATIENCE)).ok()?;
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => Some(true),
        Ok(_) => Some(false),
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            None
        }
        Err(_) => Some(true),
    }
}

/// The client-port forgeries, in turn.
const CLIENT_PORT_FORGERIES: usize = 5;

fn forge_on_client_port(
    client_ports: &BTreeMap<NodeId, SocketAddr>,
    node: NodeId,
    round: usize,
    other: NodeId,
) -> Verdict {
    let transport = TcpKvTransport::new(&BTreeMap::from([(node, client_ports[&node])]));
    let (what, answer) = match round % CLIENT_PORT_FORGERIES {
        0 => (
            "remove",
            transport.admin(
                node,
                AdminRequest::Change(MembershipChange::Remove(node)),
                PATIENCE,
            ),
        ),
        1 => (
            "demote",
            transport.admin(
                node,
                AdminRequest::Change(MembershipChange::Demote(node)),
                PATIENCE,
            ),
        ),
        2 => (
            "transfer",
            transport.admin(node, AdminRequest::Transfer(other), PATIENCE),
        ),
        3 => ("failing disk", refusal(transport.fail_disk(node, PATIENCE))),
        _ => (
            "clock an hour ahead",
            refusal(transport.set_clock(
                node,
                ClockChange {
                    rate_ppm: 1_000_000,
                    jump: Duration::from_secs(3600),
                },
                PATIENCE,
            )),
        ),
    };
    transport.close();
    match answer {
        Some(ClientReply::Refused(why)) if why == server::NOT_AN_ADMINISTRATOR => Verdict::Refused,
        None => Verdict::Unanswered,
        Some(other) => Verdict::Taken(format!(
            "answered a stranger's {what} with {other:?}, not the administrators' refusal"
        )),
    }
}

/// A fault request's answer as a reply: its refusal's words, or what else came.
fn refusal(answer: Result<server::wire::kv::StatusReport, FaultError>) -> Option<ClientReply> {
    match answer {
        Ok(status) => Some(ClientReply::Status(status)),
        Err(FaultError::NoAnswer { .. }) => None,
        Err(why) => Some(ClientReply::Refused(why.to_string())),
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use node::messages::{RequestVoteReply, Response};
    use server::tcp::{Admission, ClientProtocol, Handler, Listener};
    use server::wire::kv::StatusReport;

    /// The forger against a server that trusts strangers (no key on its node port, every
    /// client's request answered): every forgery such a server takes is found.
    #[test]
    fn the_forger_finds_every_forgery_a_trusting_server_takes() {
        let rpc: Handler<RaftRpc> = Arc::new(|_, _| {
            Some(Response::RequestVote(RequestVoteReply {
                term: Term(1),
                vote_granted: false,
            }))
        });
        let status = StatusReport {
            term: Term(1),
            leader: true,
            commit_index: LogIndex(0),
            last_applied: LogIndex(0),
            last_log_index: LogIndex(0),
        };
        let clients: Handler<ClientProtocol> =
            Arc::new(move |_, _| Some(ClientReply::Status(status)));
        let loopback: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let node_port = Listener::bind::<RaftRpc>(loopback, rpc, Admission::Anyone).unwrap();
        let client_port =
            Listener::bind::<ClientProtocol>(loopback, clients, Admission::Anyone).unwrap();
        let targets = Targets {
            node_ports: BTreeMap::from([(NodeId(0), node_port.local_addr())]),
            client_ports: BTreeMap::from([(NodeId(0), client_port.local_addr())]),
        };
        let tally = Mutex::new(Tally::default());
        for round in 0..NODE_PORT_FORGERIES.max(CLIENT_PORT_FORGERIES) {
            forge_round(&targets, round, &tally, &AtomicBool::new(false));
        }
        let tally = tally.into_inner().unwrap();
        let taken = |what: &str| tally.taken.iter().any(|line| line.contains(what));
        // The wire itself refuses a term past the ceiling, and a handshake is no request.
        for what in [
            "vote far ahead",
            "append of an undecodable entry",
            "TimeoutNow",
            "stranger's remove",
            "stranger's demote",
            "stranger's transfer",
            "stranger's failing disk",
            "stranger's clock an hour ahead",
        ] {
            assert!(taken(what), "{what} not found among {:?}", tally.taken);
        }
        assert!(!taken("vote at the last term"), "{:?}", tally.taken);
        assert_eq!(tally.sent, 12);
    }
}
