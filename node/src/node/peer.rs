//! The replicator of one peer: vote requests and AppendEntries carrying entries, one call in
//! flight. Heartbeats go on a thread of their own ([`super::heartbeat`]), so a reply held up for
//! seconds does not silence the leader.

use super::shared::{Inner, Shared};
use super::Step;
use crate::messages::{Request, Response};
use crate::observer::Role;
use crate::NodeId;
use threadsim::sync::MutexGuard;

/// What one peer's replicator carries from pass to pass.
#[derive(Debug, Default)]
pub(super) struct Replicator {
    /// How many entries its last AppendEntries carried.
    last_batch: usize,
}

/// One pass of the replicator for `peer`: the request is built under the lock, the call is made
/// without it, and the reply is handled under the lock again.
///
/// When the last round carried more than one entry, several clients are appending, and the ones
/// the last commit released are being woken as this pass starts: the replicator first yields its
/// core once, so those that are ready run `start` before the next round is built and share it
/// instead of waiting for the round after (5 nodes, 8 clients: 3.5 -> 5.7 entries per
/// AppendEntries, 31 -> 23 us of CPU per command; see the README's benchmark section). A lone client's rounds carry one entry, so
/// its chain never yields. No timer: the yield returns at once when nothing else is runnable.
pub(super) fn step(shared: &Shared, peer: NodeId, replicator: &mut Replicator) -> Step {
    if replicator.last_batch > 1 {
        threadsim::sync::thread::yield_now();
    }
    let request = {
        let mut inner = shared.lock();
        if let Some(step) = inner.gate() {
            return step;
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
                    replicator.last_batch = args.entries.len();
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
    wake: &threadsim::clock::Signal,
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
