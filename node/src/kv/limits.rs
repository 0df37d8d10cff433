//! The largest key and value the store takes, and [`Refusal`], what a client is told past them.
//!
//! The limits sit below what every path can carry: a put of the largest key and value is a
//! command under [`crate::persist::MAX_COMMAND_BYTES`] (so it can be stored and replicated), and a
//! get's reply holds one value. An append that would grow a value past the limit is refused when
//! it is applied, the same way on every replica, and changes nothing.

use super::{KvOp, TxnStep};

/// The longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 1 << 10;
/// The longest value, in bytes: what a put carries, and what an append may grow a value to.
pub const MAX_VALUE_BYTES: usize = 256 << 10;
/// The most bytes of keys and values the store holds: a write that would pass it is refused,
/// so a snapshot of the data stays far below the stored limit.
pub const MAX_STORE_BYTES: usize = 64 << 20;
const _: () = assert!(
    2 * MAX_STORE_BYTES <= crate::persist::MAX_SNAPSHOT_BYTES,
    "a snapshot of a full store fits the stored limit with room for its sessions"
);
const _: () = assert!(
    MAX_STORE_BYTES + super::MAX_SESSIONS * super::sessions::SESSION_BYTES + (1 << 20)
        <= crate::persist::MAX_SNAPSHOT_BYTES,
    "a snapshot of a full store with the most sessions fits the stored limit"
);

/// The most steps a transaction takes: its command (every key at its limit, and appends
/// of [`MAX_VALUE_BYTES`] in all) stays under [`crate::persist::MAX_COMMAND_BYTES`].
pub const MAX_TXN_STEPS: usize = 32;
const _: () = assert!(
    COMMAND_OVERHEAD + MAX_TXN_STEPS * (1 + 4 + 4 + MAX_KEY_BYTES) + MAX_VALUE_BYTES
        <= crate::persist::MAX_COMMAND_BYTES,
    "the largest transaction must fit in one command"
);

/// A command's bytes besides the key and value: tags, client, sequence number, proposal time,
/// two lengths.
const COMMAND_OVERHEAD: usize = 1 + 8 + 8 + 8 + 1 + 4 + 4;
const _: () = assert!(
    COMMAND_OVERHEAD + MAX_KEY_BYTES + MAX_VALUE_BYTES <= crate::persist::MAX_COMMAND_BYTES,
    "the largest put must fit in one command"
);

/// Which part of an operation is too long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The key.
    Key,
    /// The value (a put's or append's, or the value an append would make).
    Value,
    /// The whole store: the keys and values it would hold after the write, and the reads of
    /// transactions its sessions keep for retries.
    Store,
    /// A transaction's count of steps.
    Steps,
}

impl Part {
    /// The part as one byte, for a message or a snapshot.
    pub fn code(self) -> u8 {
        match self {
            Part::Key => 0,
            Part::Value => 1,
            Part::Store => 2,
            Part::Steps => 3,
        }
    }

    /// The part [`Part::code`] gave `code`, if any.
    pub fn from_code(code: u8) -> Option<Part> {
        [Part::Key, Part::Value, Part::Store, Part::Steps]
            .into_iter()
            .find(|part| part.code() == code)
    }
}

/// An operation the store refuses, with nothing changed: its key or value is over the limit, or
/// the store would hold more than [`MAX_STORE_BYTES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "refused: {} of {bytes} {unit} is over the limit of {limit} {unit}",
    match part {
        Part::Key => "a key",
        Part::Value => "a value",
        Part::Store => "a store",
        Part::Steps => "a transaction",
    },
    unit = if *part == Part::Steps { "steps" } else { "bytes" }
)]
pub struct Refusal {
    /// What is too long.
    pub part: Part,
    /// Its length.
    pub bytes: u64,
    /// The limit it passes.
    pub limit: u64,
}

impl Refusal {
    fn check(part: Part, bytes: usize, limit: usize) -> Result<(), Refusal> {
        if bytes <= limit {
            return Ok(());
        }
        Err(Refusal {
            part,
            bytes: bytes as u64,
            limit: limit as u64,
        })
    }

    /// A value of `bytes` bytes (an append's result, say) refused if over [`MAX_VALUE_BYTES`].
    pub fn check_value(bytes: usize) -> Result<(), Refusal> {
        Refusal::check(Part::Value, bytes, MAX_VALUE_BYTES)
    }

    /// A store of `bytes` bytes of keys, values and kept reads refused if over
    /// [`MAX_STORE_BYTES`].
    pub fn check_store(bytes: usize) -> Result<(), Refusal> {
        Refusal::check(Part::Store, bytes, MAX_STORE_BYTES)
    }
}

impl KvOp {
    /// Refuses an operation whose key or value is over its limit, or a transaction with more
    /// than [`MAX_TXN_STEPS`] steps or appends of more than [`MAX_VALUE_BYTES`] in all (checked
    /// by the clerk before it sends, by the server before it proposes, and by the state
    /// machine as it applies).
    pub fn check_size(&self) -> Result<(), Refusal> {
        let check_key = |key: &str| Refusal::check(Part::Key, key.len(), MAX_KEY_BYTES);
        match self {
            KvOp::Get(key) => check_key(key),
            KvOp::Put(key, value) | KvOp::Append(key, value) => {
                check_key(key)?;
                Refusal::check_value(value.len())
            }
            KvOp::Txn(steps) => {
                Refusal::check(Part::Steps, steps.len(), MAX_TXN_STEPS)?;
                let mut appended = 0;
                for step in steps {
                    check_key(step.key())?;
                    if let TxnStep::Append(_, value) = step {
                        appended += value.len();
                    }
                }
                Refusal::check_value(appended)
            }
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::kv::{ClientId, KvCommand, Seq};

    #[test]
    fn operations_at_the_limits_pass_and_one_byte_more_is_refused_with_what_and_how_much() {
        let key = "k".repeat(MAX_KEY_BYTES);
        let value = "v".repeat(MAX_VALUE_BYTES);
        assert_eq!(KvOp::Put(key.clone(), value.clone()).check_size(), Ok(()));
        let refusal = KvOp::Get(format!("{key}k")).check_size().unwrap_err();
        assert_eq!(refusal.part, Part::Key);
        assert_eq!(refusal.bytes, MAX_KEY_BYTES as u64 + 1);
        let refusal = KvOp::Append("k".into(), format!("{value}v"))
            .check_size()
            .unwrap_err();
        assert_eq!(
            refusal.to_string(),
            format!(
                "refused: a value of {} bytes is over the limit of {MAX_VALUE_BYTES} bytes",
                MAX_VALUE_BYTES + 1
            )
        );
    }

    #[test]
    fn the_largest_put_is_a_command_the_node_stores() {
        let command = KvCommand::Op {
            client: ClientId(u64::MAX),
            seq: Seq(u64::MAX),
            proposed: u64::MAX,
            op: KvOp::Put("k".repeat(MAX_KEY_BYTES), "v".repeat(MAX_VALUE_BYTES)),
        }
        .encode();
        assert_eq!(
            command.0.len(),
            COMMAND_OVERHEAD + MAX_KEY_BYTES + MAX_VALUE_BYTES
        );
        assert!(command.0.len() <= crate::persist::MAX_COMMAND_BYTES);
    }
}
