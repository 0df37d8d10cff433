//! The `interleave` command as a library. [`commands`] holds one module per subcommand, each a
//! short walk over the library beneath it: the run's command-line form ([`run_spec`]), the two
//! engines a seed runs on ([`engines`]), replay lines and their verification, shrinking, failure
//! folders and reports. Nothing beneath `commands` imports it (docs/layering.md). The binary
//! (`main.rs`) only parses and dispatches; the benchmarks measure the engines through
//! [`engines::run_seed`].
#![deny(missing_docs)]

pub mod cli;
pub mod command_error;
pub mod commands;
pub mod coverage;
pub mod engines;
pub mod failure_folder;
pub mod interrupt;
pub mod junit;
pub mod logging;
pub mod out_dir;
pub mod outcome;
pub mod pct;
pub mod regressions;
pub mod replay_line;
pub mod report;
pub mod run_spec;
pub mod seeds;
pub mod shrink;
pub mod verify;

/// The version of the JSON objects `chaos`, `replay` and `mutants` print (their `version`
/// field): raised when a field changes meaning or goes away; new fields do not raise it.
pub const JSON_VERSION: u32 = 1;
