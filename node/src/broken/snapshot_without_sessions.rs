//! `snapshot-without-sessions`: the key-value snapshot leaves the client sessions out (Raft
//! thesis §6.3: they are part of the replicated state). A server restored from it has forgotten
//! which commands it applied: a retry of an append applied before the snapshot is applied again.

use crate::kv::KvStateMachine;

/// The snapshot of `machine` without its sessions.
pub fn snapshot(machine: &KvStateMachine) -> Vec<u8> {
    machine.without_sessions().snapshot()
}
