//! Whole-cluster simulations under shuttle: shuttle owns every thread of a simulated cluster
//! (nodes, clock, network carriers, harness) and chooses the schedule, so a run is a pure
//! function of its schedule and any failure replays exactly.
//!
//! - `explore`: runs a scenario under the random or the PCT scheduler for a number of
//!   schedules, with a fixed scheduler seed (or `INTERLEAVE_SHUTTLE_SEED`); on failure returns
//!   how many schedules it took, the message, and the file the failing schedule was written to,
//!   with the command that replays it.
//! - `detectors`: each broken variant shuttle must find, with its scenario, scheduler and
//!   budget of schedules (shared by the tests and the detector-strength benchmark).
//! - `scenarios`: the cluster scenarios. All randomness of a run (network delays and drops,
//!   fault choices, election timeouts) derives from one seed drawn from shuttle's random source.
//!
//! Everything here needs `RUSTFLAGS="--cfg shuttle"`; without it this crate is empty.
#![deny(missing_docs)]

#[cfg(shuttle)]
pub mod detectors;
#[cfg(shuttle)]
mod explore;
#[cfg(shuttle)]
pub mod scenarios;

#[cfg(shuttle)]
pub use explore::{
    explore, explore_from_seed, iterations, scheduler_seed, Found, Schedules, SCHEDULE_VARIABLE,
    SEED_VARIABLE,
};
