//! History files: the native JSON-lines format, Jepsen etcd logs and the kv (EDN) logs.
//!
//! Every reader refuses malformed input with a [`ParseError`] naming the file and line: an
//! unknown operation, a return without a call, a second call while one is in flight, a truncated
//! line, an empty file. Never a panic.

pub mod edn;
pub mod jepsen;
pub mod json;
pub mod kvlog;

use std::fmt;

/// A history file that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ParseError {
    /// The file (as given).
    pub file: String,
    /// The 1-based line number (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    /// An error at `line` of `file`.
    pub fn at(file: &str, line: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }
}

/// The formats the tools read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Native JSON lines (see [`json`]).
    Json,
    /// Jepsen etcd logs (register operations).
    Jepsen,
    /// The MIT 6.824 kv logs (EDN maps, key-value operations).
    Kv,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Json => "json",
            Format::Jepsen => "jepsen",
            Format::Kv => "kv",
        })
    }
}

/// Tracks the operation each client has in flight, so returns can be matched to calls.
pub(crate) struct InFlight<I> {
    calls: std::collections::BTreeMap<u64, (I, String, u64, usize)>,
}

impl<I> InFlight<I> {
    pub(crate) fn new() -> Self {
        InFlight {
            calls: std::collections::BTreeMap::new(),
        }
    }

    /// Records a call of `function` by `client` at `time` (line `line`).
    pub(crate) fn call(
        &mut self,
        file: &str,
        line: usize,
        client: u64,
        function: &str,
        input: I,
        time: u64,
    ) -> Result<(), ParseError> {
        if let Some((_, other, _, at)) = self.calls.get(&client) {
            return Err(ParseError::at(
                file,
                line,
                format!("client {client} calls {function} while its {other} from line {at} is still in flight"),
            ));
        }
        self.calls
            .insert(client, (input, function.to_string(), time, line));
        Ok(())
    }

    /// Takes the call that a return of `function` by `client` completes.
    pub(crate) fn complete(
        &mut self,
        file: &str,
        line: usize,
        client: u64,
        function: &str,
    ) -> Result<(I, u64), ParseError> {
        match self.calls.remove(&client) {
            None => Err(ParseError::at(
                file,
                line,
                format!("client {client} returns from {function} without a call"),
            )),
            Some((_, called, _, at)) if called != function => Err(ParseError::at(
                file,
                line,
                format!("client {client} returns from {function} but called {called} on line {at}"),
            )),
            Some((input, _, time, _)) => Ok((input, time)),
        }
    }

    /// Calls that never returned: unknown outcome.
    pub(crate) fn into_pending(self) -> impl Iterator<Item = (u64, I, u64)> {
        self.calls
            .into_iter()
            .map(|(client, (input, _, time, _))| (client, input, time))
    }
}

/// Fails on a history with no operations at all.
pub(crate) fn require_operations<T>(file: &str, operations: Vec<T>) -> Result<Vec<T>, ParseError> {
    if operations.is_empty() {
        return Err(ParseError::at(
            file,
            0,
            "no operations in the file (empty or only blank lines)",
        ));
    }
    Ok(operations)
}
