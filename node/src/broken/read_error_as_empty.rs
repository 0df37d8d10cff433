//! `read-error-as-empty`: a read of the stored state that fails (EIO, a latent sector error) is
//! taken for a disk that holds no state, and the node starts fresh: term 0, no vote, an empty
//! log. It has forgotten the votes it cast and the entries it acknowledged, so it can vote twice
//! in a term and let a committed entry be lost (Raft Figure 2: stable storage). The bug class is
//! an error read as "not found"; a correct node refuses to start until the state can be read.

use crate::persist::{PersistentState, StorageError};

/// What the broken node makes of a load that failed with `error`: nothing stored.
pub fn state_after(error: &StorageError) -> PersistentState {
    debug_assert!(matches!(error, StorageError::Io(_)), "{error}");
    PersistentState::default()
}
