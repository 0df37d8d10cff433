//! The kinds of fault a run injects.

use crate::ClockSkew;

/// The kinds of fault a run injects (message loss is [`crate::RunSpec::reliable`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FaultMix {
    /// Crashes and restarts.
    pub crashes: bool,
    /// Symmetric partitions (including the leader cut off with a minority).
    pub partitions: bool,
    /// One-way link cuts.
    pub one_way: bool,
    /// Clock skew: nodes' clocks change rate (and, beyond the bound, jump forward).
    pub skew: ClockSkew,
}

impl FaultMix {
    /// Every kind of fault.
    pub const ALL: FaultMix = FaultMix {
        crashes: true,
        partitions: true,
        one_way: true,
        skew: ClockSkew::WithinBound,
    };
}

impl Default for FaultMix {
    fn default() -> FaultMix {
        FaultMix::ALL
    }
}
