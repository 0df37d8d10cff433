//! The heartbeater of one peer: while this node leads, an empty AppendEntries every heartbeat
//! interval, each waiting at most one interval for its reply. It keeps followers' election
//! timers reset and carries the commit index even while the replicator waits on a slow reply.

use super::peer::handle_reply;
use super::shared::Shared;
use super::Step;
use crate::NodeId;

/// One pass of the heartbeater for `peer`.
pub(super) fn step(shared: &Shared, peer: NodeId) -> Step {
    let request = {
        let mut inner = shared.lock();
        if let Some(step) = inner.gate() {
            return step;
        }
        let Some(request) = inner.core.heartbeat_request(peer) else {
            return Step::WaitUntil(None);
        };
        let now = shared.clock.now();
        let due = inner.heartbeat_due.get(&peer).copied().unwrap_or(now);
        if now < due {
            return Step::WaitUntil(Some(due));
        }
        inner
            .heartbeat_due
            .insert(peer, now + shared.config.heartbeat_interval);
        request
    };
    let response = shared
        .transport
        .call(peer, request.clone(), shared.config.heartbeat_interval)
        .ok();
    handle_reply(
        shared,
        &shared.heartbeat_wake[&peer],
        peer,
        &request,
        response,
    )
}
