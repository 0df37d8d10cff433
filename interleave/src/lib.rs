//! The `interleave` command as a library: its subcommands, the two engines a seed runs on, replay
//! verification and failure folders. The binary (`main.rs`) only parses and dispatches; the
//! benchmarks measure the engines through [`engines::run_seed`].
#![deny(missing_docs)]

pub mod chaos;
pub mod cli;
pub mod engines;
pub mod failure_folder;
pub mod interrupt;
pub mod mutants;
pub mod outcome;
pub mod pct;
pub mod replay;
pub mod replay_line;
pub mod shrink;
pub mod shrink_command;
pub mod verify;
