//! `expired-session-reopened`: an operation from a client the store holds no session for opens
//! one (sessions created on first use, with ids the clients choose) instead of being answered
//! "session expired" (Raft thesis §6.3). A retry whose first attempt was applied before its
//! session expired finds no session, opens a new one, and is applied again.

use crate::kv::{ClientId, KvStateMachine};

/// Opens a session for `client` in `machine` if it has none, as though it had applied nothing.
pub fn reopen(machine: &mut KvStateMachine, client: ClientId) {
    machine.reopen_session(client);
}
