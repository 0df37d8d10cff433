//! Where a simulated node keeps its state: the names a run's command line uses.

use std::fmt;

/// Where each simulated node keeps its state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SimStorage {
    /// The simulation's own disk: the whole state in two checksummed copies, with torn,
    /// misdirected and corrupted writes and latent read errors.
    #[default]
    Copies,
    /// The server's write-ahead log, the storage engine that ships, over a disk in memory that
    /// loses what was not synced at a power cut, tearing what was under way.
    Log,
}

impl SimStorage {
    /// Every kind, in a fixed order.
    pub const ALL: [SimStorage; 2] = [SimStorage::Copies, SimStorage::Log];

    /// The kind's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SimStorage::Copies => "copies",
            SimStorage::Log => "log",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<SimStorage> {
        SimStorage::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

impl fmt::Display for SimStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
