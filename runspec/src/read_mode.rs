//! How a key-value server answers gets: the names a run and a server's command line use.

use std::fmt;

/// How a server answers gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadMode {
    /// A get is a log entry like any other.
    Log,
    /// ReadIndex: confirm leadership with a majority, wait until the commit index seen before
    /// the round is applied, read locally.
    ReadIndex,
    /// Deliberately broken: any node that believes it leads answers from its local state at
    /// once, so a deposed leader serves stale reads.
    UnsafeLocal,
    /// Lease reads: a leader whose lease holds serves from local state with no round (once the
    /// commit index it saw is applied); without a lease it falls back to ReadIndex. Safe while
    /// clocks drift within the node's `max_clock_drift_ppm`.
    Lease,
}

impl ReadMode {
    /// Every mode, in a fixed order.
    pub const ALL: [ReadMode; 4] = [
        ReadMode::Log,
        ReadMode::ReadIndex,
        ReadMode::Lease,
        ReadMode::UnsafeLocal,
    ];

    /// The mode's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            ReadMode::Log => "log",
            ReadMode::ReadIndex => "read-index",
            ReadMode::UnsafeLocal => "unsafe-local",
            ReadMode::Lease => "lease",
        }
    }

    /// The mode named `name` (any mode: whether this build may run the broken one is for the
    /// node to say, `node::kv::parse_read_mode`).
    pub fn from_name(name: &str) -> Option<ReadMode> {
        ReadMode::ALL.into_iter().find(|mode| mode.name() == name)
    }

    /// Whether this is the deliberately broken mode (`unsafe-local`), which only a build with
    /// broken variants runs.
    pub fn is_deliberately_broken(self) -> bool {
        self == ReadMode::UnsafeLocal
    }
}

impl fmt::Display for ReadMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
