//! ReadIndex (Raft thesis §6.4): a leader learns an index up to which its state is current for
//! reads, without putting the read in the log.
//!
//! 1. The leader must have committed an entry of its own term, or its commit index may lag
//!    behind entries its predecessors committed.
//! 2. It records its commit index as the read index.
//! 3. It confirms that it is still leader: a round of heartbeats, sent after step 2, answered in
//!    its term by a majority (counting itself). A deposed leader that has not yet heard of its
//!    successor fails here, because the majority has moved to a higher term.
//!
//! The caller then waits until its state machine has applied the read index and reads locally.
//! The round runs on the caller's thread, one peer after another, stopping at a majority.

use super::shared::Shared;
use crate::core::NotLeader;
use crate::mutation::Mutation;
use crate::observer::Role;
use crate::{LogIndex, NodeId, Term};

/// Why a node could not give a read index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadIndexError {
    /// It is not leader (or it is killed or paused).
    #[error("{0}")]
    NotLeader(NotLeader),
    /// It leads, but has not yet committed an entry of its own term; propose one and retry.
    #[error("no entry of the leader's term is committed yet")]
    NoCommitInTerm,
    /// The heartbeat round did not reach a majority in this term.
    #[error("could not confirm leadership with a majority")]
    NotConfirmed,
}

/// Steps 1-3 above; returns the read index.
pub(super) fn read_index(shared: &Shared) -> Result<LogIndex, ReadIndexError> {
    let (term, index, requests) = {
        let inner = shared.lock();
        let not_leader = ReadIndexError::NotLeader(NotLeader {
            leader_hint: inner.core.leader_hint(),
        });
        if inner.killed || inner.paused || inner.core.role() != Role::Leader {
            return Err(not_leader);
        }
        let term = inner.core.term();
        let commit = inner.core.commit_index();
        if inner.core.persistent().log.term_at(commit) != Some(term) {
            return Err(ReadIndexError::NoCommitInTerm);
        }
        if inner.core.has(Mutation::ReadIndexWithoutRound) {
            return Ok(commit);
        }
        let peers = inner.core.peers().to_vec();
        let requests: Vec<_> = peers
            .into_iter()
            .filter_map(|peer| {
                let request = inner.core.heartbeat_request(peer)?;
                Some((peer, request))
            })
            .collect();
        (term, commit, requests)
    };
    let cluster = requests.len() + 1;
    let majority = cluster / 2 + 1;
    let mut acknowledged = 1;
    for (peer, request) in requests {
        if acknowledged >= majority {
            break;
        }
        let response = shared
            .transport
            .call(peer, request.clone(), shared.config.rpc_timeout)
            .ok();
        if response.as_ref().is_some_and(|r| r.term() == term) {
            acknowledged += 1;
        }
        if !handle_round_reply(shared, peer, term, &request, response) {
            break;
        }
    }
    let inner = shared.lock();
    let still_leader =
        !inner.killed && inner.core.role() == Role::Leader && inner.core.term() == term;
    if acknowledged >= majority && still_leader {
        Ok(index)
    } else {
        Err(ReadIndexError::NotConfirmed)
    }
}

/// Hands a reply of the round to the core like any heartbeat reply (a higher term deposes the
/// leader). Returns whether the node still leads in `term`.
fn handle_round_reply(
    shared: &Shared,
    peer: NodeId,
    term: Term,
    request: &crate::messages::Request,
    response: Option<crate::messages::Response>,
) -> bool {
    let mut inner = shared.lock();
    if inner.killed || inner.paused {
        return false;
    }
    let effects = inner.core.handle_response(peer, request, response.as_ref());
    shared.execute(&mut inner, effects);
    if inner.killed {
        return false;
    }
    if let Some(response) = &response {
        shared.check_term_adopted(&inner, response.term(), "reply");
        if inner.core.role() == Role::Leader && response.term() == inner.core.term() {
            let now = shared.clock.now();
            inner.peer_answered_at.insert(peer, now);
        }
    }
    inner.core.role() == Role::Leader && inner.core.term() == term
}
