//! The administrator's requests ([`AdminRequest`]), as a server answers them: the configuration
//! its node follows, if it leads; a change of it, answered once the change commits; a transfer of
//! leadership, answered once the leader stepped down. A node that does not lead says which one
//! does; a change refused for now (no entry of the leader's term committed yet, another change
//! in flight, a learner to promote that has not caught up) is answered "retry"; one that makes no sense says why. An answer that did
//! not come in time says the outcome is unknown (the change or transfer may still happen).

use crate::real_time::{now, sleep_until};
use crate::wire::admin::AdminRequest;
use crate::wire::kv::ClientReply;
use node::kv::{KvReply, KvServer};
use node::{ChangeRefused, Node, NodeStatus, Role, TransferRefused};
use std::time::Duration;

/// How long a change may take to commit, or a transfer to end, before the answer is "unknown".
const PATIENCE: Duration = Duration::from_secs(3);

/// How often the server looks again while it waits.
const POLL: Duration = Duration::from_millis(5);

/// The answer to `request` on `node`; `None` when the node has stopped.
pub(crate) fn answer(kv: &KvServer, request: AdminRequest) -> Option<ClientReply> {
    let node = kv.node();
    if node.is_stopped() {
        return None;
    }
    let reply = match request {
        // Asked of the leader: a node outside the configuration hears of no change after the
        // one that took it out, and would answer with what it followed then.
        AdminRequest::Membership => {
            let status = node.status();
            if status.role == Role::Leader {
                ClientReply::Membership(status.membership)
            } else {
                wrong_leader(None)
            }
        }
        AdminRequest::Change(change) => match kv.change_membership(change) {
            Ok((index, term)) => {
                tracing::info!(node = %node.id(), %change, index = index.0, "configuration change appended");
                wait_for(node, |status| committed(status, index, term))
            }
            Err(ChangeRefused::NotLeader(not_leader)) => wrong_leader(not_leader.leader_hint),
            Err(
                ChangeRefused::NoCommitInTerm
                | ChangeRefused::ChangeInFlight(_)
                | ChangeRefused::NotCaughtUp { .. },
            ) => ClientReply::Kv(KvReply::Retry),
            Err(refused) => ClientReply::Refused(refused.to_string()),
        },
        AdminRequest::Transfer(target) => match node.transfer_leadership(target) {
            Ok(()) => {
                tracing::info!(node = %node.id(), %target, "handing leadership over");
                let term = node.status().term;
                wait_for(node, |status| {
                    (status.term != term || status.role != Role::Leader)
                        .then(|| ClientReply::Membership(status.membership.clone()))
                })
            }
            Err(TransferRefused::NotLeader(not_leader)) => wrong_leader(not_leader.leader_hint),
            Err(refused) => ClientReply::Refused(refused.to_string()),
        },
    };
    Some(reply)
}

/// Whether the wait for the change appended at `index` in `term` is over: the configuration
/// once it committed (in that term, the entry there is still the change, and a leader that
/// removed itself steps down only then), "unknown" if the term ended first.
fn committed(status: &NodeStatus, index: node::LogIndex, term: node::Term) -> Option<ClientReply> {
    if status.term != term {
        Some(ClientReply::Kv(KvReply::Timeout))
    } else if status.commit_index >= index {
        Some(ClientReply::Membership(status.membership.clone()))
    } else {
        None
    }
}

/// Polls `node` until `done` has an answer, or [`PATIENCE`] runs out ("unknown").
fn wait_for(node: &Node, done: impl Fn(&NodeStatus) -> Option<ClientReply>) -> ClientReply {
    let give_up = now() + PATIENCE;
    loop {
        if node.is_stopped() {
            return ClientReply::Kv(KvReply::Timeout);
        }
        if let Some(reply) = done(&node.status()) {
            return reply;
        }
        if now() >= give_up {
            return ClientReply::Kv(KvReply::Timeout);
        }
        sleep_until(now() + POLL);
    }
}

fn wrong_leader(leader_hint: Option<node::NodeId>) -> ClientReply {
    ClientReply::Kv(KvReply::WrongLeader { leader_hint })
}
