//! The list-append transaction client (Elle's list-append workload, run through the key-value
//! service's transactions): each transaction reads and appends to a few keys at once, every
//! appended value unique, and a read returns the key's whole list. The history is checked for
//! strict serializability by [`models::check_list_append`].
//!
//! A key's list is its value in the store: the appended numbers, each followed by a space. The
//! keys in use slide by one every [`KEY_LIFETIME`], so lists stay short and reads cheap while
//! the run goes on (Elle rotates keys for the same reason).

use models::{MicroOp, Txn, TxnOutcome};
use node::kv::{Clerk, ClerkError, TxnStep};
use std::time::Duration;
use threadsim::sync::{Arc, Mutex};
use threadsim::{ClockRef, DetRng, Instant};

/// How long a key is in use after it first is: the window of keys moves on by one this often.
pub const KEY_LIFETIME: Duration = Duration::from_secs(1);
/// The most steps a generated transaction has.
pub const MAX_STEPS: usize = 4;
/// The most clients: a value is its client's index plus 1,000 times the client's count.
pub const MAX_CLIENTS: usize = 1000;

/// One client thread: transactions back to back until `end`.
pub(crate) struct TxnClient {
    /// Which client (below [`MAX_CLIENTS`]).
    pub(crate) index: usize,
    /// Its own stream of draws.
    pub(crate) rng: DetRng,
    /// Keys in use at once.
    pub(crate) keys: usize,
    /// A transaction's outcome is unknown after this long.
    pub(crate) op_deadline: Duration,
    /// The simulation's clock.
    pub(crate) clock: ClockRef,
    /// When the run started: times in the history are nanoseconds since.
    pub(crate) started: Instant,
    /// The history every client appends its transactions to, as they end.
    pub(crate) history: Arc<Mutex<Vec<Txn>>>,
}

impl TxnClient {
    pub(crate) fn run(mut self, clerk: &mut Clerk, end: Instant) {
        assert!(self.index < MAX_CLIENTS, "a value names its client");
        assert!(self.keys > 0, "transactions need keys");
        let mut count = 0u64;
        while self.clock.now() < end {
            let call = self.now();
            let first_key = call / KEY_LIFETIME.as_nanos() as u64;
            let mut ops = Vec::new();
            for _ in 0..1 + self.rng.index(MAX_STEPS) {
                let key = first_key + self.rng.index(self.keys) as u64;
                if self.rng.index(2) == 0 {
                    ops.push(MicroOp::Read { key, list: None });
                } else {
                    count += 1;
                    let value = count * MAX_CLIENTS as u64 + self.index as u64;
                    ops.push(MicroOp::Append { key, value });
                }
            }
            let steps = ops.iter().map(step).collect();
            let deadline = self.clock.now() + self.op_deadline;
            let outcome = match clerk.transact(steps, Some(deadline)) {
                Ok(reads) => {
                    fill_reads(&mut ops, reads);
                    TxnOutcome::Committed
                }
                // A refusal changed nothing.
                Err(ClerkError::Refused(_)) => TxnOutcome::Aborted,
                Err(ClerkError::GaveUp(_) | ClerkError::SessionExpired(_)) => TxnOutcome::Unknown,
            };
            let ret = (outcome != TxnOutcome::Unknown).then(|| self.now());
            self.history.lock().push(Txn {
                client: self.index as u64,
                call,
                ret,
                outcome,
                ops,
            });
        }
    }

    /// Nanoseconds since the run started.
    fn now(&self) -> u64 {
        u64::try_from((self.clock.now() - self.started).as_nanos()).unwrap_or(u64::MAX)
    }
}

/// What a list-append history shows: `None` when strictly serializable, else its anomalies,
/// the first one's transactions in words (numbered as in the written history).
pub fn failure(history: &[Txn]) -> Option<String> {
    failure_of(history, &models::check_list_append(history))
}

/// [`failure`] from the history's `report`.
pub fn failure_of(history: &[Txn], report: &models::TxnReport) -> Option<String> {
    use models::list_append::describe::{describe, verdict};
    let first = report.anomalies.first()?;
    let mut names: Vec<String> = report.anomalies.iter().map(|a| a.name()).collect();
    names.sort();
    names.dedup();
    Some(format!(
        "transactions {}: {} anomalies ({}) in {} transactions; first, {}: {}",
        verdict(report),
        report.anomalies.len(),
        names.join(", "),
        history.len(),
        first.name(),
        describe(history, first)
    ))
}

/// The store's name of `key`.
fn key_name(key: u64) -> String {
    format!("list{key}")
}

/// The service's step for one operation of the history.
fn step(op: &MicroOp) -> TxnStep {
    match op {
        MicroOp::Read { key, .. } => TxnStep::Read(key_name(*key)),
        MicroOp::Append { key, value } => TxnStep::Append(key_name(*key), format!("{value} ")),
    }
}

/// Puts the values a committed transaction read into its reads, in order.
fn fill_reads(ops: &mut [MicroOp], reads: Vec<String>) {
    let mut reads = reads.into_iter();
    for op in ops.iter_mut() {
        if let MicroOp::Read { list, .. } = op {
            let read = reads.next().expect("a read's value for every read");
            *list = Some(parse_list(&read));
        }
    }
    assert!(reads.next().is_none(), "a value for every read, no more");
}

/// A list as the store holds it. A word that is not a number (a bug would have to write it)
/// reads as a value nobody appended, which the checker reports as a garbage read.
fn parse_list(value: &str) -> Vec<u64> {
    value
        .split_whitespace()
        .map(|word| word.parse().unwrap_or(u64::MAX))
        .collect()
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_list_reads_back_from_the_appended_words_and_garbage_is_a_value_nobody_appended() {
        let appended: String = [3001u64, 5002]
            .iter()
            .map(|value| {
                match step(&MicroOp::Append {
                    key: 7,
                    value: *value,
                }) {
                    TxnStep::Append(key, text) => {
                        assert_eq!(key, "list7");
                        text
                    }
                    TxnStep::Read(_) => unreachable!(),
                }
            })
            .collect();
        assert_eq!(parse_list(&appended), [3001, 5002]);
        assert_eq!(parse_list(""), Vec::<u64>::new());
        assert_eq!(parse_list("12 x "), [12, u64::MAX]);
        let mut ops = vec![
            MicroOp::Read { key: 1, list: None },
            MicroOp::Append { key: 1, value: 4 },
            MicroOp::Read { key: 1, list: None },
        ];
        fill_reads(&mut ops, vec!["".into(), "4 ".into()]);
        assert_eq!(
            ops[2],
            MicroOp::Read {
                key: 1,
                list: Some(vec![4])
            }
        );
    }
}
