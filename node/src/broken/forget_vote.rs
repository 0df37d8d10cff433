//! `forget-vote`: the vote is not persisted (Raft Figure 2: persist votedFor before answering),
//! so a node that restarts can vote twice in one term, and two candidates can both win it.

use crate::persist::{PersistentState, Persister};
use crate::StorageError;

/// Saves `state` as if this node had never voted.
pub fn save(persister: &dyn Persister, state: &PersistentState) -> Result<(), StorageError> {
    let mut forgetful = state.clone();
    forgetful.voted_for = None;
    persister.save(&forgetful.encode())
}
