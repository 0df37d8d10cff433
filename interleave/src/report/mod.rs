//! The run report (`report.html` in a failing seed's folder, `replay --report FILE` for any seed):
//! a picture of the run over simulated time, one lane per node, drawn from its event trace.

pub mod html;
pub mod picture;

use crate::outcome::SeedOutcome;
use picture::Picture;
use std::path::Path;

/// Writes the report of `outcome` to `path` (whole or not at all), under `title` and `lines`;
/// `history_page` links the key-value history's page beside it.
pub fn write(
    path: &Path,
    outcome: &SeedOutcome,
    title: String,
    lines: Vec<String>,
    history_page: Option<&str>,
) -> std::io::Result<()> {
    let picture = Picture::from_trace(&outcome.trace);
    // The workload stamps operations in simulated nanoseconds; the picture is in microseconds.
    let operations: Option<Vec<(u64, Option<u64>)>> = outcome.kv.as_ref().map(|kv| {
        (kv.history.iter())
            .map(|op| (op.call / 1_000, op.ret.map(|ret| ret / 1_000)))
            .collect()
    });
    let header = html::Header {
        title,
        lines,
        history_page: history_page.map(str::to_string),
    };
    let page = html::render(&header, &picture, operations.as_deref());
    userfiles::write_whole(path, page)?;
    Ok(())
}
