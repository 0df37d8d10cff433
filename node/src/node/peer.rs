//! The replicator of one peer: vote requests and AppendEntries carrying entries, one call in
//! flight. Heartbeats go on a thread of their own ([`super::heartbeat`]), so a reply held up for
//! seconds does not silence the leader.
//!
//! Flow control: a leader's replicator with entries to send starts its next round only once the
//! applier has taken every committed entry. The leader then replicates no faster than its service
//! applies, and a round lasts at least as long as the way from commit to the service: commands
//! that arrive meanwhile share the next AppendEntries instead of each starting a round of their
//! own. A lone client is hardly affected, since its next command comes only after its last one
//! was applied; a command that arrives while the applier is busy waits for it (one hand-off).

use super::shared::{Inner, Shared};
use super::Step;
use crate::messages::{Request, Response};
use crate::observer::Role;
use crate::sync::MutexGuard;
use crate::NodeId;

/// One pass of the replicator for `peer`: the request is built under the lock, the call is made
/// without it, and the reply is handled under the lock again.
pub(super) fn step(shared: &Shared, peer: NodeId) -> Step {
    let request = {
        let mut inner = shared.lock();
        if let Some(step) = inner.gate() {
            return step;
        }
        if inner.core.has_entries_for(peer) && inner.last_applied < inner.core.commit_index() {
            // Flow control (see the module comment): the applier wakes this replicator once it
            // has taken the committed entries. With nothing to send, it waits for `start` as
            // before (holding it would cost a wake-up for nothing).
            inner.rounds_held = true;
            inner.sent.held_for_applier += 1;
            return Step::WaitUntil(None);
        }
        // Entries go out only once the leader's own copy is durable.
        if !shared.save_own_entries(&mut inner) {
            return Step::Exit;
        }
        match inner.core.next_request(peer) {
            Some(request) => {
                if let Request::AppendEntries(args) = &request {
                    inner.sent.appends += 1;
                    inner.sent.entries += args.entries.len() as u64;
                }
                request
            }
            None => return Step::WaitUntil(None),
        }
    };
    let response = shared
        .transport
        .call(peer, request.clone(), shared.config.rpc_timeout)
        .ok();
    handle_reply(shared, &shared.peer_wake[&peer], peer, &request, response)
}

/// Handles the outcome of a call to `peer` (shared by the replicator and the heartbeater). A
/// reply that arrives while the node is paused is handled, late, after it resumes.
pub(super) fn handle_reply(
    shared: &Shared,
    wake: &crate::clock::Signal,
    peer: NodeId,
    request: &Request,
    response: Option<Response>,
) -> Step {
    let mut inner: MutexGuard<'_, Inner> = shared.lock();
    while inner.paused && !inner.killed {
        drop(inner);
        wake.wait();
        inner = shared.lock();
    }
    if inner.killed {
        return Step::Exit;
    }
    let effects = inner.core.handle_response(peer, request, response.as_ref());
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
