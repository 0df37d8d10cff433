//! An Elle-style checker for list-append transactions (Kingsbury and Alvaro, "Elle: Inferring
//! Isolation Anomalies from Experimental Observations", VLDB 2020).
//!
//! Each transaction reads some keys and appends unique values to some keys. A read returns a
//! key's whole list, so every read of a key is a prefix of one order of that key's appends: the
//! **version order**, known exactly from what was read, without a search. From it the checker
//! infers who depended on whom:
//! - **ww**: the append of a version's last element came before the next version's;
//! - **wr**: a read saw the list whose last element a transaction appended;
//! - **rw**: a read saw a list, and another transaction appended the next element (the reader
//!   came before it);
//! - **rt** (real time): one transaction returned before another was called.
//!
//! A serializable history has no cycle in ww + wr + rw; a strictly serializable one has none
//! with rt edges added. Each cycle is named by the weakest isolation level it breaks (Adya's
//! G0, G1c, G-single, G2; `-realtime` when it needs an rt edge), and so are the anomalies that
//! need no cycle: a read of an aborted append (G1a), of an append its transaction later
//! overwrote (G1b), of a value nobody appended, reads of one key that no single order explains,
//! and a transaction that does not see its own appends. Linear in the history's size: one pass
//! builds the graph, Tarjan's algorithm finds its strongly connected components, and only a
//! component with a cycle is searched for one.

mod anomaly;
mod cycles;
pub mod describe;
mod graph;
#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
mod versions;

pub use anomaly::{Anomaly, CycleKind, EdgeKind, Step};

/// A transaction's index in the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxnId(pub usize);

/// One operation of a transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MicroOp {
    /// Append `value` to `key`'s list. Values appended to one key are unique.
    Append {
        /// The key.
        key: u64,
        /// The value, unique among the appends to `key`.
        value: u64,
    },
    /// Read `key`'s list: `None` when the transaction's outcome is not known (so neither is
    /// what it read).
    Read {
        /// The key.
        key: u64,
        /// The list read, oldest first.
        list: Option<Vec<u64>>,
    },
}

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnOutcome {
    /// It committed, and its reads are known.
    Committed,
    /// It aborted: none of its appends may be seen.
    Aborted,
    /// Unknown (the client timed out): its appends may have happened or not.
    Unknown,
}

/// One transaction of a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Txn {
    /// The client that ran it.
    pub client: u64,
    /// When it was called.
    pub call: u64,
    /// When it returned (`None` if its outcome is unknown).
    pub ret: Option<u64>,
    /// How it ended.
    pub outcome: TxnOutcome,
    /// Its operations, in order.
    pub ops: Vec<MicroOp>,
}

/// What the checker found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TxnReport {
    /// Every anomaly, cycles first named by the weakest level they break.
    pub anomalies: Vec<Anomaly>,
    /// Transactions in the dependency graph (committed, or unknown and seen).
    pub transactions: usize,
    /// Edges of the graph, real-time ones included.
    pub edges: usize,
}

impl TxnReport {
    /// Whether the history is strictly serializable (no anomaly at all).
    pub fn strictly_serializable(&self) -> bool {
        self.anomalies.is_empty()
    }

    /// Whether it is serializable: no anomaly but cycles that need a real-time edge.
    pub fn serializable(&self) -> bool {
        self.anomalies
            .iter()
            .all(|anomaly| matches!(anomaly, Anomaly::Cycle { realtime: true, .. }))
    }
}

/// Checks a list-append history for strict serializability.
pub fn check_list_append(history: &[Txn]) -> TxnReport {
    let versions = versions::infer(history);
    let mut anomalies = versions.anomalies.clone();
    let graph = graph::DependencyGraph::build(history, &versions);
    anomalies.extend(cycles::cycles(&graph));
    TxnReport {
        anomalies,
        transactions: graph.transactions(),
        edges: graph.edge_count(),
    }
}
