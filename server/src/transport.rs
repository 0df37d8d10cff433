//! [`TcpTransport`] and [`TcpKvTransport`]: the node's [`Transport`] and the clerk's
//! [`KvTransport`] over TCP, one [`Caller`] (one connection) per node.

use crate::real_time::{now, sleep_until};
use crate::tcp::{Caller, ClientProtocol, ClusterKey, Protocol, RaftRpc};
use crate::wire::admin::AdminRequest;
use crate::wire::kv::{ClientReply, ClientRequest, ClockChange, StatusReport};
use node::kv::{KvReply, KvRequest, KvTransport};
use node::messages::{Request, Response};
use node::{NodeId, Transport, TransportError};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

/// One caller per node, by id.
struct Callers<P: Protocol> {
    by_node: BTreeMap<NodeId, Caller<P>>,
}

impl<P: Protocol> Callers<P> {
    fn new(addresses: &BTreeMap<NodeId, SocketAddr>, key: Option<ClusterKey>) -> Callers<P> {
        Callers {
            by_node: addresses
                .iter()
                .map(|(&node, &address)| (node, Caller::new(address, key.clone())))
                .collect(),
        }
    }

    fn call(
        &self,
        to: NodeId,
        request: &P::Request,
        timeout: Duration,
    ) -> Result<P::Reply, TransportError> {
        match self.by_node.get(&to) {
            Some(caller) => caller.call(request, timeout),
            None => {
                // No address: as unreachable as a node that is down, and as slow to say so.
                sleep_until(now() + timeout);
                None
            }
        }
        .ok_or(TransportError::NoReply(to))
    }

    fn close(&self) {
        for caller in self.by_node.values() {
            caller.close();
        }
    }
}

/// A node's RPCs to its peers over TCP.
pub struct TcpTransport {
    callers: Callers<RaftRpc>,
}

impl TcpTransport {
    /// Calls each peer at its address, proving on each connection that it holds `key`.
    pub fn new(peers: &BTreeMap<NodeId, SocketAddr>, key: Option<ClusterKey>) -> TcpTransport {
        TcpTransport {
            callers: Callers::new(peers, key),
        }
    }

    /// Closes every connection and joins their threads; later calls get no reply.
    pub fn close(&self) {
        self.callers.close();
    }
}

impl Transport for TcpTransport {
    fn call(
        &self,
        to: NodeId,
        request: Request,
        timeout: Duration,
    ) -> Result<Response, TransportError> {
        let response = self.callers.call(to, &request, timeout)?;
        // An answer of the wrong kind is no answer: whatever sent it is not a node that
        // understood the request (the wire has already refused what no node sends).
        if !node::well_formed::answers(&response, &request) {
            return Err(TransportError::NoReply(to));
        }
        Ok(response)
    }
}

/// A clerk's calls to the servers' client addresses over TCP.
pub struct TcpKvTransport {
    callers: Callers<ClientProtocol>,
}

impl TcpKvTransport {
    /// Calls each server at its client address, as a client.
    pub fn new(servers: &BTreeMap<NodeId, SocketAddr>) -> TcpKvTransport {
        TcpKvTransport {
            callers: Callers::new(servers, None),
        }
    }

    /// Calls each server at its client address as an administrator: each connection proves
    /// it holds the administrators' `key` (the servers' `--admin-key`), so the administrator's
    /// requests and a nemesis's faults are served.
    pub fn administering(
        servers: &BTreeMap<NodeId, SocketAddr>,
        key: ClusterKey,
    ) -> TcpKvTransport {
        TcpKvTransport {
            callers: Callers::new(servers, Some(key)),
        }
    }

    /// Closes every connection and joins their threads.
    pub fn close(&self) {
        self.callers.close();
    }
}

/// Why a fault a client asked a server for was not injected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FaultError {
    /// The server refused, in these words (not an administrator, or faults not allowed).
    #[error("{0}")]
    Refused(String),
    /// The server answered something other than its status.
    #[error("{server} answered with another kind of reply")]
    OtherReply {
        /// The server.
        server: NodeId,
    },
    /// No answer in time.
    #[error("no answer from {server}")]
    NoAnswer {
        /// The server.
        server: NodeId,
    },
}

impl TcpKvTransport {
    /// Every server it calls.
    pub fn servers(&self) -> Vec<NodeId> {
        self.callers.by_node.keys().copied().collect()
    }

    /// Every server whose node believes it leads (a cut-off leader may, for a while), asked one
    /// after another, each given `timeout` to answer.
    pub fn leaders(&self, timeout: Duration) -> Vec<NodeId> {
        self.callers
            .by_node
            .keys()
            .copied()
            .filter(|&server| self.status(server, timeout).is_some_and(|s| s.leader))
            .collect()
    }

    /// Changes `server`'s clock (a server started with `--allow-faults`); its status after the
    /// change, or why not.
    pub fn set_clock(
        &self,
        server: NodeId,
        change: ClockChange,
        timeout: Duration,
    ) -> Result<StatusReport, FaultError> {
        self.inject(server, &ClientRequest::SetClock(change), timeout)
    }

    /// Makes every later write of `server`'s storage fail (a server started with
    /// `--allow-faults`); its status then, or why not.
    pub fn fail_disk(&self, server: NodeId, timeout: Duration) -> Result<StatusReport, FaultError> {
        self.inject(server, &ClientRequest::FailDisk, timeout)
    }

    fn inject(
        &self,
        server: NodeId,
        fault: &ClientRequest,
        timeout: Duration,
    ) -> Result<StatusReport, FaultError> {
        match self.callers.call(server, fault, timeout) {
            Ok(ClientReply::Status(status)) => Ok(status),
            Ok(ClientReply::Refused(why)) => Err(FaultError::Refused(why)),
            Ok(ClientReply::Kv(_) | ClientReply::Membership(_)) => {
                Err(FaultError::OtherReply { server })
            }
            Err(_) => Err(FaultError::NoAnswer { server }),
        }
    }

    /// Sends `server` an administrator's request; its answer, or `None` without one within
    /// `timeout`.
    pub fn admin(
        &self,
        server: NodeId,
        request: AdminRequest,
        timeout: Duration,
    ) -> Option<ClientReply> {
        self.callers
            .call(server, &ClientRequest::Admin(request), timeout)
            .ok()
    }

    /// Asks `server` for its node's state; `None` without an answer within `timeout`.
    pub fn status(&self, server: NodeId, timeout: Duration) -> Option<StatusReport> {
        match self.callers.call(server, &ClientRequest::Status, timeout) {
            Ok(ClientReply::Status(status)) => Some(status),
            _ => None,
        }
    }
}

impl KvTransport for TcpKvTransport {
    fn call(
        &self,
        server: NodeId,
        request: KvRequest,
        timeout: Duration,
    ) -> Result<KvReply, TransportError> {
        match self
            .callers
            .call(server, &ClientRequest::Kv(request), timeout)?
        {
            ClientReply::Kv(reply) => Ok(reply),
            // A server that answers an operation with anything else does not speak this
            // protocol.
            ClientReply::Status(_) | ClientReply::Refused(_) | ClientReply::Membership(_) => {
                Err(TransportError::NoReply(server))
            }
        }
    }
}
