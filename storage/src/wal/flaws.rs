//! The deliberately broken ways of writing a log that node mutations ask for
//! ([`super::WalPersister::break_as`]), each a durability bug real logs have had. Inert without
//! the `mutations` feature, as every [`node::MutationSet`] is.

use node::{Mutation, MutationSet};

/// Which steps of durability the log leaves out (none: the correct log).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flaws {
    /// `roll-over-unsynced`: a roll-over leaves the segment it closes unsynced.
    pub closed_segment_unsynced: bool,
    /// `segment-name-unsynced`: a new segment's directory entry is never synced.
    pub segment_name_unsynced: bool,
    /// `snapshot-unsynced`: a snapshot file is renamed into place with its bytes unsynced.
    pub snapshot_unsynced: bool,
    /// `sync-error-retried`: a failed sync is tried again, and its second answer believed.
    pub sync_error_retried: bool,
}

impl Flaws {
    /// The flaws `mutations` ask for.
    pub fn of(mutations: &MutationSet) -> Flaws {
        Flaws {
            closed_segment_unsynced: mutations.has(Mutation::RollOverUnsynced),
            segment_name_unsynced: mutations.has(Mutation::SegmentNameUnsynced),
            snapshot_unsynced: mutations.has(Mutation::SnapshotUnsynced),
            sync_error_retried: mutations.has(Mutation::SyncErrorRetried),
        }
    }
}
