//! [`KvCommand`]: what the key-value service puts in the Raft log, and its byte encoding.

use super::bytes::{put_text, Reader};
use super::{ClientId, KvOp, Seq, TxnStep};
use crate::Command;

/// One log entry of the key-value service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KvCommand {
    /// Does nothing. A new leader proposes one so an entry of its term commits (ReadIndex needs
    /// that before it can serve reads).
    Noop,
    /// A client's registration: its id will be this entry's index.
    Register {
        /// When its leader proposed it: nanoseconds of that leader's clock (the log's clock,
        /// which expires sessions, is the largest of these applied).
        proposed: u64,
    },
    /// A client's operation, tagged for duplicate suppression.
    Op {
        /// Who sent it.
        client: ClientId,
        /// The client's sequence number for it.
        seq: Seq,
        /// When its leader proposed it (as for `Register`).
        proposed: u64,
        /// What to do.
        op: KvOp,
    },
}

/// Bytes that are not a [`KvCommand`] (a log written by something else, or a bug).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a key-value command: {0}")]
pub struct NotAKvCommand(&'static str);

const NOOP: u8 = 0;
/// Tag 1 was an operation without a proposal time, from before sessions expired.
const OP: u8 = 2;
const REGISTER: u8 = 3;
const GET: u8 = 0;
const PUT: u8 = 1;
const APPEND: u8 = 2;
/// A transaction: a count of steps (8), then each step's tag (a get's or an append's), key and
/// value (empty for a read).
const TXN: u8 = 3;

impl KvCommand {
    /// The command's bytes for the log.
    pub fn encode(&self) -> Command {
        let mut bytes = Vec::new();
        match self {
            KvCommand::Noop => bytes.push(NOOP),
            KvCommand::Register { proposed } => {
                bytes.push(REGISTER);
                bytes.extend_from_slice(&proposed.to_le_bytes());
            }
            KvCommand::Op {
                client,
                seq,
                proposed,
                op,
            } => {
                bytes.push(OP);
                bytes.extend_from_slice(&client.0.to_le_bytes());
                bytes.extend_from_slice(&seq.0.to_le_bytes());
                bytes.extend_from_slice(&proposed.to_le_bytes());
                match op {
                    KvOp::Get(key) => put_step(&mut bytes, GET, key, ""),
                    KvOp::Put(key, value) => put_step(&mut bytes, PUT, key, value),
                    KvOp::Append(key, value) => put_step(&mut bytes, APPEND, key, value),
                    KvOp::Txn(steps) => {
                        bytes.push(TXN);
                        bytes.extend_from_slice(&(steps.len() as u64).to_le_bytes());
                        for step in steps {
                            match step {
                                TxnStep::Read(key) => put_step(&mut bytes, GET, key, ""),
                                TxnStep::Append(key, value) => {
                                    put_step(&mut bytes, APPEND, key, value)
                                }
                            }
                        }
                    }
                }
            }
        }
        Command(bytes)
    }

    /// Reads a command back from its bytes.
    pub fn decode(command: &Command) -> Result<KvCommand, NotAKvCommand> {
        KvCommand::read(&mut Reader(&command.0)).map_err(NotAKvCommand)
    }

    fn read(reader: &mut Reader<'_>) -> Result<KvCommand, &'static str> {
        let command = match reader.byte()? {
            NOOP => KvCommand::Noop,
            REGISTER => KvCommand::Register {
                proposed: reader.u64()?,
            },
            OP => {
                let client = ClientId(reader.u64()?);
                let seq = Seq(reader.u64()?);
                let proposed = reader.u64()?;
                let op = match reader.byte()? {
                    TXN => KvOp::Txn(read_steps(reader)?),
                    tag => {
                        let key = reader.text()?;
                        let value = reader.text()?;
                        match tag {
                            GET if value.is_empty() => KvOp::Get(key),
                            PUT => KvOp::Put(key, value),
                            APPEND => KvOp::Append(key, value),
                            _ => return Err("unknown operation"),
                        }
                    }
                };
                KvCommand::Op {
                    client,
                    seq,
                    proposed,
                    op,
                }
            }
            1 => return Err("an operation from before sessions expired (tag 1)"),
            _ => return Err("unknown command tag"),
        };
        if !reader.is_empty() {
            return Err("trailing bytes");
        }
        Ok(command)
    }
}

/// One operation, or one step of a transaction: its tag, key and value.
fn put_step(bytes: &mut Vec<u8>, tag: u8, key: &str, value: &str) {
    bytes.push(tag);
    put_text(bytes, key);
    put_text(bytes, value);
}

/// A transaction's steps: a count within [`super::MAX_TXN_STEPS`], then each step.
fn read_steps(reader: &mut Reader<'_>) -> Result<Vec<TxnStep>, &'static str> {
    // A step takes at least a tag and two lengths.
    let count = reader.count(9)?;
    if count > super::MAX_TXN_STEPS {
        return Err("a transaction of more steps than the limit");
    }
    (0..count)
        .map(|_| {
            let tag = reader.byte()?;
            let key = reader.text()?;
            let value = reader.text()?;
            match tag {
                GET if value.is_empty() => Ok(TxnStep::Read(key)),
                APPEND => Ok(TxnStep::Append(key, value)),
                _ => Err("unknown transaction step"),
            }
        })
        .collect()
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_get_that_carries_a_value_is_refused() {
        let put = KvCommand::Op {
            client: ClientId(1),
            seq: Seq(2),
            proposed: 3,
            op: KvOp::Put("k".into(), "v".into()),
        }
        .encode();
        let mut bytes = put.0.clone();
        // The operation's tag follows the command tag, the client, the sequence number and the
        // proposal time.
        assert_eq!(bytes[1 + 8 + 8 + 8], PUT);
        bytes[1 + 8 + 8 + 8] = GET;
        assert_eq!(
            KvCommand::decode(&Command(bytes)),
            Err(NotAKvCommand("unknown operation"))
        );
    }

    #[test]
    fn commands_round_trip_and_garbage_is_refused() {
        let commands = [
            KvCommand::Noop,
            KvCommand::Register { proposed: 0 },
            KvCommand::Register { proposed: u64::MAX },
            KvCommand::Op {
                client: ClientId(7),
                seq: Seq(3),
                proposed: 12,
                op: KvOp::Get("k".into()),
            },
            KvCommand::Op {
                client: ClientId(1),
                seq: Seq(u64::MAX),
                proposed: 0,
                op: KvOp::Put("key".into(), "välue".into()),
            },
            KvCommand::Op {
                client: ClientId(0),
                seq: Seq(1),
                proposed: 1 << 40,
                op: KvOp::Append(String::new(), "x".into()),
            },
            KvCommand::Op {
                client: ClientId(2),
                seq: Seq(9),
                proposed: 5,
                op: KvOp::Txn(vec![
                    TxnStep::Read("a".into()),
                    TxnStep::Append("b".into(), "1 ".into()),
                    TxnStep::Read("b".into()),
                ]),
            },
            KvCommand::Op {
                client: ClientId(2),
                seq: Seq(10),
                proposed: 6,
                op: KvOp::Txn(Vec::new()),
            },
        ];
        for command in commands {
            assert_eq!(KvCommand::decode(&command.encode()), Ok(command.clone()));
            let bytes = command.encode().0;
            for cut in 0..bytes.len() {
                assert!(KvCommand::decode(&Command(bytes[..cut].to_vec())).is_err());
            }
        }
        assert!(KvCommand::decode(&Command::from_text("hello")).is_err());
        assert_eq!(
            KvCommand::decode(&Command(vec![1; 30])),
            Err(NotAKvCommand(
                "an operation from before sessions expired (tag 1)"
            ))
        );
    }
}
