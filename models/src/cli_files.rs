//! What the checking commands share: reading a history file, and the constants of their
//! output.

use crate::formats;
use std::path::Path;

/// The version of the JSON object `--json` prints per file (its `version` field): raised when a
/// field changes meaning or goes away; new fields do not raise it.
pub const JSON_VERSION: u32 = 1;

/// The exit status when standard output was closed before every result was written (what a
/// shell reports for a tool ended by SIGPIPE).
pub const CLOSED_PIPE: u8 = 141;

/// Reads the history file at `path` (shown as `name`): at most `limit` bytes of UTF-8 text, from
/// a regular file or a pipe (never a device).
pub(crate) fn read_history(path: &Path, name: &str, limit: u64) -> Result<String, String> {
    let bytes = userfiles::read_limited_or_pipe(path, limit).map_err(|error| match error {
        userfiles::ReadError::TooLarge { .. } => {
            format!("{name} is larger than {limit} bytes (--max-input-bytes raises the limit)")
        }
        userfiles::ReadError::Io { source, .. } => format!("cannot read {name}: {source}"),
        other => other.to_string(),
    })?;
    formats::decode_text(name, bytes).map_err(|e| e.to_string())
}
