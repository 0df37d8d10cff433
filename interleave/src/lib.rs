//! The `interleave` command as a library: its subcommands, the two engines a seed runs on, replay
//! verification and failure folders. The binary (`main.rs`) only parses and dispatches; the
//! benchmarks measure the engines through [`engines::run_seed`].
#![deny(missing_docs)]

pub mod chaos;
pub mod cli;
pub mod deploy_command;
pub mod engines;
pub mod failure_folder;
pub mod gather;
pub mod interrupt;
pub mod junit;
pub mod logging;
pub mod mutants;
pub mod out_dir;
pub mod outcome;
pub mod pct;
pub mod regressions;
pub mod replay;
pub mod replay_line;
pub mod report;
pub mod run_spec;
pub mod seeds;
pub mod shrink;
pub mod shrink_command;
pub mod verify;

/// The version of the JSON objects `chaos`, `replay` and `mutants` print (their `version`
/// field): raised when a field changes meaning or goes away; new fields do not raise it.
pub const JSON_VERSION: u32 = 1;
