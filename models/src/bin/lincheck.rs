//! `lincheck`: checks history files for linearizability.
//!
//! Exit status: 0 every file linearizable; 1 some file not linearizable; 3 some file unknown
//! (budget exhausted) and none illegal; 2 bad input or usage; 141 the output was closed.

use clap::Parser;
use models::cli::{run, CheckArgs};
use std::process::ExitCode;

/// Checks client histories for linearizability: every operation must appear to take effect at
/// one instant between its call and its return, with results that match a sequential execution
/// of the model. Operations whose outcome is unknown may take effect after their call, or never.
#[derive(Parser, Debug)]
#[command(name = "lincheck", version)]
struct Cli {
    #[command(flatten)]
    args: CheckArgs,
}

fn main() -> ExitCode {
    match Cli::try_parse() {
        Ok(cli) => ExitCode::from(run(&cli.args, "lincheck")),
        Err(error) => {
            let code = if error.use_stderr() { 2 } else { 0 };
            let _ = error.print();
            ExitCode::from(code)
        }
    }
}
