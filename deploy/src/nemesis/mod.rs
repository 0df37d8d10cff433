//! A nemesis for a real cluster, after Jepsen: server processes on this machine with a TCP proxy
//! on every link, clients that record a history with real times, and faults drawn from a seed
//! (partitions, one-way cuts, delays, `kill -9`, SIGSTOP, clock skew, a failing disk) injected
//! one after another while they run; then everything is healed and the cluster must recover.
//! The history goes to the linearizability checker (the caller's part: `interleave deploy`).
//!
//! A seed decides the plan (which faults, when, for how long, aimed at the leader or at which
//! node) and the clients' choices; real processes, sockets and time decide the rest, so a rerun
//! of a seed injects the same faults at the same moments but is not the same run.

mod clients;
mod fault;
mod inject;
mod plan;
mod recovery;
mod run;

pub use clients::{Clients, Workload, KEY_LIFETIME, OPERATION_DEADLINE};
pub use fault::{Direction, Fault, FaultKind, Target};
pub use plan::{plan, Step};
pub use recovery::RECOVERY_BOUND;
pub use run::{run, FaultRecord, NemesisConfig, NemesisRun};
