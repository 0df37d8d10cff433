//! The replicator of one peer: vote requests and AppendEntries carrying entries, one call in
//! flight. Heartbeats go on a thread of their own ([`super::heartbeater`]), so a reply held up for
//! seconds does not silence the leader.

use super::state::{Locked, Shell};
use super::Pass;
use crate::broken;
use crate::fault_points::{self, FaultPoint};
use crate::messages::{Request, Response};
use crate::mutation::Mutation;
use crate::NodeId;
use threadsim::sync::MutexGuard;

/// What one peer's replicator carries from pass to pass.
#[derive(Debug, Default)]
pub(super) struct Replicator {
    /// How many entries its last AppendEntries carried.
    last_batch: usize,
}

/// One pass of the replicator for `peer`: the request is built under the lock (with the write
/// of the leader's own new entries the core asks for first), sent without it (with a persister
/// that shares fsyncs, while the node's syncer makes the leader's copy durable; see
/// `persistence.rs`), and the reply is handled under the lock again.
///
/// When the last round carried more than one entry, several clients are appending, and the ones
/// the last commit released are being woken as this pass starts: the replicator first yields its
/// core once, so those that are ready run `start` before the next round is built and share it
/// instead of waiting for the round after (5 nodes, 8 clients: 3.5 -> 5.7 entries per
/// AppendEntries; see docs/figures.md). A lone client's rounds carry one entry, so its chain
/// never yields. No timer: the yield returns at once when nothing else is runnable.
/// The longest a request is sent late when [`FaultPoint::SendLate`] fires.
const LATE: std::time::Duration = std::time::Duration::from_millis(20);

pub(super) fn pass(shell: &Shell, peer: NodeId, replicator: &mut Replicator) -> Pass {
    if replicator.last_batch > 1 {
        threadsim::sync::thread::yield_now();
    }
    let request = {
        let mut locked = shell.lock();
        if let Some(pass) = locked.gate() {
            return pass;
        }
        let Some((effects, request)) = locked.core.next_request(peer, shell.clock.now()) else {
            if shell.config.mutations.has(Mutation::ReplicatorBusyWaits) {
                return broken::replicator_busy_waits::nothing_to_send();
            }
            return Pass::WaitUntil(None);
        };
        let written_before = locked.written;
        locked.sync_deferred = true;
        shell.execute(&mut locked, effects);
        locked.sync_deferred = false;
        if locked.stopped {
            return Pass::Exit;
        }
        if let Request::AppendEntries(args) = &request {
            locked.sent.appends += 1;
            locked.sent.entries += args.entries.len() as u64;
            replicator.last_batch = args.entries.len();
        }
        if locked.written != written_before {
            shell.owe_own_sync(&mut locked);
        }
        request
    };
    if let Some(late) = fault_points::delay(FaultPoint::SendLate, shell.clock.now(), LATE) {
        shell.clock.sleep(late);
    }
    let response = shell
        .transport
        .call(peer, request.clone(), shell.config.rpc_timeout)
        .ok();
    let wake = &shell.replicator_wake[&peer];
    let twice =
        response.is_some() && fault_points::fires(FaultPoint::ReplyHandledTwice, shell.clock.now());
    let pass = handle_reply(shell, wake, peer, &request, response.clone());
    if twice && matches!(pass, Pass::Again) {
        return handle_reply(shell, wake, peer, &request, response);
    }
    pass
}

/// Handles the outcome of a call to `peer` (shared by the replicator and the heartbeater). A
/// reply that arrives while the node is paused is handled, late, after it resumes.
pub(super) fn handle_reply(
    shell: &Shell,
    wake: &threadsim::clock::Signal,
    peer: NodeId,
    request: &Request,
    response: Option<Response>,
) -> Pass {
    let mut locked: MutexGuard<'_, Locked> = shell.lock();
    let paused = locked.paused;
    while locked.paused && !locked.stopped {
        drop(locked);
        wake.wait();
        locked = shell.lock();
    }
    if locked.stopped {
        return Pass::Exit;
    }
    crate::coverage::sometimes(paused, crate::coverage::Point::ReplyHandledAfterPause);
    let now = shell.clock.now();
    let effects = locked
        .core
        .handle_response(now, peer, request, response.as_ref());
    shell.execute(&mut locked, effects);
    if !locked.stopped {
        shell.sync_after_acknowledgement(&mut locked, request, response.as_ref());
    }
    if let Some(response) = &response {
        shell.check_term_adopted(&locked, response.term(), "reply");
    }
    Pass::Again
}
