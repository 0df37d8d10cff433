//! What the list-append checker reports: the kinds of dependency, the cycles named by the
//! weakest isolation level they break, and the anomalies that need no cycle.

use super::TxnId;

/// A kind of dependency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// Write-write: the first appended the version before the second's.
    Ww,
    /// Write-read: the second read the first's append.
    Wr,
    /// Read-write (anti-dependency): the first read a version the second's append follows.
    Rw,
    /// Real time: the first returned before the second was called.
    Rt,
}

impl EdgeKind {
    /// Its name in reports: `ww`, `wr`, `rw`, `rt`.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Ww => "ww",
            EdgeKind::Wr => "wr",
            EdgeKind::Rw => "rw",
            EdgeKind::Rt => "rt",
        }
    }
}

/// One step of a cycle: a transaction and the kind of edge to the next step's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The transaction.
    pub txn: TxnId,
    /// The dependency on the next transaction of the cycle (the first, after the last).
    pub edge: EdgeKind,
}

/// The isolation anomaly a cycle shows (Adya): the weakest level it breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CycleKind {
    /// ww edges only: dirty writes (breaks read uncommitted).
    G0,
    /// ww and wr edges: circular information flow (breaks read committed).
    G1c,
    /// Exactly one rw edge: read skew (breaks snapshot isolation).
    GSingle,
    /// Two or more rw edges: write skew (breaks serializability).
    G2,
}

impl CycleKind {
    /// Elle's name for it.
    pub fn name(self) -> &'static str {
        match self {
            CycleKind::G0 => "G0",
            CycleKind::G1c => "G1c",
            CycleKind::GSingle => "G-single",
            CycleKind::G2 => "G2",
        }
    }
}

/// An anomaly of a list-append history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Anomaly {
    /// A dependency cycle.
    Cycle {
        /// Its kind.
        kind: CycleKind,
        /// Whether it needs a real-time edge (then only strict serializability is broken).
        realtime: bool,
        /// The transactions of the cycle, each with its edge to the next.
        steps: Vec<Step>,
    },
    /// G1a: a read saw a value an aborted transaction appended.
    AbortedRead {
        /// The reader.
        reader: TxnId,
        /// The key.
        key: u64,
        /// The value.
        value: u64,
        /// The aborted transaction.
        writer: TxnId,
    },
    /// G1b: a read ended with a value its transaction followed with another append to the key.
    IntermediateRead {
        /// The reader.
        reader: TxnId,
        /// The key.
        key: u64,
        /// The value.
        value: u64,
        /// Its transaction.
        writer: TxnId,
    },
    /// Two reads of a key neither of which is a prefix of the other: no version order.
    IncompatibleOrder {
        /// The key.
        key: u64,
        /// One reader.
        first: TxnId,
        /// The other.
        second: TxnId,
    },
    /// A read saw a value nobody appended.
    GarbageRead {
        /// The reader.
        reader: TxnId,
        /// The key.
        key: u64,
        /// The value.
        value: u64,
    },
    /// A value appended to a key twice (the history breaks the workload's own rule).
    DuplicateAppend {
        /// The key.
        key: u64,
        /// The value.
        value: u64,
        /// The first appender.
        first: TxnId,
        /// The second.
        second: TxnId,
    },
    /// A list read with a value in it twice.
    DuplicateElements {
        /// The reader.
        reader: TxnId,
        /// The key.
        key: u64,
        /// The value.
        value: u64,
    },
    /// A transaction whose read of a key does not end with its own earlier appends to it.
    Internal {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: u64,
    },
}

impl Anomaly {
    /// Elle's name for it.
    pub fn name(&self) -> String {
        match self {
            Anomaly::Cycle { kind, realtime, .. } => {
                format!(
                    "{}{}",
                    kind.name(),
                    if *realtime { "-realtime" } else { "" }
                )
            }
            Anomaly::AbortedRead { .. } => "G1a".into(),
            Anomaly::IntermediateRead { .. } => "G1b".into(),
            Anomaly::IncompatibleOrder { .. } => "incompatible-order".into(),
            Anomaly::GarbageRead { .. } => "garbage-read".into(),
            Anomaly::DuplicateAppend { .. } => "duplicate-append".into(),
            Anomaly::DuplicateElements { .. } => "duplicate-elements".into(),
            Anomaly::Internal { .. } => "internal".into(),
        }
    }
}
