//! The network seam: [`Transport`] sends a request and waits for its answer; [`RpcHandler`] is
//! what a transport calls on the receiving node.

use crate::messages::{Request, Response};
use crate::NodeId;
use std::time::Duration;

/// Why a call got no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// The request or the reply was lost, or the target is down or unreachable; the caller waited
    /// its timeout.
    #[error("no reply from {0}")]
    NoReply(NodeId),
}

/// Sends requests to other nodes. `call` blocks the calling thread (through the clock) until the
/// reply arrives or `timeout` passes; the receiving node's handler runs on the caller's thread.
/// A call that gets no reply costs the caller its whole timeout.
pub trait Transport: Send + Sync {
    /// Sends `request` to `to` and waits up to `timeout` for the reply.
    fn call(
        &self,
        to: NodeId,
        request: Request,
        timeout: Duration,
    ) -> Result<Response, TransportError>;
}

/// The receiving side of a node: handles one request and returns the reply, or `None` when the
/// node is dead and answers nothing.
pub trait RpcHandler: Send + Sync {
    /// Handles `request` on the caller's thread.
    fn handle(&self, request: Request) -> Option<Response>;
}
