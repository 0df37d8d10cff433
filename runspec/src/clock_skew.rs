//! How far the nodes' clocks drift in a run: the setting's names. What each draws on a cluster
//! is the simulation's (`sim::skew`).

/// How far the nodes' clocks drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClockSkew {
    /// Every clock keeps true time.
    Off,
    /// Rates within the nodes' configured drift bound; no jumps.
    WithinBound,
    /// Deliberately unsafe for leases: rates from 0.5x to 1.5x, and forward jumps.
    BeyondBound,
}

impl ClockSkew {
    /// Every setting, in a fixed order.
    pub const ALL: [ClockSkew; 3] = [
        ClockSkew::Off,
        ClockSkew::WithinBound,
        ClockSkew::BeyondBound,
    ];

    /// The setting's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            ClockSkew::Off => "off",
            ClockSkew::WithinBound => "within",
            ClockSkew::BeyondBound => "beyond",
        }
    }
}

impl std::fmt::Display for ClockSkew {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A clock skew name that is not known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown clock skew {0:?}; known: off, within, beyond")]
pub struct UnknownClockSkew(pub String);

impl std::str::FromStr for ClockSkew {
    type Err = UnknownClockSkew;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        ClockSkew::ALL
            .into_iter()
            .find(|skew| skew.name() == name)
            .ok_or_else(|| UnknownClockSkew(name.to_string()))
    }
}
