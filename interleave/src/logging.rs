//! Live logging: the trace events of running nodes (elections, partitions, crashes, and with
//! `debug` commits and applies), printed to standard error as they happen, when asked for with
//! `INTERLEAVE_LOG` or, as in most Rust tools, `RUST_LOG` (`RUST_LOG=interleave=debug`).

use tracing_subscriber::EnvFilter;

/// The variables read, the first set one wins.
pub const LOG_VARIABLES: [&str; 2] = ["INTERLEAVE_LOG", "RUST_LOG"];

/// Installs the standard-error logger if a log variable is set; an error names the variable
/// whose value is not a filter.
pub fn init() -> Result<(), String> {
    let Some((variable, text)) = LOG_VARIABLES
        .iter()
        .find_map(|variable| Some((variable, std::env::var(variable).ok()?)))
    else {
        return Ok(());
    };
    let filter = parse(&text).map_err(|error| format!("{variable}={text:?}: {error}"))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init()
        .map_err(|error| format!("cannot install the logger: {error}"))
}

/// A filter such as `info`, `interleave=debug` or `warn,interleave=info`.
fn parse(text: &str) -> Result<EnvFilter, String> {
    EnvFilter::builder()
        .parse(text)
        .map_err(|error| format!("not a log filter ({error}); try `info` or `interleave=debug`"))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    #[test]
    fn a_filter_is_parsed_and_garbage_is_refused() {
        for good in ["info", "interleave=debug", "warn,interleave=info", ""] {
            assert!(super::parse(good).is_ok(), "{good:?}");
        }
        for bad in ["interleave=loud", "=info=", "[{"] {
            assert!(super::parse(bad).is_err(), "{bad:?}");
        }
    }
}
