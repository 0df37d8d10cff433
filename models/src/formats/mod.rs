//! History files: the native JSON-lines format, Jepsen etcd logs and the kv (EDN) logs.
//!
//! Every reader refuses malformed input with a [`ParseError`] naming the file and line: an
//! unknown operation, a return without a call, a second call while one is in flight, a truncated
//! line, an empty file. Never a panic.

pub mod edn;
pub mod jepsen;
pub mod json;
mod json_fields;
pub mod kvlog;
pub mod txn_json;

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

/// The text of a history file read as `bytes`: UTF-8, with a leading byte-order mark skipped. An
/// invalid byte is named with its line and column (counted in bytes).
pub fn decode_text(file: &str, bytes: Vec<u8>) -> Result<String, ParseError> {
    const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";
    let bytes = match bytes.strip_prefix(BYTE_ORDER_MARK) {
        Some(rest) => rest.to_vec(),
        None => bytes,
    };
    String::from_utf8(bytes).map_err(|error| {
        let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
        let line_start = valid
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = valid.len() - line_start + 1;
        ParseError::at(
            file,
            line,
            format!("column {column}: not valid UTF-8 (the file must be UTF-8 text)"),
        )
    })
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

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::decode_text;

    #[test]
    fn a_byte_order_mark_is_skipped() {
        assert_eq!(
            decode_text("f", b"\xEF\xBB\xBF{}".to_vec()),
            Ok("{}".to_string())
        );
    }

    #[test]
    fn invalid_utf8_is_named_by_line_and_column() {
        let error = decode_text("f", b"{}\n{}\nab\xFFc".to_vec()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "f:3: column 3: not valid UTF-8 (the file must be UTF-8 text)"
        );
    }
}
