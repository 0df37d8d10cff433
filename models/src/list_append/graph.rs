//! The dependency graph of a list-append history: a node per transaction and ww, wr and rw
//! edges from the version orders, and real-time edges through a chain of time nodes (one per
//! distinct return time), so that "returned before called" costs two edges per transaction, not
//! one per pair.

use super::anomaly::EdgeKind;
use super::versions::{committed_reads, Versions};
use super::{Txn, TxnId, TxnOutcome};

/// A node: a transaction (`0..transactions`) or a time node after them.
pub(super) type Node = u32;

/// The graph, as adjacency lists.
pub(super) struct DependencyGraph {
    /// Out-edges of each node.
    pub edges: Vec<Vec<(Node, EdgeKind)>>,
    /// Nodes below this are transactions (`TxnId(node)`); the rest are time nodes.
    pub first_time_node: usize,
    /// Transactions that take part (committed, or unknown and seen).
    in_graph: usize,
}

impl DependencyGraph {
    /// Builds the graph of `history` given its inferred `versions`.
    pub fn build(history: &[Txn], versions: &Versions) -> DependencyGraph {
        let first_time_node = history.len();
        let mut graph = DependencyGraph {
            edges: vec![Vec::new(); first_time_node],
            first_time_node,
            in_graph: 0,
        };
        let mut seen = vec![false; history.len()];
        for (key, order) in &versions.order {
            for value in order {
                if let Some(writer) = versions.writer(*key, *value) {
                    seen[writer.txn.0] = true;
                }
            }
            graph.add_write_write(*key, order, versions);
        }
        for (reader, key, list) in committed_reads(history) {
            graph.add_read(reader, key, list, versions);
        }
        let member: Vec<bool> = (history.iter().zip(&seen))
            .map(|(txn, seen)| {
                txn.outcome == TxnOutcome::Committed
                    || (txn.outcome == TxnOutcome::Unknown && *seen)
            })
            .collect();
        graph.in_graph = member.iter().filter(|member| **member).count();
        graph.add_real_time(history, &member);
        graph
    }

    /// Transactions that take part.
    pub fn transactions(&self) -> usize {
        self.in_graph
    }

    /// Edges, real-time ones included.
    pub fn edge_count(&self) -> usize {
        self.edges.iter().map(Vec::len).sum()
    }

    /// The transaction a node stands for, if it is not a time node.
    pub fn txn(&self, node: Node) -> Option<TxnId> {
        ((node as usize) < self.first_time_node).then_some(TxnId(node as usize))
    }

    fn add(&mut self, from: TxnId, to: TxnId, kind: EdgeKind) {
        if from != to {
            self.edges[from.0].push((to.0 as Node, kind));
        }
    }

    /// ww: each version's last appender before the next one's.
    fn add_write_write(&mut self, key: u64, order: &[u64], versions: &Versions) {
        for pair in order.windows(2) {
            if let (Some(before), Some(after)) =
                (versions.writer(key, pair[0]), versions.writer(key, pair[1]))
            {
                self.add(before.txn, after.txn, EdgeKind::Ww);
            }
        }
    }

    /// wr from the appender of the last value `reader` saw that it did not append itself, and
    /// rw to the appender of the value after it in the version order.
    fn add_read(&mut self, reader: TxnId, key: u64, list: &[u64], versions: &Versions) {
        let own = list
            .iter()
            .rev()
            .take_while(|&&value| versions.writer(key, value).is_some_and(|w| w.txn == reader))
            .count();
        let external = &list[..list.len() - own];
        if let Some(writer) = (external.last()).and_then(|&value| versions.writer(key, value)) {
            self.add(writer.txn, reader, EdgeKind::Wr);
        }
        let next = versions
            .order
            .get(&key)
            .and_then(|order| order.get(external.len()));
        if let Some(writer) = next.and_then(|&value| versions.writer(key, value)) {
            self.add(reader, writer.txn, EdgeKind::Rw);
        }
    }

    /// rt: a transaction to the time node of its return; the time node of the last return
    /// before a transaction's call to it; each time node to the next.
    fn add_real_time(&mut self, history: &[Txn], member: &[bool]) {
        let mut returns: Vec<u64> = (history.iter().zip(member))
            .filter(|(_, member)| **member)
            .filter_map(|(txn, _)| txn.ret)
            .collect();
        returns.sort_unstable();
        returns.dedup();
        let time_node = |at: usize| (self.first_time_node + at) as Node;
        self.edges
            .resize(self.first_time_node + returns.len(), Vec::new());
        for at in 1..returns.len() {
            let (from, to) = (time_node(at - 1), time_node(at));
            self.edges[from as usize].push((to, EdgeKind::Rt));
        }
        for (at, txn) in history.iter().enumerate() {
            if !member[at] {
                continue;
            }
            if let Some(ret) = txn.ret {
                let node = time_node(returns.binary_search(&ret).expect("every return listed"));
                self.edges[at].push((node, EdgeKind::Rt));
            }
            // The returns strictly before the call.
            let before = returns.partition_point(|&ret| ret < txn.call);
            if before > 0 {
                self.edges[time_node(before - 1) as usize].push((at as Node, EdgeKind::Rt));
            }
        }
    }
}
