//! Live logging: the trace events of running nodes (elections, partitions, crashes, and with
//! `debug` commits and applies), printed to standard error as they happen, when asked for with
//! `INTERLEAVE_LOG` or, as in most Rust tools, `RUST_LOG` (`RUST_LOG=interleave=debug`).

use tracing_subscriber::EnvFilter;

/// The variables read, the first set one wins.
pub const LOG_VARIABLES: [&str; 2] = ["INTERLEAVE_LOG", "RUST_LOG"];

/// Why live logging cannot start.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// A variable's value that is not a filter.
    #[error("{variable}={text:?}: {source}")]
    BadVariable {
        /// The variable.
        variable: &'static str,
        /// Its value.
        text: String,
        /// What is wrong with it.
        source: BadFilter,
    },
    /// The logger cannot be installed.
    #[error("cannot install the logger: {0}")]
    Install(String),
}

/// A text that is not a log filter.
#[derive(Debug, thiserror::Error)]
#[error("not a log filter ({0}); try `info` or `interleave=debug`")]
pub struct BadFilter(tracing_subscriber::filter::ParseError);

/// Installs the standard-error logger if a log variable is set; an error names the variable
/// whose value is not a filter.
pub fn init() -> Result<(), LoggingError> {
    let Some((variable, text)) = LOG_VARIABLES
        .iter()
        .find_map(|variable| Some((variable, std::env::var(variable).ok()?)))
    else {
        return Ok(());
    };
    let filter = parse(&text).map_err(|source| LoggingError::BadVariable {
        variable,
        text: text.clone(),
        source,
    })?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init()
        .map_err(|error| LoggingError::Install(error.to_string()))
}

/// A filter such as `info`, `interleave=debug` or `warn,interleave=info`.
fn parse(text: &str) -> Result<EnvFilter, BadFilter> {
    EnvFilter::builder().parse(text).map_err(BadFilter)
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
