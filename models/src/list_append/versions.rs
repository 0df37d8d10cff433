//! Each key's version order, read off the lists the transactions saw, and the anomalies that
//! need no cycle: reads no single order explains, reads of aborted, intermediate or unknown
//! values, and transactions that do not see their own appends.

use super::{Anomaly, MicroOp, Txn, TxnId, TxnOutcome};
use crate::checker::fold_hasher::LookupTable;
use std::collections::{BTreeMap, BTreeSet};

/// Who appended a value to a key.
#[derive(Clone, Copy, Debug)]
pub(super) struct Writer {
    pub txn: TxnId,
    /// No later append of the same transaction to the same key.
    pub last_of_txn: bool,
    pub outcome: TxnOutcome,
}

/// What the reads say about each key.
#[derive(Debug, Default)]
pub(super) struct Versions {
    /// Each key's version order: its longest list read (every other read is a prefix of it).
    pub order: BTreeMap<u64, Vec<u64>>,
    /// The writer of each appended value, by key and value (looked up, never iterated).
    pub writers: LookupTable<(u64, u64), Writer>,
    /// The anomalies found on the way.
    pub anomalies: Vec<Anomaly>,
}

impl Versions {
    /// The writer of `value` in `key`, if any transaction appended it.
    pub fn writer(&self, key: u64, value: u64) -> Option<Writer> {
        self.writers.get(&(key, value)).copied()
    }
}

/// The reads of committed transactions: each read's key, list and reader.
pub(super) fn committed_reads(history: &[Txn]) -> impl Iterator<Item = (TxnId, u64, &[u64])> {
    history
        .iter()
        .enumerate()
        .filter(|(_, txn)| txn.outcome == TxnOutcome::Committed)
        .flat_map(|(at, txn)| {
            txn.ops.iter().filter_map(move |op| match op {
                MicroOp::Read {
                    key,
                    list: Some(list),
                } => Some((TxnId(at), *key, list.as_slice())),
                _ => None,
            })
        })
}

/// Infers the version orders of `history`'s keys.
pub(super) fn infer(history: &[Txn]) -> Versions {
    let mut versions = Versions::default();
    record_writers(history, &mut versions);
    let mut longest: BTreeMap<u64, (TxnId, &[u64])> = BTreeMap::new();
    for (reader, key, list) in committed_reads(history) {
        let entry = longest.entry(key).or_insert((reader, list));
        if list.len() > entry.1.len() {
            *entry = (reader, list);
        }
    }
    for (reader, key, list) in committed_reads(history) {
        let (other, order) = longest[&key];
        if !order.starts_with(list) {
            versions.anomalies.push(Anomaly::IncompatibleOrder {
                key,
                first: other.min(reader),
                second: other.max(reader),
            });
        }
        check_values_read(
            &versions.writers,
            reader,
            key,
            list,
            &mut versions.anomalies,
        );
    }
    versions.anomalies.dedup();
    check_internal(history, &mut versions.anomalies);
    for (key, (reader, order)) in longest {
        let mut seen = BTreeSet::new();
        if let Some(&value) = order.iter().find(|&&value| !seen.insert(value)) {
            versions
                .anomalies
                .push(Anomaly::DuplicateElements { reader, key, value });
        }
        versions.order.insert(key, order.to_vec());
    }
    versions
}

/// Notes who appended each value, and reports a value appended twice to one key.
fn record_writers(history: &[Txn], versions: &mut Versions) {
    for (at, txn) in history.iter().enumerate() {
        for (position, op) in txn.ops.iter().enumerate() {
            let MicroOp::Append { key, value } = *op else {
                continue;
            };
            let last_of_txn = !txn.ops[position + 1..]
                .iter()
                .any(|later| matches!(later, MicroOp::Append { key: k, .. } if *k == key));
            let writer = Writer {
                txn: TxnId(at),
                last_of_txn,
                outcome: txn.outcome,
            };
            if let Some(first) = versions.writers.insert((key, value), writer) {
                versions.anomalies.push(Anomaly::DuplicateAppend {
                    key,
                    value,
                    first: first.txn,
                    second: TxnId(at),
                });
            }
        }
    }
}

/// A read's values: each appended by someone, none by an aborted transaction, and the last not
/// an append its transaction followed with another to the same key.
fn check_values_read(
    writers: &LookupTable<(u64, u64), Writer>,
    reader: TxnId,
    key: u64,
    list: &[u64],
    anomalies: &mut Vec<Anomaly>,
) {
    for &value in list {
        match writers.get(&(key, value)) {
            None => anomalies.push(Anomaly::GarbageRead { reader, key, value }),
            Some(writer) if writer.outcome == TxnOutcome::Aborted => {
                anomalies.push(Anomaly::AbortedRead {
                    reader,
                    key,
                    value,
                    writer: writer.txn,
                })
            }
            Some(_) => {}
        }
    }
    if let Some(&last) = list.last() {
        if let Some(writer) = writers.get(&(key, last)) {
            if writer.txn != reader && !writer.last_of_txn {
                anomalies.push(Anomaly::IntermediateRead {
                    reader,
                    key,
                    value: last,
                    writer: writer.txn,
                });
            }
        }
    }
}

/// Each committed transaction's reads end with its own earlier appends to the key, in order.
fn check_internal(history: &[Txn], anomalies: &mut Vec<Anomaly>) {
    for (at, txn) in history.iter().enumerate() {
        if txn.outcome != TxnOutcome::Committed {
            continue;
        }
        let mut own: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for op in &txn.ops {
            match op {
                MicroOp::Append { key, value } => own.entry(*key).or_default().push(*value),
                MicroOp::Read {
                    key,
                    list: Some(list),
                } => {
                    if let Some(appended) = own.get(key) {
                        if !list.ends_with(appended) {
                            anomalies.push(Anomaly::Internal {
                                txn: TxnId(at),
                                key: *key,
                            });
                        }
                    }
                }
                MicroOp::Read { list: None, .. } => {}
            }
        }
    }
}
