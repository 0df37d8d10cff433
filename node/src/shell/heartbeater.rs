//! The heartbeater of one peer: while this node leads, an empty AppendEntries every heartbeat
//! interval (and at once when a ReadIndex round waits for this peer), each waiting at most one
//! interval for its reply. It keeps followers' election timers reset and carries the commit index
//! and the read round even while the replicator waits on a slow reply.

use super::replicator::handle_reply;
use super::state::Shell;
use super::Pass;
use crate::core::HeartbeatDue;
use crate::NodeId;

/// One pass of the heartbeater for `peer`.
pub(super) fn pass(shell: &Shell, peer: NodeId) -> Pass {
    let request = {
        let mut locked = shell.lock();
        if let Some(pass) = locked.gate() {
            return pass;
        }
        match locked.core.heartbeat(peer, shell.clock.now()) {
            HeartbeatDue::Send(request) => request,
            HeartbeatDue::WaitUntil(when) => return Pass::WaitUntil(when),
        }
    };
    let response = shell
        .transport
        .call(peer, request.clone(), shell.config.heartbeat_interval)
        .ok();
    handle_reply(
        shell,
        &shell.heartbeat_wake[&peer],
        peer,
        &request,
        response,
    )
}
