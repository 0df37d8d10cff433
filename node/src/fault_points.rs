//! The node's fault points (`threadsim::fault_points`, FoundationDB's BUGGIFY): places where
//! the node may behave as a loaded machine lets it, armed per simulated run from the seed. Each
//! is a legal behaviour the correct node must survive: a wait that wakes for nothing, a thread
//! switch in the middle of a critical section, a channel with no room, a reply handled twice, an
//! election timeout at the bottom of its range, a request sent late.
//!
//! Simulated time cannot pass while a thread holds the node's lock (the fake clock advances
//! only when every thread is durably blocked, and threads queued on the lock are not: that is
//! the `sleep-in-persist` variant's deadlock), so a slow step inside the lock is a thread switch
//! there, not a sleep.

use std::time::Duration;
use threadsim::Instant;

/// A place where the node may misbehave as its environment allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultPoint {
    /// A worker's wait returns though nothing woke it.
    SpuriousWakeup,
    /// The thread writing the node's state is switched out in the middle of it, lock held.
    SwitchInPersist,
    /// An RPC handler is switched out holding the node's lock, after the rules ran.
    SwitchInHandler,
    /// The apply channel has no room: committed entries go to the applier thread.
    ApplyChannelFull,
    /// A reply is handled a second time, as a duplicated packet would be.
    ReplyHandledTwice,
    /// An election timeout drawn at the bottom of its range.
    ElectionTimeoutAtMinimum,
    /// A replicator sends its request up to 20 ms late, outside the lock.
    SendLate,
}

impl FaultPoint {
    /// Every fault point, in a fixed order.
    pub const ALL: [FaultPoint; 7] = [
        FaultPoint::SpuriousWakeup,
        FaultPoint::SwitchInPersist,
        FaultPoint::SwitchInHandler,
        FaultPoint::ApplyChannelFull,
        FaultPoint::ReplyHandledTwice,
        FaultPoint::ElectionTimeoutAtMinimum,
        FaultPoint::SendLate,
    ];

    /// The point's name in the trace and in reports.
    pub fn name(self) -> &'static str {
        match self {
            FaultPoint::SpuriousWakeup => "shell: spurious wake-up",
            FaultPoint::SwitchInPersist => "shell: thread switch in persist",
            FaultPoint::SwitchInHandler => "shell: thread switch in an RPC handler",
            FaultPoint::ApplyChannelFull => "shell: apply channel full",
            FaultPoint::ReplyHandledTwice => "shell: reply handled twice",
            FaultPoint::ElectionTimeoutAtMinimum => "core: election timeout at its minimum",
            FaultPoint::SendLate => "shell: request sent late",
        }
    }
}

/// Whether `point` fires now (only in a simulated run that armed its fault points).
pub fn fires(point: FaultPoint, now: Instant) -> bool {
    threadsim::fault_points::fire(point.name(), now)
}

/// If `point` fires now, how long it delays (1 ms to `max`).
pub fn delay(point: FaultPoint, now: Instant, max: Duration) -> Option<Duration> {
    threadsim::fault_points::delay(point.name(), now, max)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn every_fault_point_has_its_own_name_and_a_site() {
        let names: std::collections::BTreeSet<&str> =
            FaultPoint::ALL.iter().map(|point| point.name()).collect();
        assert_eq!(names.len(), FaultPoint::ALL.len());
        let sources = crate::coverage::tests::node_sources();
        for point in FaultPoint::ALL {
            let site = format!("FaultPoint::{point:?}");
            assert!(sources.contains(&site), "{site} is used nowhere");
        }
    }
}
