//! The names of a write-ahead log's files: segments `wal-<number>.log`, snapshots
//! `snapshot-<number>` (numbers in 16 hex digits), and `<name>.tmp` while one is written.

/// The file name of segment `number` (the first segment of a new log is number 1).
pub fn segment_name(number: u64) -> String {
    format!("wal-{number:016x}.log")
}

/// The file name of snapshot `number`.
pub fn snapshot_name(number: u64) -> String {
    format!("snapshot-{number:016x}")
}

/// The number in a segment's or snapshot's file name, and which it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    Segment(u64),
    Snapshot(u64),
    /// Left by a write that never finished.
    Temporary,
}

/// What a file name in the directory stands for (`None`: not ours, left alone).
pub fn parse_name(name: &str) -> Option<Named> {
    if name.ends_with(".tmp") && (name.starts_with("wal-") || name.starts_with("snapshot-")) {
        return Some(Named::Temporary);
    }
    let hex = |digits: &str| {
        (digits.len() == 16)
            .then(|| u64::from_str_radix(digits, 16).ok())
            .flatten()
    };
    if let Some(number) = name
        .strip_prefix("wal-")
        .and_then(|rest| rest.strip_suffix(".log"))
    {
        return hex(number).map(Named::Segment);
    }
    name.strip_prefix("snapshot-")
        .and_then(hex)
        .map(Named::Snapshot)
}
