//! Whole-cluster simulations under shuttle: shuttle owns every thread of a simulated cluster
//! (nodes, clock, network carriers, harness) and chooses the schedule, so a run is a pure
//! function of its schedule and any failure replays exactly.
//!
//! - [`explore`]: runs a scenario under the random or the PCT scheduler for a number of
//!   schedules, with a fixed scheduler seed; on failure returns how many schedules it took, the
//!   message, and the file the failing schedule was written to, with the command that replays it.
//! - [`scenarios`]: the cluster scenarios. All randomness of a run (network delays and drops,
//!   fault choices, election timeouts) derives from one seed drawn from shuttle's random source.
//!
//! Everything here needs `RUSTFLAGS="--cfg shuttle"`; without it this crate is empty.
#![deny(missing_docs)]

#[cfg(shuttle)]
mod explore;
#[cfg(shuttle)]
pub mod scenarios;

#[cfg(shuttle)]
pub use explore::{explore, iterations, Found, Schedules, SCHEDULE_VARIABLE};
