//! Simulation for the Raft node: a network that delays, loses and partitions messages, disks
//! that can tear a write, a fake clock that advances only when every thread is durably blocked,
//! and a cluster harness that checks the safety properties continuously.
//!
//! Every run has one seed; every failure prints it with the command that replays it
//! ([`runner::replay_command`]).
//!
//! ```
//! # if threadsim::sync::MODEL_CHECKER_BUILD { return; } // a loom or shuttle build runs only models
//! use sim::{run_seeds, Cluster, ClusterConfig};
//! use node::Command;
//!
//! run_seeds("doc-example", &[1], |sim| {
//!     let cluster = Cluster::new(sim, ClusterConfig::new(3));
//!     let leader = cluster.check_one_leader();
//!     let index = cluster.one(Command::from_text("x"), 3, false);
//!     assert_eq!(index.0, 1);
//!     println!("leader {leader} committed index {index}");
//!     cluster.shutdown();
//! });
//! ```
#![deny(missing_docs)]

pub mod availability_probe;
pub mod chaos;
pub mod cluster;
pub mod commit_timeline;
pub mod disk;
pub mod events;
pub mod invariants;
pub mod kv_online;
pub mod kv_workload;
pub mod leader_faults;
pub mod membership_changes;
pub mod mutants;
pub mod network;
pub mod non_disruption_probe;
pub mod run_end;
pub mod runner;
pub mod scenarios;
pub mod schedule;
pub mod settings;
pub mod shrink;
pub mod skew;
pub mod timeline;
pub mod txn_client;

pub use chaos::{
    run_chaos, run_chaos_with, ChaosConfig, ChaosEvents, FaultMix, RunFigures, SimStorage,
};
pub use cluster::{Cluster, ClusterConfig};
pub use disk::{Disk, Layout};
pub use invariants::Invariants;
pub use kv_workload::{
    check_kv_history, client_endpoints, run_kv_workload, run_kv_workload_with, KvRun,
    KvWorkloadConfig,
};
pub use network::{NetConfig, Network};
pub use runner::{replay_command, run_seeds, seeds, simulate, Sim, SimFailure};
pub use settings::ClusterSettings;
pub use skew::ClockSkew;
