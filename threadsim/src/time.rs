//! A point in time as a [`crate::Clock`]'s user sees it, measured from the clock's epoch.

use std::ops::{Add, Sub};
use std::time::Duration;

/// Time since the clock's epoch, in microseconds. Under a fake clock this is simulated time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    /// The clock's epoch.
    pub const ZERO: Instant = Instant(0);

    /// The instant `elapsed` after the epoch.
    pub fn from_epoch(elapsed: Duration) -> Instant {
        Instant(u64::try_from(elapsed.as_micros()).expect("instant beyond u64 microseconds"))
    }

    /// Time elapsed since the epoch.
    pub fn since_epoch(self) -> Duration {
        Duration::from_micros(self.0)
    }

    /// Time from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        let micros = u64::try_from(rhs.as_micros()).expect("duration beyond u64 microseconds");
        Instant(self.0.checked_add(micros).expect("instant overflow"))
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_since(rhs)
    }
}

impl std::fmt::Display for Instant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:06}s", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}
