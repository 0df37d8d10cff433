//! [`Clerk`]: the client library of the key-value service.

use super::{ClientId, KvOp, KvReply, KvRequest, KvResult, Seq};
use crate::transport::TransportError;
use crate::NodeId;
use std::time::Duration;
use threadsim::clock::ClockRef;
use threadsim::sync::Arc;
use threadsim::Instant;

/// How a clerk reaches the servers (the simulated network in tests).
pub trait KvTransport: Send + Sync {
    /// Sends `request` to `server` and waits at most `timeout` for its reply.
    fn call(
        &self,
        server: NodeId,
        request: KvRequest,
        timeout: Duration,
    ) -> Result<KvReply, TransportError>;
}

/// Timing of a clerk.
#[derive(Clone, Debug)]
pub struct ClerkConfig {
    /// How long one call waits for a reply (longer than the server's wait timeout).
    pub call_timeout: Duration,
    /// Pause after every server was tried once without success.
    pub retry_pause: Duration,
}

impl Default for ClerkConfig {
    fn default() -> Self {
        ClerkConfig {
            call_timeout: Duration::from_millis(200),
            retry_pause: Duration::from_millis(50),
        }
    }
}

/// The clerk stopped retrying at the caller's deadline: the operation may or may not take effect
/// (its outcome is unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("gave up after {attempts} attempts; the operation may still take effect")]
pub struct GaveUp {
    /// Calls made.
    pub attempts: u64,
}

/// A client of the store: one operation at a time, each retried with the same sequence number
/// until a server answers it or the caller's deadline passes.
pub struct Clerk {
    id: ClientId,
    next_seq: Seq,
    servers: Vec<NodeId>,
    leader: usize,
    transport: Arc<dyn KvTransport>,
    clock: ClockRef,
    config: ClerkConfig,
}

impl Clerk {
    /// A clerk `id` for the cluster of `servers`.
    pub fn new(
        id: ClientId,
        servers: Vec<NodeId>,
        transport: Arc<dyn KvTransport>,
        clock: ClockRef,
        config: ClerkConfig,
    ) -> Clerk {
        assert!(!servers.is_empty(), "a clerk needs at least one server");
        Clerk {
            id,
            next_seq: Seq(1),
            servers,
            leader: 0,
            transport,
            clock,
            config,
        }
    }

    /// This clerk's id.
    pub fn id(&self) -> ClientId {
        self.id
    }

    /// Reads `key`.
    pub fn get(&mut self, key: &str, deadline: Option<Instant>) -> Result<String, GaveUp> {
        match self.execute(KvOp::Get(key.to_string()), deadline)? {
            KvResult::Value(value) => Ok(value),
            KvResult::Done => unreachable!("a get answered without a value"),
        }
    }

    /// Sets `key` to `value`.
    pub fn put(&mut self, key: &str, value: &str, deadline: Option<Instant>) -> Result<(), GaveUp> {
        self.execute(KvOp::Put(key.into(), value.into()), deadline)
            .map(|_| ())
    }

    /// Appends `value` to `key`.
    pub fn append(
        &mut self,
        key: &str,
        value: &str,
        deadline: Option<Instant>,
    ) -> Result<(), GaveUp> {
        self.execute(KvOp::Append(key.into(), value.into()), deadline)
            .map(|_| ())
    }

    /// Runs `op` until a server answers it, or gives up once `deadline` (if any) has passed.
    pub fn execute(&mut self, op: KvOp, deadline: Option<Instant>) -> Result<KvResult, GaveUp> {
        let seq = self.next_seq;
        self.next_seq = seq.next();
        let request = KvRequest {
            client: self.id,
            seq,
            op,
        };
        let mut attempts = 0;
        let mut failures_in_a_row = 0;
        loop {
            if deadline.is_some_and(|deadline| self.clock.now() >= deadline) {
                return Err(GaveUp { attempts });
            }
            attempts += 1;
            let server = self.servers[self.leader];
            let reply = self
                .transport
                .call(server, request.clone(), self.config.call_timeout);
            match reply {
                Ok(KvReply::Ok(result)) => return Ok(result),
                Ok(KvReply::WrongLeader {
                    leader_hint: Some(hint),
                }) if hint != server && self.servers.contains(&hint) => {
                    self.leader = self.servers.iter().position(|&s| s == hint).expect("known");
                }
                // Still the leader as far as it knows: ask it again.
                Ok(KvReply::Retry | KvReply::Timeout) => {}
                Ok(KvReply::WrongLeader { .. }) | Err(_) => {
                    self.leader = (self.leader + 1) % self.servers.len();
                }
            }
            failures_in_a_row += 1;
            if failures_in_a_row >= self.servers.len() {
                failures_in_a_row = 0;
                self.clock.sleep(self.config.retry_pause);
            }
        }
    }
}
