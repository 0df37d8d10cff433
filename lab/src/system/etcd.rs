//! [`Etcd`]: etcd (Debian's `etcd-server`, 3.4) as a [`System`], a system nobody here wrote.
//! Each node is one `etcd` process with its name, data directory, peer and client addresses and
//! the whole membership; clients speak its JSON gateway (`/v3/kv/range`, `/v3/kv/put`, keys and
//! values in base64) over kept-alive HTTP; which node leads is its `/v3/maintenance/status`.
//! It has no append and does not cooperate with clock or disk faults, so only the faults from
//! outside reach it; its database is a memory-mapped file, which the lossy file system does not
//! serve. Reads are linearizable, or serializable: answered from the node's own
//! state without asking the others, which etcd documents as possibly stale.

use super::base64;
use super::http::{HttpConnection, HttpError};
use super::{Connection, KvClient, NodeStart, System, Unreachable};
use models::{KvInput, KvOutput};
use node::NodeId;
use serde_json::{json, Value};
use server::real_time::now;
use server::TcpKvTransport;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How etcd's clients read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtcdReads {
    /// Through the leader's quorum (etcd's default, `--consistency=l`).
    Linearizable,
    /// From the node asked, without the others (`--consistency=s`): possibly stale.
    Serializable,
}

impl EtcdReads {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EtcdReads::Linearizable => "linearizable",
            EtcdReads::Serializable => "serializable",
        }
    }
}

/// etcd, started from `program` (see the module's documentation).
#[derive(Clone, Debug)]
pub struct Etcd {
    /// The `etcd` executable.
    pub program: PathBuf,
    /// How its clients read.
    pub reads: EtcdReads,
}

impl Etcd {
    /// Whether an `etcd` program can be run; `Err` says why not.
    pub fn available(program: &std::path::Path) -> Result<(), crate::Unavailable> {
        match Command::new(program).arg("--version").output() {
            Ok(output) if output.status.success() => Ok(()),
            Ok(output) => Err(crate::Unavailable::VersionFailed {
                program: program.to_path_buf(),
                status: output.status,
            }),
            Err(source) => Err(crate::Unavailable::CannotRun {
                program: program.to_path_buf(),
                source,
                package: "etcd-server",
            }),
        }
    }
}

fn url(address: SocketAddr) -> String {
    format!("http://{address}")
}

impl System for Etcd {
    fn name(&self) -> String {
        format!("etcd ({} reads)", self.reads.name())
    }

    fn command(&self, node: &NodeStart<'_>) -> Command {
        let cluster = node
            .members
            .iter()
            .map(|(id, address)| format!("{id}={}", url(*address)))
            .collect::<Vec<_>>()
            .join(",");
        let mut command = Command::new(&self.program);
        command
            .args(["--name", &node.id.to_string()])
            .arg("--data-dir")
            .arg(node.data_dir)
            .args(["--listen-peer-urls", &url(node.listen)])
            .args([
                "--initial-advertise-peer-urls",
                &url(node.members[&node.id]),
            ])
            .args(["--listen-client-urls", &url(node.client)])
            .args(["--advertise-client-urls", &url(node.client)])
            .args(["--initial-cluster", &cluster])
            .args(["--initial-cluster-state", "new"])
            .args(["--initial-cluster-token", "interleave"]);
        command
    }

    fn connect(&self, clients: &BTreeMap<NodeId, SocketAddr>) -> Arc<dyn Connection> {
        Arc::new(EtcdConnection {
            clients: clients.clone(),
            reads: self.reads,
            made: AtomicUsize::new(0),
            status: Mutex::new(
                clients
                    .iter()
                    .map(|(&id, &address)| (id, HttpConnection::new(address)))
                    .collect(),
            ),
        })
    }

    fn appends(&self) -> bool {
        false
    }

    fn takes_an_address_per_link(&self) -> bool {
        false
    }

    fn cannot_use_lossy_disks(&self) -> Option<String> {
        Some(
            "etcd maps its database file into memory, and the lossy file system serves direct \
             I/O only (mmap fails with ENODEV)"
                .into(),
        )
    }

    fn stop_bound(&self) -> Duration {
        // A leader asked to stop first hands its leadership over, waiting up to etcd's request
        // timeout (5 s and two election timeouts) for a follower that may be stopping too.
        Duration::from_secs(10)
    }

    fn stopped_cleanly(&self, status: ExitStatus) -> bool {
        // etcd stops on SIGTERM and then ends itself with the signal, as Go programs that
        // clean up on a signal do.
        status.success() || status.signal() == Some(libc::SIGTERM)
    }

    fn cooperates(&self) -> bool {
        false
    }
}

struct EtcdConnection {
    clients: BTreeMap<NodeId, SocketAddr>,
    reads: EtcdReads,
    /// How many clients it has made: each starts at the next node, so the readers are spread
    /// over the nodes and one of them asks the node a partition cuts off.
    made: AtomicUsize,
    /// The nemesis's own connection to each node, for its status.
    status: Mutex<BTreeMap<NodeId, HttpConnection>>,
}

impl Connection for EtcdConnection {
    fn client(&self, unreachable: Option<Unreachable>) -> Box<dyn KvClient> {
        let connections: BTreeMap<NodeId, HttpConnection> = self
            .clients
            .iter()
            .map(|(&id, &address)| (id, HttpConnection::new(address)))
            .collect();
        let ids: Vec<NodeId> = connections.keys().copied().collect();
        let first = ids[self.made.fetch_add(1, Ordering::Relaxed) % ids.len()];
        Box::new(EtcdClient {
            connections,
            unreachable,
            current: first,
            reads: self.reads,
        })
    }

    fn leaders(&self, timeout: Duration) -> Vec<NodeId> {
        let mut status = self.status.lock().expect("not poisoned");
        let mut leaders = Vec::new();
        for (&id, connection) in status.iter_mut() {
            let deadline = now() + timeout;
            let Ok((200, body)) = connection.post("/v3/maintenance/status", "{}", deadline) else {
                continue;
            };
            let Ok(reply) = serde_json::from_str::<Value>(&body) else {
                continue;
            };
            let member = reply["header"]["member_id"].as_str();
            if member.is_some() && member == reply["leader"].as_str() {
                leaders.push(id);
            }
        }
        leaders
    }

    fn control(&self) -> Option<&TcpKvTransport> {
        None
    }

    fn close(&self) {
        self.status.lock().expect("not poisoned").clear();
    }
}

/// One client: a connection to each node, and the node it asks now. It stays with a node
/// while that node answers (a reader so keeps asking a node a partition cut off) and moves on
/// when it does not, or when a writer cannot reach it.
struct EtcdClient {
    connections: BTreeMap<NodeId, HttpConnection>,
    unreachable: Option<Unreachable>,
    current: NodeId,
    reads: EtcdReads,
}

impl EtcdClient {
    fn reachable(&self, node: NodeId) -> bool {
        self.unreachable
            .as_ref()
            .is_none_or(|cut| !cut.lock().expect("not poisoned").contains(&node))
    }

    /// Moves to the next node around.
    fn next_node(&mut self) {
        let ids: Vec<NodeId> = self.connections.keys().copied().collect();
        let at = ids.iter().position(|&id| id == self.current).unwrap_or(0);
        self.current = ids[(at + 1) % ids.len()];
    }
}

impl KvClient for EtcdClient {
    fn execute(&mut self, input: &KvInput, deadline: Instant) -> Option<KvOutput> {
        let (path, body) = match input {
            KvInput::Get(key) => (
                "/v3/kv/range",
                json!({
                    "key": base64::encode(key.as_bytes()),
                    "serializable": self.reads == EtcdReads::Serializable,
                }),
            ),
            KvInput::Put(key, value) => (
                "/v3/kv/put",
                json!({
                    "key": base64::encode(key.as_bytes()),
                    "value": base64::encode(value.as_bytes()),
                }),
            ),
            KvInput::Append(..) => panic!("etcd's clients do not append"),
        };
        let body = body.to_string();
        // A node that cannot be reached, or refuses the connection, was sent nothing: try the
        // next one while there is time.
        for _ in 0..self.connections.len() {
            if !self.reachable(self.current) {
                self.next_node();
                continue;
            }
            let connection = self.connections.get_mut(&self.current).expect("known");
            match connection.post(path, &body, deadline) {
                Ok((200, reply)) => return output(input, &reply),
                Err(HttpError::NotSent) => self.next_node(),
                // An error after the request went (a timeout, "no leader", a lost
                // connection): it may have been applied.
                Ok(_) | Err(HttpError::Unknown) => {
                    self.next_node();
                    return None;
                }
            }
            if now() >= deadline {
                return None;
            }
        }
        None
    }
}

/// What a successful reply to `input` says.
fn output(input: &KvInput, reply: &str) -> Option<KvOutput> {
    match input {
        KvInput::Get(_) => {
            let reply: Value = serde_json::from_str(reply).ok()?;
            let value = match reply["kvs"].as_array().and_then(|kvs| kvs.first()) {
                // A value set to empty is left out of the JSON.
                Some(kv) => base64::decode(kv["value"].as_str().unwrap_or(""))?,
                None => Vec::new(),
            };
            String::from_utf8(value).ok().map(KvOutput::Value)
        }
        _ => Some(KvOutput::Done),
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_range_reply_gives_the_value_or_the_empty_string() {
        let get = KvInput::Get("k".into());
        let found = r#"{"header":{},"kvs":[{"key":"aw==","value":"djE="}],"count":"1"}"#;
        assert_eq!(output(&get, found), Some(KvOutput::Value("v1".into())));
        assert_eq!(
            output(&get, r#"{"header":{}}"#),
            Some(KvOutput::Value(String::new()))
        );
        assert_eq!(output(&get, "not json"), None);
        let put = KvInput::Put("k".into(), "v".into());
        assert_eq!(output(&put, "{}"), Some(KvOutput::Done));
    }

    #[test]
    fn a_node_is_started_with_the_whole_membership_and_its_own_addresses() {
        let members: BTreeMap<NodeId, SocketAddr> = [
            (NodeId(0), "10.213.0.10:7000".parse().unwrap()),
            (NodeId(1), "10.213.0.11:7000".parse().unwrap()),
        ]
        .into();
        let etcd = Etcd {
            program: "etcd".into(),
            reads: EtcdReads::Linearizable,
        };
        let command = etcd.command(&NodeStart {
            id: NodeId(1),
            members: &members,
            listen: "10.213.0.11:7000".parse().unwrap(),
            client: "10.213.0.11:7100".parse().unwrap(),
            data_dir: std::path::Path::new("/data/n1"),
        });
        let args: Vec<String> = command
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        let line = args.join(" ");
        assert!(line.starts_with("--name n1 --data-dir /data/n1"), "{line}");
        assert!(
            line.contains(
                "--initial-cluster n0=http://10.213.0.10:7000,n1=http://10.213.0.11:7000"
            ),
            "{line}"
        );
        assert!(
            line.contains("--advertise-client-urls http://10.213.0.11:7100"),
            "{line}"
        );
    }
}
