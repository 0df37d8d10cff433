//! [`InterleaveServer`]: this project's own server as a [`System`]: started with its id, the
//! members, its client address and data directory; clients are the node crate's `Clerk` (a
//! session, retries with one sequence number, the leader found); it cooperates with the
//! nemesis's clock and disk faults (`--allow-faults`), sent as an administrator (`--admin-key`:
//! a key made for the run, in `admin.key` beside the data directories).

use super::{Connection, KvClient, NodeStart, System, Unreachable};
use models::{KvInput, KvOutput};
use node::kv::{Clerk, ClerkConfig, KvOp, KvReply, KvRequest, KvResult, KvTransport};
use node::{NodeId, TransportError};
use server::real_time::{now, sleep_until};
use server::tcp::{auth::KeyError, ClusterKey};
use server::TcpKvTransport;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::time::{Duration, Instant};
use threadsim::{ClockRef, SystemClock};

/// How to start one server: a program and the arguments that come before the server's own
/// (`interleave-server`, or `interleave` with `server`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerProgram {
    /// The executable.
    pub program: PathBuf,
    /// Arguments before the server's own (a subcommand).
    pub leading_args: Vec<String>,
}

/// The project's own server (see the module's documentation).
#[derive(Clone, Debug)]
pub struct InterleaveServer {
    /// The program.
    pub program: ServerProgram,
    /// Arguments every server gets after its id, members, addresses and data directory
    /// (`--read-mode`, `--allow-faults`, ...).
    pub args: Vec<String>,
    /// The administrators' key of the run: the nemesis's membership changes and faults prove
    /// they hold it.
    pub admin_key: ClusterKey,
}

impl InterleaveServer {
    /// `program` with `args`, as a system to start, with a new administrators' key.
    pub fn system(program: ServerProgram, args: Vec<String>) -> Result<Arc<dyn System>, KeyError> {
        Ok(Arc::new(InterleaveServer {
            program,
            args,
            admin_key: ClusterKey::generate()?,
        }))
    }
}

impl System for InterleaveServer {
    fn name(&self) -> String {
        "interleave".into()
    }

    fn command(&self, node: &NodeStart<'_>) -> Command {
        let members = node
            .members
            .iter()
            .map(|(id, address)| format!("{}={address}", id.0))
            .collect::<Vec<_>>()
            .join(",");
        let mut command = Command::new(&self.program.program);
        command
            .args(&self.program.leading_args)
            .args(["--id", &node.id.0.to_string(), "--members", &members])
            .args(["--client-address", &node.client.to_string()])
            .arg("--data-dir")
            .arg(node.data_dir)
            .arg("--cluster-key")
            .arg(cluster_key_beside(node.data_dir))
            .arg("--admin-key")
            .arg(self.admin_key_beside(node.data_dir))
            .args(&self.args);
        command
    }

    fn connect(&self, clients: &BTreeMap<NodeId, SocketAddr>) -> Arc<dyn Connection> {
        Arc::new(InterleaveConnection {
            transport: Arc::new(TcpKvTransport::new(clients)),
            control: TcpKvTransport::administering(clients, self.admin_key.clone()),
        })
    }

    fn appends(&self) -> bool {
        true
    }

    fn takes_an_address_per_link(&self) -> bool {
        true
    }

    fn cannot_use_lossy_disks(&self) -> Option<String> {
        None
    }

    fn stop_bound(&self) -> Duration {
        Duration::from_secs(5)
    }

    fn stopped_cleanly(&self, status: ExitStatus) -> bool {
        status.success()
    }

    fn cooperates(&self) -> bool {
        true
    }
}

/// The cluster's key file, beside the nodes' data directories: written with a new key by the
/// first node started, read by every node. If it cannot be written, the server says so when it
/// starts (a key file that cannot be read is an error, never a cluster without a key).
fn cluster_key_beside(data_dir: &std::path::Path) -> PathBuf {
    let path = data_dir
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .join("cluster.key");
    if path.symlink_metadata().is_err() {
        if let Err(error) = server::tcp::ClusterKey::generate().and_then(|key| key.write(&path)) {
            tracing::warn!("cannot write the cluster key {}: {error}", path.display());
        }
    }
    path
}

impl InterleaveServer {
    /// The run's administrators' key, written beside the nodes' data directories for a server
    /// to read (again before every start: a directory left by an earlier run holds its key).
    fn admin_key_beside(&self, data_dir: &std::path::Path) -> PathBuf {
        let path = data_dir
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join("admin.key");
        if let Err(error) = self.admin_key.write(&path) {
            tracing::warn!(
                "cannot write the administrators' key {}: {error}",
                path.display()
            );
        }
        path
    }
}

/// The clients' transport, and the nemesis's own one beside it, so that its status and fault
/// requests never wait behind a client's.
struct InterleaveConnection {
    transport: Arc<TcpKvTransport>,
    control: TcpKvTransport,
}

impl Connection for InterleaveConnection {
    fn client(&self, unreachable: Option<Unreachable>) -> Box<dyn KvClient> {
        let side: Arc<dyn KvTransport> = match unreachable {
            Some(cut) => Arc::new(WriterSide {
                transport: self.transport.clone(),
                cut,
            }),
            None => self.transport.clone(),
        };
        let clock: ClockRef = Arc::new(SystemClock::new());
        let clerk = Clerk::new(
            self.transport.servers(),
            side,
            clock.clone(),
            ClerkConfig::default(),
        );
        Box::new(InterleaveClient { clerk, clock })
    }

    fn leaders(&self, timeout: Duration) -> Vec<NodeId> {
        self.control.leaders(timeout)
    }

    fn control(&self) -> Option<&TcpKvTransport> {
        Some(&self.control)
    }

    fn close(&self) {
        self.transport.close();
        self.control.close();
    }
}

/// A writer's view of the network: the nodes in `cut` are out of its reach (a call to one waits
/// its timeout and gets no reply).
struct WriterSide {
    transport: Arc<TcpKvTransport>,
    cut: Unreachable,
}

impl KvTransport for WriterSide {
    fn call(
        &self,
        server: NodeId,
        request: KvRequest,
        timeout: Duration,
    ) -> Result<KvReply, TransportError> {
        if self.cut.lock().expect("not poisoned").contains(&server) {
            sleep_until(now() + timeout);
            return Err(TransportError::NoReply(server));
        }
        self.transport.call(server, request, timeout)
    }
}

struct InterleaveClient {
    clerk: Clerk,
    /// The clerk's clock, on which its deadlines are set.
    clock: ClockRef,
}

impl KvClient for InterleaveClient {
    fn execute(&mut self, input: &KvInput, deadline: Instant) -> Option<KvOutput> {
        let op = match input.clone() {
            KvInput::Get(key) => KvOp::Get(key),
            KvInput::Put(key, value) => KvOp::Put(key, value),
            KvInput::Append(key, value) => KvOp::Append(key, value),
        };
        let deadline = self.clock.now() + deadline.saturating_duration_since(now());
        match self.clerk.execute(op, Some(deadline)) {
            Ok(KvResult::Value(value)) => Some(KvOutput::Value(value)),
            Ok(KvResult::Done) => Some(KvOutput::Done),
            Ok(KvResult::Reads(reads)) => unreachable!("a single operation answered {reads:?}"),
            Err(_) => None,
        }
    }
}
