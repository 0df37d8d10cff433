//! `interleave-server`: one node of Interleave's replicated key-value store, on a real disk and
//! real TCP. `interleave-server --help` says how to run it.

use clap::Parser;
use deploy::{Server, ServerArgs};
use std::io::IsTerminal;
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let args = ServerArgs::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colours for a terminal, plain text for a log file.
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let config = match args.config() {
        Ok(config) => config,
        Err(error) => {
            eprintln!("interleave-server: error: {error}");
            return ExitCode::from(2);
        }
    };
    deploy::stop_on_term_or_interrupt();
    let server = match Server::start(&config) {
        Ok(server) => server,
        Err(error) => {
            eprintln!("interleave-server: error: {error}");
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
            eprintln!("interleave-server: error: {failure}");
            ExitCode::from(1)
        }
    }
}
