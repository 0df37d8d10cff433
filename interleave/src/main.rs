//! `interleave`: hunts for bugs in the Raft cluster by running the chaos workload over many seeds
//! in simulated time, and says what it found.
//!
//! Exit status: 0 nothing found, 1 a violation found, 2 usage or input error.

use interleave::cli::{Cli, Command};
use interleave::commands::{admin, chaos, deploy, gather, mutants, replay, shrink};
use std::process::ExitCode;

fn main() -> ExitCode {
    interleave::interrupt::quiet_on_closed_pipe();
    // A failing simulation is reported with its seed and message by the runner; the default
    // panic output of the simulation's own threads would only bury that report.
    // A standard output that cannot be written (`> /dev/full`) is an error to report, not a bug.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some(message) = interleave::interrupt::output_failure(info) {
            // Said where it can be: when standard error is what failed, `eprintln!` would panic
            // again inside this hook, and the process would abort.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "interleave: {message}");
            std::process::exit(interleave::interrupt::OUTPUT_FAILED_EXIT.into());
        }
        if std::thread::current().name() == Some("main") {
            default_hook(info);
        }
    }));
    let cli = match Cli::parse_words(std::env::args_os()) {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() { 2 } else { 0 };
            if let Err(failure) = error.print() {
                eprintln!("interleave: cannot write the usage text: {failure}");
                return ExitCode::from(interleave::interrupt::OUTPUT_FAILED_EXIT);
            }
            return ExitCode::from(code);
        }
    };
    let command = match cli.command {
        Some(command) => command,
        // No subcommand: `chaos` with the defaults clap gives it.
        None => match Cli::parse_words(["interleave", "chaos"]) {
            Ok(Cli {
                command: Some(command),
            }) => command,
            _ => unreachable!("`interleave chaos` parses"),
        },
    };
    // A server sets up its own logging and signals, as the `interleave-server` binary does.
    let command = match command {
        Command::Server(args) => return ::server::serve(&args, "interleave server"),
        command => command,
    };
    if let Err(message) = interleave::logging::init() {
        eprintln!("interleave: {message}");
        return ExitCode::from(2);
    }
    let watchdog = match sim::runner::watchdog_limit() {
        Ok(limit) => interleave::engines::Watchdog(limit),
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Chaos(args) => chaos::chaos(&args, watchdog),
        Command::Replay(args) => replay::replay(&args, watchdog),
        Command::Check(args) => ExitCode::from(models::cli::run(&args, "interleave")),
        Command::Mutants(args) => mutants::mutants(&args, watchdog),
        Command::Shrink(args) => shrink::shrink(&args),
        Command::Gather(args) => gather::gather(&args),
        Command::Deploy(args) => deploy::deploy(&args),
        Command::Admin(args) => admin::admin(&args),
        Command::Server(_) => unreachable!("served above"),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            use std::io::Write;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "interleave", &mut script);
            match std::io::stdout().write_all(&script) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("interleave: cannot write to stdout: {error}");
                    ExitCode::from(interleave::interrupt::OUTPUT_FAILED_EXIT)
                }
            }
        }
    }
}
