//! A peer worker: everything this node sends to one peer, one call at a time.

use super::shared::Shared;
use super::Step;
use crate::messages::Request;
use crate::observer::Role;
use crate::NodeId;

/// One pass of the worker for `peer`: the request is built under the lock, the call is made
/// without it, and the reply is handled under the lock again after checking the node is alive.
pub(super) fn step(shared: &Shared, peer: NodeId) -> Step {
    let request: Request = {
        let mut inner = shared.lock();
        if inner.killed {
            return Step::Exit;
        }
        if inner.paused {
            return Step::WaitUntil(None);
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
                request
            }
            None => return Step::WaitUntil(if leader { due_at } else { None }),
        }
    };
    let response = shared.transport.call(peer, request.clone()).ok();
    let mut inner = shared.lock();
    while inner.paused && !inner.killed {
        // A reply that arrives while the node is paused is handled, late, after it resumes.
        drop(inner);
        shared.peer_wake[&peer].wait();
        inner = shared.lock();
    }
    if inner.killed {
        return Step::Exit;
    }
    let effects = inner
        .core
        .handle_response(peer, &request, response.as_ref());
    shared.execute(&mut inner, effects);
    if let Some(response) = &response {
        shared.check_term_adopted(&inner, response.term(), "reply");
        if inner.core.role() == Role::Leader && response.term() == inner.core.term() {
            let now = shared.clock.now();
            inner.peer_answered_at.insert(peer, now);
        }
    }
    Step::Continue
}

/// Runs until the node is killed.
pub(super) fn run(shared: &Shared, peer: NodeId) {
    let wake = &shared.peer_wake[&peer];
    loop {
        match step(shared, peer) {
            Step::Exit => return,
            Step::Continue => {}
            Step::WaitUntil(deadline) => {
                wake.wait_until(deadline);
            }
        }
    }
}
