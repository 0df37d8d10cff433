//! A [`KvStateMachine`] as bytes, for a Raft snapshot: the data and the client sessions (without
//! the sessions a retry applied before the snapshot would be applied again after a restart), up
//! to the last applied index.
//!
//! ```text
//! version (1) | applied index (8)
//! key count (8)     | key, value (each text: length (4) | UTF-8 bytes) ...
//! session count (8) | client (8) | seq (8) | result: 0 done, 1 and the value read, or
//!                     2 refused: part (1: 0 key, 1 value, 2 store) | length (8) | limit (8) ...
//! ```

use super::bytes::{put_text, Reader};
use super::limits::Part;
use super::state_machine::Session;
use super::{ClientId, KvResult, KvStateMachine, Refusal, Seq};
use crate::LogIndex;

const VERSION: u8 = 1;
const DONE: u8 = 0;
const VALUE: u8 = 1;
const REFUSED: u8 = 2;

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
        bytes.extend_from_slice(&(self.sessions().len() as u64).to_le_bytes());
        for (client, session) in self.sessions() {
            bytes.extend_from_slice(&client.0.to_le_bytes());
            bytes.extend_from_slice(&session.seq.0.to_le_bytes());
            match &session.result {
                Ok(KvResult::Done) => bytes.push(DONE),
                Ok(KvResult::Value(value)) => {
                    bytes.push(VALUE);
                    put_text(&mut bytes, value);
                }
                Err(refusal) => {
                    bytes.push(REFUSED);
                    bytes.push(refusal.part.code());
                    bytes.extend_from_slice(&refusal.bytes.to_le_bytes());
                    bytes.extend_from_slice(&refusal.limit.to_le_bytes());
                }
            }
        }
        bytes
    }

    /// The state a [`KvStateMachine::snapshot`] holds; every length, tag and text is checked,
    /// and keys and clients must come in order (so a state has one snapshot, and back).
    pub fn restore(bytes: &[u8]) -> Result<KvStateMachine, BadSnapshot> {
        read(&mut Reader(bytes)).map_err(BadSnapshot)
    }
}

fn read(reader: &mut Reader<'_>) -> Result<KvStateMachine, &'static str> {
    if reader.byte()? != VERSION {
        return Err("unknown version");
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
    // A session takes at least a client, a sequence number and a tag.
    for _ in 0..reader.count(17)? {
        let client = ClientId(reader.u64()?);
        let seq = Seq(reader.u64()?);
        let result = match reader.byte()? {
            DONE => Ok(KvResult::Done),
            VALUE => Ok(KvResult::Value(reader.text()?)),
            REFUSED => Err(read_refusal(reader)?),
            _ => return Err("unknown result tag"),
        };
        if machine
            .sessions()
            .last_key_value()
            .is_some_and(|(last, _)| *last >= client)
        {
            return Err("sessions out of order");
        }
        machine
            .sessions_mut()
            .insert(client, Session { seq, result });
    }
    if !reader.is_empty() {
        return Err("trailing bytes");
    }
    Ok(machine)
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
    use crate::kv::KvOp;
    use threadsim::DetRng;

    fn busy_machine() -> KvStateMachine {
        let mut machine = KvStateMachine::new();
        let ops = [
            (1, 1, KvOp::Put("a".into(), "1".into())),
            (2, 1, KvOp::Append("a".into(), "é2".into())),
            (1, 2, KvOp::Get("a".into())),
            (3, 7, KvOp::Put("".into(), "empty key".into())),
            (4, 1, KvOp::Get("k".repeat(crate::kv::MAX_KEY_BYTES + 1))),
        ];
        for (index, (client, seq, op)) in ops.into_iter().enumerate() {
            // The last one is refused: its session remembers the refusal.
            let _ = machine.apply(
                LogIndex(index as u64 + 1),
                ClientId(client),
                Seq(seq),
                &op,
                true,
            );
        }
        machine.advance(LogIndex(6));
        machine
    }

    #[test]
    fn a_restored_machine_answers_and_suppresses_retries_as_the_original() {
        let original = busy_machine();
        let mut restored = KvStateMachine::restore(&original.snapshot()).expect("restores");
        assert_eq!(restored, original);
        assert_eq!(restored.applied(), LogIndex(6));
        assert_eq!(restored.get("a"), "1é2");
        let put = KvOp::Put("a".into(), "new".into());
        restored
            .apply(LogIndex(7), ClientId(3), Seq(8), &put, true)
            .expect("within the limits");
        // Client 1's get (seq 2), retried after the restart, gets the first answer.
        let get = KvOp::Get("a".into());
        let retried = restored.apply(LogIndex(8), ClientId(1), Seq(2), &get, true);
        assert_eq!(retried, Ok(KvResult::Value("1é2".into())));
        // Client 2's append (seq 1), retried, is not applied again.
        let append = KvOp::Append("a".into(), "é2".into());
        let retried = restored.apply(LogIndex(9), ClientId(2), Seq(1), &append, true);
        assert_eq!(retried, Ok(KvResult::Done));
        // Client 4's refused get, retried, is refused again.
        let long = KvOp::Get("k".into());
        let retried = restored.apply(LogIndex(10), ClientId(4), Seq(1), &long, true);
        assert_eq!(retried.unwrap_err().part, Part::Key);
        assert_eq!(restored.get("a"), "new");
        let empty = KvStateMachine::new();
        assert_eq!(KvStateMachine::restore(&empty.snapshot()), Ok(empty));
    }

    #[test]
    fn every_cut_and_damaged_snapshot_is_refused_or_restores_a_whole_state() {
        let bytes = busy_machine().snapshot();
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
