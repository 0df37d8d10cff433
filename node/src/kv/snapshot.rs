//! A [`KvStateMachine`] as bytes, for a Raft snapshot: the data, the log's clock and the client
//! sessions (without the sessions a retry applied before the snapshot would be applied again
//! after a restart), up to the last applied index.
//!
//! ```text
//! version (1: 2) | applied index (8)
//! key count (8)     | key, value (each text: length (4) | UTF-8 bytes) ...
//! the log's clock (8)
//! session count (8) | client (8) | seq (8) | last used (8) | result: 0 done, or
//!                     2 refused: part (1: 0 key, 1 value, 2 store, 3 steps) | length (8) |
//!                       limit (8), or
//!                     3 a transaction's reads: count (8) | each read as a text ...
//! ```
//!
//! Version 1 (sessions that kept a get's value, and no clock) is refused by name: its sessions
//! never expired.

use super::bytes::{put_text, Reader};
use super::limits::Part;
use super::sessions::{Kept, Session};
use super::{ClientId, KvStateMachine, Refusal, Seq};
use crate::LogIndex;

const VERSION: u8 = 2;
const DONE: u8 = 0;
const REFUSED: u8 = 2;
const READS: u8 = 3;

/// Bytes that are not a key-value snapshot, and what is wrong with them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a key-value snapshot: {0}")]
pub struct BadSnapshot(&'static str);

impl KvStateMachine {
    /// The state as a snapshot's bytes.
    pub fn snapshot(&self) -> Vec<u8> {
        let mut bytes = vec![VERSION];
        bytes.extend_from_slice(&self.applied().0.to_le_bytes());
        bytes.extend_from_slice(&(self.data().len() as u64).to_le_bytes());
        for (key, value) in self.data() {
            put_text(&mut bytes, key);
            put_text(&mut bytes, value);
        }
        bytes.extend_from_slice(&self.sessions().clock().to_le_bytes());
        bytes.extend_from_slice(&(self.sessions().len() as u64).to_le_bytes());
        for (client, session) in self.sessions().iter() {
            bytes.extend_from_slice(&client.0.to_le_bytes());
            bytes.extend_from_slice(&session.seq.0.to_le_bytes());
            bytes.extend_from_slice(&session.last_used.to_le_bytes());
            match &session.kept {
                Kept::Done => bytes.push(DONE),
                Kept::Refused(refusal) => {
                    bytes.push(REFUSED);
                    bytes.push(refusal.part.code());
                    bytes.extend_from_slice(&refusal.bytes.to_le_bytes());
                    bytes.extend_from_slice(&refusal.limit.to_le_bytes());
                }
                Kept::Reads(reads) => {
                    bytes.push(READS);
                    bytes.extend_from_slice(&(reads.len() as u64).to_le_bytes());
                    for read in reads {
                        put_text(&mut bytes, read);
                    }
                }
            }
        }
        bytes
    }

    /// The state a [`KvStateMachine::snapshot`] holds (with the default session policy: the
    /// caller sets its own); every length, tag and text is checked, and keys and clients must
    /// come in order (so a state has one snapshot, and back).
    pub fn restore(bytes: &[u8]) -> Result<KvStateMachine, BadSnapshot> {
        read(&mut Reader(bytes)).map_err(BadSnapshot)
    }
}

fn read(reader: &mut Reader<'_>) -> Result<KvStateMachine, &'static str> {
    match reader.byte()? {
        VERSION => {}
        1 => return Err("version 1, from before sessions expired: not read"),
        _ => return Err("unknown version"),
    }
    let applied = LogIndex(reader.u64()?);
    let mut machine = KvStateMachine::at(applied);
    // A key and its value take at least two lengths of 4 bytes.
    for _ in 0..reader.count(8)? {
        let key = reader.text()?;
        let value = reader.text()?;
        if machine
            .data()
            .last_key_value()
            .is_some_and(|(last, _)| *last >= key)
        {
            return Err("keys out of order");
        }
        machine.insert_restored(key, value);
    }
    let clock = reader.u64()?;
    machine.sessions_mut().restore_clock(clock);
    // A session takes at least a client, a sequence number, a time and a tag.
    for _ in 0..reader.count(25)? {
        let client = ClientId(reader.u64()?);
        let seq = Seq(reader.u64()?);
        let last_used = reader.u64()?;
        let kept = match reader.byte()? {
            DONE => Kept::Done,
            REFUSED => Kept::Refused(read_refusal(reader)?),
            READS => Kept::Reads(read_reads(reader)?),
            _ => return Err("unknown result tag"),
        };
        if machine
            .sessions()
            .last_client()
            .is_some_and(|last| last >= client)
        {
            return Err("sessions out of order");
        }
        if last_used > clock {
            return Err("a session used after the log's clock");
        }
        let session = Session {
            seq,
            kept,
            last_used,
        };
        machine.sessions_mut().insert(client, session);
    }
    if !reader.is_empty() {
        return Err("trailing bytes");
    }
    Ok(machine)
}

/// A transaction's kept reads: at most [`super::MAX_TXN_STEPS`].
fn read_reads(reader: &mut Reader<'_>) -> Result<Vec<String>, &'static str> {
    let count = reader.count(4)?;
    if count > super::MAX_TXN_STEPS {
        return Err("more kept reads than a transaction has steps");
    }
    (0..count).map(|_| reader.text()).collect()
}

fn read_refusal(reader: &mut Reader<'_>) -> Result<Refusal, &'static str> {
    let part = Part::from_code(reader.byte()?).ok_or("unknown refused part")?;
    Ok(Refusal {
        part,
        bytes: reader.u64()?,
        limit: reader.u64()?,
    })
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::kv::{KvOp, KvResult};
    use threadsim::DetRng;

    fn busy_machine() -> KvStateMachine {
        let mut machine = KvStateMachine::new();
        for index in 1..=4 {
            machine.register(LogIndex(index), index * 1000);
        }
        let ops = [
            (1, 1, KvOp::Put("a".into(), "1".into())),
            (2, 1, KvOp::Append("a".into(), "é2".into())),
            (1, 2, KvOp::Get("a".into())),
            (3, 7, KvOp::Put("".into(), "empty key".into())),
            (4, 1, KvOp::Get("k".repeat(crate::kv::MAX_KEY_BYTES + 1))),
        ];
        for (index, (client, seq, op)) in ops.into_iter().enumerate() {
            // The last one is refused: its session remembers the refusal.
            let index = index as u64 + 5;
            let _ = machine.apply(
                LogIndex(index),
                ClientId(client),
                Seq(seq),
                &op,
                index * 1000,
                true,
            );
        }
        machine.advance(LogIndex(10));
        machine
    }

    #[test]
    fn a_transactions_kept_reads_survive_a_snapshot_and_answer_its_retry() {
        let mut machine = busy_machine();
        let txn = KvOp::Txn(vec![
            crate::kv::TxnStep::Read("a".into()),
            crate::kv::TxnStep::Append("a".into(), "+".into()),
            crate::kv::TxnStep::Read("a".into()),
        ]);
        let first = machine.apply(LogIndex(11), ClientId(3), Seq(9), &txn, 11_000, true);
        let reads = KvResult::Reads(vec!["1é2".into(), "1é2+".into()]);
        assert_eq!(first, Ok(Ok(reads.clone())));
        let mut restored = KvStateMachine::restore(&machine.snapshot()).expect("restores");
        assert_eq!(restored, machine);
        assert_eq!(restored.digest(), machine.digest());
        let retry = restored.apply(LogIndex(12), ClientId(3), Seq(9), &txn, 12_000, true);
        assert_eq!(retry, Ok(Ok(reads)), "the first reads, not reads of now");
        assert_eq!(restored.get("a"), "1é2+", "applied once");
    }

    #[test]
    fn a_restored_machine_answers_and_suppresses_retries_as_the_original() {
        let original = busy_machine();
        let mut restored = KvStateMachine::restore(&original.snapshot()).expect("restores");
        assert_eq!(restored, original);
        assert_eq!(restored.digest(), original.digest());
        assert_eq!(restored.applied(), LogIndex(10));
        assert_eq!(restored.get("a"), "1é2");
        let mut apply = |index, client, seq, op: &KvOp| {
            restored
                .apply(
                    LogIndex(index),
                    ClientId(client),
                    Seq(seq),
                    op,
                    20_000,
                    true,
                )
                .expect("a live session")
        };
        let put = KvOp::Put("a".into(), "new".into());
        apply(11, 3, 8, &put).expect("within the limits");
        // Client 1's get (seq 2), retried after the restart, reads again.
        let get = KvOp::Get("a".into());
        assert_eq!(apply(12, 1, 2, &get), Ok(KvResult::Value("new".into())));
        // Client 2's append (seq 1), retried, is not applied again.
        let append = KvOp::Append("a".into(), "é2".into());
        assert_eq!(apply(13, 2, 1, &append), Ok(KvResult::Done));
        // Client 4's refused get, retried, is refused again.
        let long = KvOp::Get("k".into());
        assert_eq!(apply(14, 4, 1, &long).unwrap_err().part, Part::Key);
        assert_eq!(restored.get("a"), "new");
        let empty = KvStateMachine::new();
        assert_eq!(KvStateMachine::restore(&empty.snapshot()), Ok(empty));
        let mut old = original.snapshot();
        old[0] = 1;
        assert_eq!(
            KvStateMachine::restore(&old),
            Err(BadSnapshot(
                "version 1, from before sessions expired: not read"
            ))
        );
    }

    #[test]
    fn every_cut_and_damaged_snapshot_is_refused_or_restores_a_whole_state() {
        let bytes = busy_machine().snapshot();
        realtools::fuzz_seed("kv_snapshot", "busy-machine", &bytes);
        for len in 0..bytes.len() {
            assert!(
                KvStateMachine::restore(&bytes[..len]).is_err(),
                "cut at {len}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            KvStateMachine::restore(&longer),
            Err(BadSnapshot("trailing bytes"))
        );
        let mut forged = bytes.clone();
        forged[9..17].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            KvStateMachine::restore(&forged),
            Err(BadSnapshot("a count larger than the bytes left can hold"))
        );
        let mut rng = DetRng::new(11);
        for _ in 0..20_000 {
            let mut damaged = bytes.clone();
            let at = rng.index(damaged.len());
            damaged[at] = rng.next_u64() as u8;
            if let Ok(machine) = KvStateMachine::restore(&damaged) {
                // What a damaged byte leaves decodable is a whole state that encodes back to it.
                assert_eq!(machine.snapshot(), damaged);
            }
            let noise: Vec<u8> = (0..rng.range_inclusive(0, 64))
                .map(|_| rng.next_u64() as u8)
                .collect();
            let _ = KvStateMachine::restore(&noise);
        }
    }
}
