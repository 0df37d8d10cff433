//! [`KvStateMachine`]: the key-value map and the per-client sessions that make retries
//! exactly-once.

use super::{ClientId, KvOp, KvResult, Refusal, Seq};
use crate::LogIndex;
use std::collections::BTreeMap;

/// What applying one operation came to: its result, or a refusal that changed nothing.
pub type Outcome = Result<KvResult, Refusal>;

/// The last operation applied for one client, and its outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Session {
    pub(super) seq: Seq,
    pub(super) result: Outcome,
}

/// The replicated state: a map from keys to values, plus the sessions. Applied strictly in log
/// order; rebuilt from the log after a restart, or restored from a snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KvStateMachine {
    data: BTreeMap<String, String>,
    /// The bytes of every key and value in `data` (what [`super::MAX_STORE_BYTES`] bounds).
    stored_bytes: usize,
    sessions: BTreeMap<ClientId, Session>,
    applied: LogIndex,
}

impl KvStateMachine {
    /// An empty store.
    pub fn new() -> KvStateMachine {
        KvStateMachine::default()
    }

    /// An empty store that has applied every entry up to `applied` (a snapshot's start).
    pub(super) fn at(applied: LogIndex) -> KvStateMachine {
        KvStateMachine {
            applied,
            ..KvStateMachine::default()
        }
    }

    /// The last log index applied.
    pub fn applied(&self) -> LogIndex {
        self.applied
    }

    pub(super) fn data(&self) -> &BTreeMap<String, String> {
        &self.data
    }

    /// Puts back a key a snapshot holds.
    pub(super) fn insert_restored(&mut self, key: String, value: String) {
        self.stored_bytes += key.len() + value.len();
        self.data.insert(key, value);
    }

    pub(super) fn sessions(&self) -> &BTreeMap<ClientId, Session> {
        &self.sessions
    }

    pub(super) fn sessions_mut(&mut self) -> &mut BTreeMap<ClientId, Session> {
        &mut self.sessions
    }

    /// A fingerprint of the whole state (applied index, data and sessions), independent of how
    /// a snapshot encodes it: two machines with equal digests hold, up to hash collisions, the
    /// same state. Costs a pass over the state (the harness takes it at snapshots only).
    pub fn digest(&self) -> u64 {
        let mut digest = threadsim::Digest::default();
        digest.write_u64(self.applied.0);
        digest.write_u64(self.data.len() as u64);
        for (key, value) in &self.data {
            digest.write_str(key);
            digest.write_str(value);
        }
        digest.write_u64(self.sessions.len() as u64);
        for (client, session) in &self.sessions {
            digest.write_u64(client.0);
            digest.write_u64(session.seq.0);
            match &session.result {
                Ok(KvResult::Done) => digest.write(&[0]),
                Ok(KvResult::Value(value)) => {
                    digest.write(&[1]);
                    digest.write_str(value);
                }
                Err(refusal) => {
                    digest.write(&[2]);
                    digest.write_u64(refusal.bytes);
                }
            }
        }
        digest.value()
    }

    /// This state with every client session forgotten (the `snapshot-without-sessions`
    /// variant's snapshot).
    pub(crate) fn without_sessions(&self) -> KvStateMachine {
        KvStateMachine {
            sessions: BTreeMap::new(),
            ..self.clone()
        }
    }

    /// The value of `key` (empty if never written).
    pub fn get(&self, key: &str) -> String {
        self.data.get(key).cloned().unwrap_or_default()
    }

    /// Records that the entry at `index` was applied (a no-op or an operation).
    pub fn advance(&mut self, index: LogIndex) {
        assert_eq!(
            index,
            self.applied.next(),
            "entries applied out of order: {index} after {}",
            self.applied
        );
        self.applied = index;
    }

    /// Applies `op` from `client` with sequence number `seq` at `index`. A sequence number the
    /// client's session already covers is a retry: it is not applied again and gets the first
    /// attempt's result (unless `suppress_duplicates` is off, the deliberately broken variant).
    /// An operation over the size limits, or an append that would grow a value past
    /// [`super::MAX_VALUE_BYTES`], is refused and changes nothing (its session remembers the
    /// refusal, so a retry gets it too).
    pub fn apply(
        &mut self,
        index: LogIndex,
        client: ClientId,
        seq: Seq,
        op: &KvOp,
        suppress_duplicates: bool,
    ) -> Outcome {
        self.advance(index);
        if let Some(session) = self.sessions.get(&client) {
            if suppress_duplicates && seq <= session.seq {
                // An older sequence number than the last is a retry nobody waits for any more.
                return session.result.clone();
            }
        }
        let result = op.check_size().and_then(|()| self.apply_sized(op));
        let session = Session {
            seq,
            result: result.clone(),
        };
        self.sessions.insert(client, session);
        result
    }

    /// Applies an operation whose key and value are within the limits.
    fn apply_sized(&mut self, op: &KvOp) -> Outcome {
        Ok(match op {
            KvOp::Get(key) => KvResult::Value(self.get(key)),
            KvOp::Put(key, value) => {
                let old = self.data.get(key).map_or(0, |old| key.len() + old.len());
                let stored = self.stored_bytes - old + key.len() + value.len();
                Refusal::check_store(stored)?;
                self.data.insert(key.clone(), value.clone());
                self.stored_bytes = stored;
                KvResult::Done
            }
            KvOp::Append(key, value) => {
                let old = self.data.get(key).map(String::len);
                Refusal::check_value(old.unwrap_or(0) + value.len())?;
                let added = value.len() + if old.is_some() { 0 } else { key.len() };
                Refusal::check_store(self.stored_bytes + added)?;
                self.data.entry(key.clone()).or_default().push_str(value);
                self.stored_bytes += added;
                KvResult::Done
            }
        })
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn append(value: &str) -> KvOp {
        KvOp::Append("k".into(), value.into())
    }

    #[test]
    fn a_retried_append_is_applied_once_and_answered_with_the_first_result() {
        let mut machine = KvStateMachine::new();
        let (a, b) = (ClientId(1), ClientId(2));
        machine
            .apply(LogIndex(1), a, Seq(1), &append("x"), true)
            .expect("within the limits");
        machine
            .apply(LogIndex(2), b, Seq(1), &append("y"), true)
            .expect("within the limits");
        machine
            .apply(LogIndex(3), a, Seq(1), &append("x"), true)
            .expect("within the limits");
        assert_eq!(machine.get("k"), "xy");
        let get = KvOp::Get("k".into());
        assert_eq!(
            machine.apply(LogIndex(4), a, Seq(2), &get, true),
            Ok(KvResult::Value("xy".into()))
        );
        machine
            .apply(LogIndex(5), b, Seq(2), &append("z"), true)
            .expect("within the limits");
        // The retry of a's get answers what the first attempt saw.
        assert_eq!(
            machine.apply(LogIndex(6), a, Seq(2), &get, true),
            Ok(KvResult::Value("xy".into()))
        );
        assert_eq!(machine.applied(), LogIndex(6));
    }

    #[test]
    fn an_append_past_the_value_limit_changes_nothing_and_its_retry_is_refused_again() {
        let mut machine = KvStateMachine::new();
        let (a, b) = (ClientId(1), ClientId(2));
        let half = "x".repeat(super::super::MAX_VALUE_BYTES / 2);
        assert_eq!(
            machine.apply(LogIndex(1), a, Seq(1), &append(&half), true),
            Ok(KvResult::Done)
        );
        assert_eq!(
            machine.apply(LogIndex(2), b, Seq(1), &append(&half), true),
            Ok(KvResult::Done)
        );
        let refused = machine.apply(LogIndex(3), a, Seq(2), &append("y"), true);
        let refusal = refused.clone().unwrap_err();
        assert_eq!(refusal.bytes, super::super::MAX_VALUE_BYTES as u64 + 1);
        assert_eq!(
            machine.get("k").len(),
            super::super::MAX_VALUE_BYTES,
            "unchanged"
        );
        assert_eq!(
            machine.apply(LogIndex(4), a, Seq(2), &append("y"), true),
            refused
        );
        let too_long_key = KvOp::Put("k".repeat(super::super::MAX_KEY_BYTES + 1), "v".into());
        assert!(machine
            .apply(LogIndex(5), b, Seq(2), &too_long_key, true)
            .is_err());
        assert_eq!(machine.data().len(), 1, "the long key was not stored");
    }

    #[test]
    fn a_write_that_would_pass_the_store_limit_is_refused_and_a_smaller_one_still_goes() {
        use super::super::{MAX_STORE_BYTES, MAX_VALUE_BYTES};
        let mut machine = KvStateMachine::new();
        let value = "v".repeat(MAX_VALUE_BYTES);
        let mut index = 0;
        let mut put = |machine: &mut KvStateMachine, key: String, value: &str| {
            index += 1;
            let op = KvOp::Put(key, value.to_string());
            machine.apply(LogIndex(index), ClientId(1), Seq(index), &op, true)
        };
        let fits = MAX_STORE_BYTES / (MAX_VALUE_BYTES + 4);
        for i in 0..fits {
            put(&mut machine, format!("k{i:03}"), &value).expect("within the store's limit");
        }
        let refused = put(&mut machine, "one-more".into(), &value).unwrap_err();
        assert_eq!(refused.part, super::super::Part::Store);
        assert!(
            refused.to_string().starts_with("refused: a store of "),
            "{refused}"
        );
        assert_eq!(machine.data().len(), fits, "nothing stored");
        // Replacing a value by a shorter one frees room; the count follows it.
        put(&mut machine, "k000".into(), "short").expect("smaller");
        put(&mut machine, "one-more".into(), "fits now").expect("room again");
        let restored = KvStateMachine::restore(&machine.snapshot()).expect("restores");
        assert_eq!(restored, machine, "the count is rebuilt from a snapshot");
    }

    #[test]
    fn without_suppression_a_retry_is_applied_twice() {
        let mut machine = KvStateMachine::new();
        machine
            .apply(LogIndex(1), ClientId(1), Seq(1), &append("x"), false)
            .expect("within the limits");
        machine
            .apply(LogIndex(2), ClientId(1), Seq(1), &append("x"), false)
            .expect("within the limits");
        assert_eq!(machine.get("k"), "xx");
    }

    #[test]
    #[should_panic(expected = "out of order")]
    fn a_gap_in_the_applied_indices_is_a_bug() {
        let mut machine = KvStateMachine::new();
        machine.advance(LogIndex(2));
    }
}
