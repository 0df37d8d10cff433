//! A nemesis for a real cluster, after Jepsen: server processes on this machine (this project's
//! server, etcd, or any [`crate::system::System`]), as hosts in network namespaces behind packet
//! filters or behind a TCP proxy on every link; clients that record a history with real times;
//! and faults drawn from a seed (partitions of every shape, lost and duplicated packets, delays,
//! `kill -9`, SIGSTOP, power cuts, full and corrupted disks, and for a server that cooperates
//! clock skew and strobes, a failing disk and changes of the configuration) injected one after
//! another while they run; then everything is healed and the cluster must recover.
//! The history goes to the linearizability checker (the caller's part: `interleave deploy`).
//!
//! A seed decides the plan (which faults, when, for how long, aimed at the leader or at which
//! node) and the clients' choices; real processes, sockets and time decide the rest, so a rerun
//! of a seed injects the same faults at the same moments but is not the same run.
//!
//! Each family of faults is one file of `faults/`, and each kind one line of the registry,
//! [`FaultKind::ALL`]; docs/how-to-add.md walks through adding one.

mod availability;
mod clients;
mod error;
mod fault;
pub mod faults;
mod forger;
mod inject;
mod kind;
mod plan;
mod recovery;
mod run;
mod target;

pub use availability::{bound_on_leader, writes_stopped_for, FaultGroup, WritesStopped};
pub use clients::{Clients, Workload, KEY_LIFETIME, OPERATION_DEADLINE};
pub use error::{Finding, NemesisError, RunError};
pub use fault::{Draw, Fault, FaultKind, Injected, Injection, KindSpec, NetworkNeed, Outage};
pub use forger::{Forger, Tally, Targets};
pub use inject::Nemesis;
pub use kind::UnknownFault;
pub use plan::{plan, Step};
pub use recovery::RECOVERY_BOUND;
pub use run::{run, FaultRecord, NemesisConfig, NemesisRun};
pub use target::Target;
