//! The faults a nemesis injects, one file per family: each declares its kinds (a
//! [`KindSpec`](super::KindSpec) each, registered in
//! [`FaultKind::ALL`](super::FaultKind::ALL)), its faults (a [`Fault`](super::Fault) each) and
//! what healing them takes (an [`Injected`](super::Injected) each). docs/how-to-add.md walks
//! through adding one.

pub mod clocks;
pub mod cuts;
pub mod disks;
pub mod forged;
pub mod membership;
pub mod packets;
pub mod processes;
pub mod strobe;

use std::time::Duration;
use threadsim::DetRng;

/// A duration drawn in whole milliseconds from `low..=high` milliseconds.
fn millis(rng: &mut DetRng, low: u64, high: u64) -> Duration {
    rng.duration_ms(Duration::from_millis(low), Duration::from_millis(high))
}

/// How long most faults hold: 1-4 s.
fn usual_hold(rng: &mut DetRng) -> Duration {
    millis(rng, 1000, 4000)
}
