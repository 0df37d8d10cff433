//! A server process from start to exit: what `interleave-server` and `interleave server` run.

use crate::server::Server;
use crate::server_args::ServerArgs;
use std::io::IsTerminal;
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

/// Sets up logging (to standard error: colours on a terminal, plain text in a file) and the
/// SIGTERM and Ctrl-C handlers, starts the server `args` describe and serves until it is asked
/// to stop (exit 0) or its node fails (exit 1); exit 2 on bad arguments, 1 when it cannot start,
/// and 1 when any of its threads panics ([`crate::fail_stop`]).
/// `program` names the program in error messages.
pub fn serve(args: &ServerArgs, program: &str) -> ExitCode {
    // A log that cannot be written (a full disk, a reader that went away) costs the log, never
    // the node: the subscriber's own complaint about it would be written with `eprintln!`, which
    // panics on a closed standard error, and a panic stops the server.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .log_internal_errors(false)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let config = match args.config() {
        Ok(config) => config,
        Err(error) => {
            say(&format!("{program}: error: {error}"));
            return ExitCode::from(2);
        }
    };
    crate::stop_on_term_or_interrupt();
    crate::fail_stop::exit_on_panic();
    let server = match Server::start(&config) {
        Ok(server) => server,
        Err(error) => {
            say(&format!("{program}: error: {error}"));
            return ExitCode::from(1);
        }
    };
    let status = server.node().status();
    tracing::info!(
        node = %config.id,
        term = status.term.0,
        log = status.last_log_index.0,
        read_mode = %config.read_mode,
        data_dir = %config.data_dir.display(),
        "serving nodes on {} and clients on {}",
        config.members[&config.id],
        config.client_address
    );
    match server.serve_until_stopped() {
        Ok(()) => {
            tracing::info!("stopped");
            ExitCode::SUCCESS
        }
        Err(failure) => {
            tracing::error!("{failure}");
            say(&format!("{program}: error: {failure}"));
            ExitCode::from(1)
        }
    }
}

/// Writes `line` to standard error, if it can still be written.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
