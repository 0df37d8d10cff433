//! The deliberately broken persisters of the storage variants: each reads or syncs the two
//! copies of the state in a way that holds on a disk that only crashes, and fails on the one
//! storage fault it was made for.

use super::frame::{unframe, unframe_unchecked};

/// A persister's flaw (none in the correct build).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Flaw {
    /// Reads both copies, checks both, and takes the newest that checks out.
    #[default]
    None,
    /// `trust-record-without-checksum`: when both copies' headers name the same save, copy 0
    /// is taken without its checksum ("they agree, so it is fine"). A copy corrupted at rest
    /// is served.
    TrustsAgreeingCopies,
    /// `read-first-good-copy`: copy 0 is taken if it checks out, without looking at copy 1's
    /// sequence. A misdirected write leaves copy 0 intact but stale, and it is served.
    FirstGoodCopy,
    /// `dir-not-synced`: the file is synced, its directory never is, so the file's entry is
    /// not durable: a power loss takes the whole file (ext4 and XFS may; POSIX allows it).
    DirectoryNeverSynced,
}

/// What a flawed reader of `slots` takes, if its flaw decides the read (`None`: it reads as
/// the correct persister does).
pub(super) fn flawed_read(flaw: Flaw, slots: &[Vec<u8>; 2]) -> Option<(u64, &[u8])> {
    match flaw {
        Flaw::None | Flaw::DirectoryNeverSynced => None,
        Flaw::TrustsAgreeingCopies => {
            let (first, payload) = unframe_unchecked(&slots[0])?;
            let (second, _) = unframe_unchecked(&slots[1])?;
            (first == second).then_some((first, payload))
        }
        Flaw::FirstGoodCopy => unframe(&slots[0]),
    }
}
