//! The workload's clients: clerks on the simulated network (endpoints `n1000` on), and the
//! client thread that runs single operations back to back and records each in the history.

use crate::cluster::Cluster;
use crate::kv_online::Recorder;
use crate::network::ClientPort;
use models::{KvInput, KvOutput};
use node::kv::{Clerk, ClerkConfig, ClerkError, KvOp, KvReply, KvRequest, KvResult, KvTransport};
use node::{NodeId, TransportError};
use std::time::Duration;
use threadsim::sync::{Arc, Mutex};
use threadsim::DetRng;
use threadsim::Instant;

/// Clerk `index` on `cluster`'s network (endpoint `n{1000 + index}`).
pub fn new_clerk(cluster: &Arc<Cluster>, index: usize, config: ClerkConfig) -> Clerk {
    let transport = Arc::new(SimKvTransport {
        port: cluster.add_client(client_endpoint(index)),
        cluster: cluster.clone(),
    });
    Clerk::new(cluster.ids(), transport, cluster.clock().clone(), config)
}

/// The network id of client `index` (nodes are 0..nodes).
/// The network endpoints of a workload's `clients` clerks (`n1000` ...).
pub fn client_endpoints(clients: usize) -> Vec<NodeId> {
    (0..clients).map(client_endpoint).collect()
}

fn client_endpoint(index: usize) -> NodeId {
    NodeId(1000 + index as u32)
}

/// A clerk's transport: the simulated network to whichever server runs on the target node.
struct SimKvTransport {
    port: ClientPort,
    cluster: Arc<Cluster>,
}

impl KvTransport for SimKvTransport {
    fn call(
        &self,
        server: NodeId,
        request: KvRequest,
        timeout: Duration,
    ) -> Result<KvReply, TransportError> {
        let cluster = &self.cluster;
        self.port.call(server, timeout, || {
            cluster.kv_server(server)?.handle(request)
        })
    }
}

/// One client thread: operations back to back until `end`.
pub(super) struct Client {
    pub(super) read_only: bool,
    pub(super) index: usize,
    pub(super) rng: DetRng,
    pub(super) keys: usize,
    pub(super) op_deadline: Duration,
    pub(super) clock: threadsim::ClockRef,
    pub(super) recorder: Recorder,
    pub(super) sessions_expired: Arc<Mutex<usize>>,
}

impl Client {
    /// Runs operations until `end`, each recorded as it is called and as it returns.
    pub(super) fn run(mut self, clerk: &mut Clerk, end: Instant) {
        let mut counter = 0u64;
        while self.clock.now() < end {
            counter += 1;
            let key = format!("k{}", self.rng.index(self.keys));
            let value = format!("{}.{counter} ", self.index);
            let draw = self.rng.index(10);
            let (op, input) = match if self.read_only { 0 } else { draw } {
                0..=4 => (KvOp::Get(key.clone()), KvInput::Get(key)),
                5..=7 => (
                    KvOp::Put(key.clone(), value.clone()),
                    KvInput::Put(key, value),
                ),
                _ => (
                    KvOp::Append(key.clone(), value.clone()),
                    KvInput::Append(key, value),
                ),
            };
            let Some(called) = self.recorder.call(self.index as u64, input) else {
                return;
            };
            let call = self.clock.now();
            let outcome = clerk.execute(op, Some(call + self.op_deadline));
            let output = match outcome {
                Ok(KvResult::Value(value)) => Some(KvOutput::Value(value)),
                Ok(KvResult::Done) => Some(KvOutput::Done),
                Ok(KvResult::Reads(reads)) => unreachable!("a single operation read {reads:?}"),
                Err(error) => {
                    if let ClerkError::SessionExpired(_) = error {
                        *self.sessions_expired.lock() += 1;
                    }
                    None
                }
            };
            self.recorder.ended(called, output);
        }
    }
}
