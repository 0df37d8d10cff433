//! [`LocalNetwork`]: an in-process transport without artificial delays, for real-time runs.

use crate::messages::{Request, Response};
use crate::transport::{RpcHandler, Transport, TransportError};
use crate::NodeId;
use std::collections::BTreeMap;
use std::time::Duration;
use threadsim::clock::ClockRef;
use threadsim::sync::{Arc, Mutex};

/// Connects nodes of one process by calling each other's handlers directly.
pub struct LocalNetwork {
    clock: ClockRef,
    handlers: Mutex<BTreeMap<NodeId, Arc<dyn RpcHandler>>>,
    no_reply_delay: Duration,
}

impl LocalNetwork {
    /// A network on which a call to an absent or dead node fails after `no_reply_delay` (as a
    /// real call would time out), so a sender does not spin.
    pub fn new(clock: ClockRef, no_reply_delay: Duration) -> Arc<LocalNetwork> {
        Arc::new(LocalNetwork {
            clock,
            handlers: Mutex::new(BTreeMap::new()),
            no_reply_delay,
        })
    }

    /// Makes `node` reachable through `handler`, replacing an earlier registration.
    pub fn register(&self, node: NodeId, handler: Arc<dyn RpcHandler>) {
        self.handlers.lock().insert(node, handler);
    }

    /// Makes `node` unreachable.
    pub fn unregister(&self, node: NodeId) {
        self.handlers.lock().remove(&node);
    }
}

impl Transport for LocalNetwork {
    fn call(
        &self,
        to: NodeId,
        request: Request,
        timeout: Duration,
    ) -> Result<Response, TransportError> {
        let handler = self.handlers.lock().get(&to).cloned();
        match handler.and_then(|handler| handler.handle(request)) {
            Some(response) => Ok(response),
            None => {
                self.clock.sleep(self.no_reply_delay.min(timeout));
                Err(TransportError::NoReply(to))
            }
        }
    }
}
