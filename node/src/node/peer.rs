//! A peer worker thread: everything this node sends to one peer, one call at a time.

use super::shared::Shared;
use crate::messages::Request;
use crate::observer::Role;
use crate::NodeId;

/// Runs until the node is killed. The request is built under the lock; the call is made without
/// it; the reply is handled under the lock again, after checking the node is still alive.
pub(super) fn run(shared: &Shared, peer: NodeId) {
    let wake = &shared.peer_wake[&peer];
    loop {
        let next: Result<Request, _> = {
            let mut inner = shared.lock();
            if inner.killed {
                return;
            }
            let now = shared.clock.now();
            let leader = inner.core.role() == Role::Leader;
            let due_at = inner.heartbeat_due.get(&peer).copied();
            let heartbeat_due = leader && due_at.is_some_and(|due| now >= due);
            match inner.core.next_request(peer, heartbeat_due) {
                Some(request) => {
                    if leader {
                        inner
                            .heartbeat_due
                            .insert(peer, now + shared.config.heartbeat_interval);
                    }
                    Ok(request)
                }
                None => Err(if leader { due_at } else { None }),
            }
        };
        match next {
            Ok(request) => {
                let response = shared.transport.call(peer, request.clone()).ok();
                let mut inner = shared.lock();
                if inner.killed {
                    return;
                }
                let effects = inner
                    .core
                    .handle_response(peer, &request, response.as_ref());
                shared.execute(&mut inner, effects);
            }
            Err(deadline) => {
                wake.wait_until(deadline);
            }
        }
    }
}
