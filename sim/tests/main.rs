//! The simulation suite: every test runs a cluster in simulated time with the continuous
//! invariants on. A failure prints its seed and the command that replays it.
#![cfg(not(any(loom, shuttle)))]

mod agreement;
mod catalogue;
mod chaos;
mod election;
mod faults;
mod kv;
mod lease_reads;
mod log_storage;
mod persistence;
mod snapshots;
mod support;
mod transactions;
