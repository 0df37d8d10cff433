//! `interleave-server`: one node of Interleave's replicated key-value store, on a real disk and
//! real TCP. `interleave-server --help` says how to run it.

use clap::Parser;
use deploy::ServerArgs;
use std::process::ExitCode;

fn main() -> ExitCode {
    deploy::serve(&ServerArgs::parse(), "interleave-server")
}
