//! `txn-reads-at-proposal`: a transaction's reads are served from the state the leader has
//! applied when it proposes the transaction, not at the transaction's position in the log. The
//! appends still go through the log; the reads miss whatever commits in between. Two
//! transactions that each read a key and append to it can both read the list without the
//! other's element: a cycle of a read-write and a write-write dependency (Elle's G-single),
//! which the list-append checker names.

use crate::kv::{KvOp, KvResult, KvStateMachine};

/// The reads `op`, if it is a transaction, would see in `machine` now.
pub fn reads_now(machine: &KvStateMachine, op: &KvOp) -> Option<Vec<String>> {
    match op {
        KvOp::Txn(steps) => Some(machine.run_txn(steps).0),
        _ => None,
    }
}

/// The answer to give: the reads taken at proposal in place of the log's.
pub fn answer(result: KvResult, reads_at_proposal: Option<Vec<String>>) -> KvResult {
    match (result, reads_at_proposal) {
        (KvResult::Reads(_), Some(early)) => KvResult::Reads(early),
        (result, _) => result,
    }
}
