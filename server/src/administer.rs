//! An administrator's request sent to a cluster ([`administer`]): to the server whose node
//! leads, found by asking each in turn, again while one answers "retry" (a new leader that has
//! not committed an entry of its term, another change in flight), until the request is done,
//! refused, or the time given runs out. `interleave admin` and the nemesis's membership faults
//! both go through it.

use crate::real_time::{now, sleep_until};
use crate::transport::TcpKvTransport;
use crate::wire::admin::AdminRequest;
use crate::wire::kv::ClientReply;
use node::kv::KvReply;
use node::{Membership, NodeId};
use std::time::Duration;

/// How long one server has to answer: a server waits up to 3 s for a change to commit.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(4);

/// How long to wait before asking again after a "retry", or after a round with no leader.
const AGAIN_AFTER: Duration = Duration::from_millis(50);

/// Why an administrator's request was not done.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AdminError {
    /// No server answered as leader before the time ran out.
    #[error("no server took it within {0:?}: none led, none answered (a server refuses a connection that holds another administrators' key), or each said retry")]
    NoLeader(Duration),
    /// The leader refused it, and says why (a change that does not apply, an unknown node).
    #[error("{server} refused: {why}")]
    Refused {
        /// The server that refused.
        server: NodeId,
        /// Why.
        why: String,
    },
    /// The leader took it and did not see it through in time: it may still happen.
    #[error("{0} took it but did not see it done in time: it may still happen")]
    Unknown(NodeId),
    /// A server answered with something that is not an answer to an administrator's request.
    #[error("{0} does not speak the administrator's protocol")]
    Unexpected(NodeId),
}

/// Sends `request` to the cluster `transport` reaches, for at most `patience`: the server that
/// did it, and the configuration its node follows after it.
pub fn administer(
    transport: &TcpKvTransport,
    request: AdminRequest,
    patience: Duration,
) -> Result<(NodeId, Membership), AdminError> {
    let give_up = now() + patience;
    loop {
        for server in transport.servers() {
            loop {
                let timeout = ANSWER_TIMEOUT.min(give_up.saturating_duration_since(now()));
                match transport.admin(server, request, timeout) {
                    Some(ClientReply::Membership(membership)) => return Ok((server, membership)),
                    Some(ClientReply::Kv(KvReply::Retry)) if now() < give_up => {
                        sleep_until(now() + AGAIN_AFTER);
                    }
                    Some(ClientReply::Kv(KvReply::Timeout)) => {
                        return Err(AdminError::Unknown(server))
                    }
                    Some(ClientReply::Refused(why)) => {
                        return Err(AdminError::Refused { server, why })
                    }
                    Some(ClientReply::Kv(KvReply::WrongLeader { .. } | KvReply::Retry)) | None => {
                        break
                    }
                    Some(_) => return Err(AdminError::Unexpected(server)),
                }
            }
        }
        if now() >= give_up {
            return Err(AdminError::NoLeader(patience));
        }
        sleep_until(now() + AGAIN_AFTER);
    }
}
