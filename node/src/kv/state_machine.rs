//! [`KvStateMachine`]: the key-value map and the client sessions that make retries exactly-once
//! (and expire, [`super::sessions`]).

use super::sessions::{Kept, SessionExpired, SessionPolicy, Sessions};
use super::{ClientId, KvOp, KvResult, Refusal, Seq, TxnStep};
use crate::LogIndex;
use std::collections::BTreeMap;

/// What applying one operation came to: its result, or a refusal that changed nothing.
pub type Outcome = Result<KvResult, Refusal>;

/// The replicated state: a map from keys to values, plus the sessions. Applied strictly in log
/// order; rebuilt from the log after a restart, or restored from a snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KvStateMachine {
    data: BTreeMap<String, String>,
    /// The bytes of every key and value in `data` (what [`super::MAX_STORE_BYTES`] bounds).
    stored_bytes: usize,
    sessions: Sessions,
    applied: LogIndex,
    /// When sessions expire: the same on every replica (configuration, not state).
    policy: SessionPolicy,
    /// The `expired-session-reopened` variant: an operation without a session opens one.
    reopens_expired_sessions: bool,
}

impl KvStateMachine {
    /// An empty store, with the default session policy.
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

    /// The same state, expiring sessions by `policy` from now on.
    pub fn with_policy(self, policy: SessionPolicy) -> KvStateMachine {
        KvStateMachine { policy, ..self }
    }

    /// The same state, opening a session for an operation that has none (the deliberately
    /// broken `expired-session-reopened` variant's state machine).
    pub(crate) fn reopening_expired_sessions(self) -> KvStateMachine {
        KvStateMachine {
            reopens_expired_sessions: true,
            ..self
        }
    }

    /// Opens a session for `client` if it has none (the `expired-session-reopened` variant).
    pub(crate) fn reopen_session(&mut self, client: ClientId) {
        self.sessions.reopen(client, &self.policy);
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

    pub(super) fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    pub(super) fn sessions_mut(&mut self) -> &mut Sessions {
        &mut self.sessions
    }

    /// A fingerprint of the whole state (applied index, data, sessions and the log's clock),
    /// independent of how a snapshot encodes it: two machines with equal digests hold, up to
    /// hash collisions, the same state. Costs a pass over the state (the harness takes it at
    /// snapshots only), its keys and values read eight bytes at a time
    /// ([`threadsim::Digest::write_text`]): with the simulation's small snapshot thresholds and a
    /// list-append state that keeps growing, the byte-at-a-time digest was 46% of a run.
    pub fn digest(&self) -> u64 {
        let mut digest = threadsim::Digest::default();
        digest.write_u64(self.applied.0);
        digest.write_u64(self.data.len() as u64);
        for (key, value) in &self.data {
            digest.write_text(key);
            digest.write_text(value);
        }
        digest.write_u64(self.sessions.clock());
        digest.write_u64(self.sessions.len() as u64);
        for (client, session) in self.sessions.iter() {
            digest.write_u64(client.0);
            digest.write_u64(session.seq.0);
            digest.write_u64(session.last_used);
            match &session.kept {
                Kept::Done => digest.write(&[0]),
                Kept::Refused(refusal) => {
                    digest.write(&[2]);
                    digest.write_u64(refusal.bytes);
                }
                Kept::Reads(reads) => {
                    digest.write(&[3]);
                    digest.write_u64(reads.len() as u64);
                    for read in reads {
                        digest.write_text(read);
                    }
                }
            }
        }
        digest.value()
    }

    /// This state with every session kept but each as if its client had applied nothing (the
    /// `snapshot-without-sessions` variant's snapshot).
    pub(crate) fn without_sessions(&self) -> KvStateMachine {
        KvStateMachine {
            sessions: self.sessions.forgetting_what_was_applied(),
            ..self.clone()
        }
    }

    /// The value of `key` (empty if never written).
    pub fn get(&self, key: &str) -> String {
        self.data.get(key).cloned().unwrap_or_default()
    }

    /// How many client sessions are live.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
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

    /// Applies a client's registration at `index`, proposed at `proposed` (nanoseconds of its
    /// leader's clock): the client's id is the index, never given out before or again.
    pub fn register(&mut self, index: LogIndex, proposed: u64) -> ClientId {
        self.advance(index);
        self.sessions.tick(proposed, &self.policy);
        let client = ClientId(index.0);
        self.sessions.register(client, &self.policy);
        client
    }

    /// Applies `op` from `client` with sequence number `seq` at `index`, proposed at `proposed`
    /// (nanoseconds of its leader's clock). A sequence number the client's session already
    /// covers is a retry: a write is not applied again and gets the first attempt's answer, a
    /// get reads again (unless `suppress_duplicates` is off, the deliberately broken variant). An
    /// operation over the size limits, or an append that would grow a value past
    /// [`super::MAX_VALUE_BYTES`], is refused and changes nothing (its session remembers the
    /// refusal, so a retry gets it too). A client without a live session gets
    /// [`SessionExpired`], and nothing is applied.
    pub fn apply(
        &mut self,
        index: LogIndex,
        client: ClientId,
        seq: Seq,
        op: &KvOp,
        proposed: u64,
        suppress_duplicates: bool,
    ) -> Result<Outcome, SessionExpired> {
        self.advance(index);
        self.sessions.tick(proposed, &self.policy);
        if self.reopens_expired_sessions {
            crate::broken::expired_session_reopened::reopen(self, client);
        }
        let Some(session) = self.sessions.get(client) else {
            crate::coverage::reached(crate::coverage::Point::SessionExpiredRefused);
            return Err(SessionExpired);
        };
        if suppress_duplicates && seq <= session.seq {
            crate::coverage::reached(crate::coverage::Point::DuplicateSuppressed);
            // An older sequence number than the last is a retry nobody waits for any more.
            return Ok(match (&session.kept, op) {
                (Kept::Refused(refusal), _) => Err(*refusal),
                (Kept::Reads(reads), _) => Ok(KvResult::Reads(reads.clone())),
                (Kept::Done, KvOp::Get(key)) => Ok(KvResult::Value(self.get(key))),
                (Kept::Done, _) => Ok(KvResult::Done),
            });
        }
        let result = op.check_size().and_then(|()| self.apply_sized(op));
        let kept = match &result {
            Err(refusal) => Kept::Refused(*refusal),
            Ok(KvResult::Reads(reads)) => Kept::Reads(reads.clone()),
            Ok(KvResult::Done | KvResult::Value(_)) => Kept::Done,
        };
        self.sessions.record(client, seq, kept);
        Ok(result)
    }

    /// Refuses a store that would hold `data_bytes` of keys and values, besides the reads its
    /// sessions keep, if that passes [`super::MAX_STORE_BYTES`].
    fn check_store(&self, data_bytes: usize) -> Result<(), Refusal> {
        Refusal::check_store(data_bytes + self.sessions.kept_bytes())
    }

    /// Applies an operation whose key and value are within the limits.
    fn apply_sized(&mut self, op: &KvOp) -> Outcome {
        Ok(match op {
            KvOp::Get(key) => KvResult::Value(self.get(key)),
            KvOp::Put(key, value) => {
                let old = self.data.get(key).map_or(0, |old| key.len() + old.len());
                let stored = self.stored_bytes - old + key.len() + value.len();
                self.check_store(stored)?;
                self.data.insert(key.clone(), value.clone());
                self.stored_bytes = stored;
                KvResult::Done
            }
            KvOp::Append(key, value) => {
                let old = self.data.get(key).map(String::len);
                Refusal::check_value(old.unwrap_or(0) + value.len())?;
                let added = value.len() + if old.is_some() { 0 } else { key.len() };
                self.check_store(self.stored_bytes + added)?;
                self.data.entry(key.clone()).or_default().push_str(value);
                self.stored_bytes += added;
                KvResult::Done
            }
            KvOp::Txn(steps) => KvResult::Reads(self.apply_txn(steps)?),
        })
    }

    /// What `steps` would read and write run on this state now, changing nothing: the values
    /// of the reads (each sees the appends of the steps before it), and the new value of every
    /// key appended to.
    pub(crate) fn run_txn<'a>(
        &self,
        steps: &'a [TxnStep],
    ) -> (Vec<String>, BTreeMap<&'a str, String>) {
        let mut written: BTreeMap<&str, String> = BTreeMap::new();
        let mut reads = Vec::new();
        for step in steps {
            match step {
                TxnStep::Read(key) => reads.push(match written.get(key.as_str()) {
                    Some(value) => value.clone(),
                    None => self.get(key),
                }),
                TxnStep::Append(key, value) => written
                    .entry(key.as_str())
                    .or_insert_with(|| self.get(key))
                    .push_str(value),
            }
        }
        (reads, written)
    }

    /// Applies a transaction's steps at once: each read sees the appends of the steps before
    /// it. Refused, changing nothing, if an append would grow a value past
    /// [`super::MAX_VALUE_BYTES`], if its reads take more than that in all (they are one
    /// reply), or if the store with the reads kept for a retry would pass its limit.
    fn apply_txn(&mut self, steps: &[TxnStep]) -> Result<Vec<String>, Refusal> {
        let (reads, written) = self.run_txn(steps);
        for new in written.values() {
            Refusal::check_value(new.len())?;
        }
        let read_bytes: usize = reads.iter().map(String::len).sum();
        Refusal::check_value(read_bytes)?;
        let stored = written
            .iter()
            .fold(self.stored_bytes, |stored, (key, new)| {
                let old = self.data.get(*key).map_or(0, |old| key.len() + old.len());
                stored - old + key.len() + new.len()
            });
        self.check_store(stored + read_bytes)?;
        for (key, new) in written {
            self.data.insert(key.to_string(), new);
        }
        self.stored_bytes = stored;
        Ok(reads)
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::super::sessions::SessionPolicy;
    use super::*;
    use std::time::Duration;

    fn append(value: &str) -> KvOp {
        KvOp::Append("k".into(), value.into())
    }

    /// A machine with `clients` registered at indices 1, 2, ... (so their ids are those).
    fn with_clients(clients: u64) -> KvStateMachine {
        let mut machine = KvStateMachine::new();
        for index in 1..=clients {
            assert_eq!(machine.register(LogIndex(index), 0), ClientId(index));
        }
        machine
    }

    /// Applies `op` at the next index at time 0, in a live session.
    fn apply(machine: &mut KvStateMachine, client: u64, seq: u64, op: &KvOp) -> Outcome {
        let index = machine.applied().next();
        machine
            .apply(index, ClientId(client), Seq(seq), op, 0, true)
            .expect("a live session")
    }

    #[test]
    fn a_retried_append_is_applied_once_and_a_retried_get_reads_again() {
        let mut machine = with_clients(2);
        apply(&mut machine, 1, 1, &append("x")).expect("within the limits");
        apply(&mut machine, 2, 1, &append("y")).expect("within the limits");
        assert_eq!(apply(&mut machine, 1, 1, &append("x")), Ok(KvResult::Done));
        assert_eq!(machine.get("k"), "xy");
        let get = KvOp::Get("k".into());
        assert_eq!(
            apply(&mut machine, 1, 2, &get),
            Ok(KvResult::Value("xy".into()))
        );
        apply(&mut machine, 2, 2, &append("z")).expect("within the limits");
        // The get is still in progress while it is retried: reading the value of now is a
        // linearization of it, and the session need not keep values.
        assert_eq!(
            apply(&mut machine, 1, 2, &get),
            Ok(KvResult::Value("xyz".into()))
        );
        assert_eq!(machine.applied(), LogIndex(8));
    }

    #[test]
    fn an_append_past_the_value_limit_changes_nothing_and_its_retry_is_refused_again() {
        let mut machine = with_clients(2);
        let half = "x".repeat(super::super::MAX_VALUE_BYTES / 2);
        assert_eq!(
            apply(&mut machine, 1, 1, &append(&half)),
            Ok(KvResult::Done)
        );
        assert_eq!(
            apply(&mut machine, 2, 1, &append(&half)),
            Ok(KvResult::Done)
        );
        let refused = apply(&mut machine, 1, 2, &append("y"));
        let refusal = refused.clone().unwrap_err();
        assert_eq!(refusal.bytes, super::super::MAX_VALUE_BYTES as u64 + 1);
        assert_eq!(
            machine.get("k").len(),
            super::super::MAX_VALUE_BYTES,
            "unchanged"
        );
        assert_eq!(apply(&mut machine, 1, 2, &append("y")), refused);
        let too_long_key = KvOp::Put("k".repeat(super::super::MAX_KEY_BYTES + 1), "v".into());
        assert!(apply(&mut machine, 2, 2, &too_long_key).is_err());
        assert_eq!(machine.data().len(), 1, "the long key was not stored");
    }

    #[test]
    fn a_write_that_would_pass_the_store_limit_is_refused_and_a_smaller_one_still_goes() {
        use super::super::{MAX_STORE_BYTES, MAX_VALUE_BYTES};
        let mut machine = with_clients(1);
        let value = "v".repeat(MAX_VALUE_BYTES);
        let mut seq = 0;
        let mut put = |machine: &mut KvStateMachine, key: String, value: &str| {
            seq += 1;
            apply(machine, 1, seq, &KvOp::Put(key, value.to_string()))
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
        let mut machine = with_clients(1);
        for index in [2, 3] {
            machine
                .apply(LogIndex(index), ClientId(1), Seq(1), &append("x"), 0, false)
                .expect("a live session")
                .expect("within the limits");
        }
        assert_eq!(machine.get("k"), "xx");
    }

    #[test]
    fn an_operation_of_an_expired_or_unknown_session_is_not_applied_and_a_late_retry_never_is() {
        const SECOND: u64 = 1_000_000_000;
        let policy = SessionPolicy {
            timeout: Duration::from_secs(10),
            max_sessions: 100,
        };
        let mut machine = KvStateMachine::new().with_policy(policy);
        let client = machine.register(LogIndex(1), SECOND);
        let at = |machine: &mut KvStateMachine, client, seq, proposed| {
            let index = machine.applied().next();
            machine.apply(index, client, Seq(seq), &append("x"), proposed, true)
        };
        assert_eq!(
            at(&mut machine, client, 1, 2 * SECOND),
            Ok(Ok(KvResult::Done))
        );
        // Another client's entry 20 s later by the log's clock expires the first session.
        let other = machine.register(machine.applied().next(), 22 * SECOND);
        assert_eq!(machine.session_count(), 1);
        // The first attempt was applied and its answer lost; the retry finds no session and is
        // not applied, and no later retry ever is, since the id is never registered again.
        assert_eq!(
            at(&mut machine, client, 1, 23 * SECOND),
            Err(SessionExpired)
        );
        let again = machine.register(machine.applied().next(), 24 * SECOND);
        assert_ne!(again, client, "a new id");
        assert_eq!(
            at(&mut machine, client, 1, 25 * SECOND),
            Err(SessionExpired)
        );
        assert_eq!(machine.get("k"), "x", "applied once");
        assert_eq!(
            at(&mut machine, ClientId(999), 1, 25 * SECOND),
            Err(SessionExpired)
        );
        assert_eq!(
            at(&mut machine, other, 1, 25 * SECOND),
            Ok(Ok(KvResult::Done))
        );
        assert_eq!(machine.get("k"), "xx");
    }

    fn txn(steps: &[(&str, Option<&str>)]) -> KvOp {
        KvOp::Txn(
            steps
                .iter()
                .map(|(key, value)| match value {
                    None => TxnStep::Read(key.to_string()),
                    Some(value) => TxnStep::Append(key.to_string(), value.to_string()),
                })
                .collect(),
        )
    }

    fn reads(values: &[&str]) -> Outcome {
        Ok(KvResult::Reads(
            values.iter().map(|v| v.to_string()).collect(),
        ))
    }

    #[test]
    fn a_transaction_reads_its_own_appends_and_its_retry_gets_its_first_reads() {
        let mut machine = with_clients(2);
        let first = txn(&[
            ("x", None),
            ("x", Some("1 ")),
            ("y", Some("1 ")),
            ("x", None),
        ]);
        assert_eq!(apply(&mut machine, 1, 1, &first), reads(&["", "1 "]));
        let second = txn(&[("x", Some("2 ")), ("y", None)]);
        assert_eq!(apply(&mut machine, 2, 1, &second), reads(&["1 "]));
        // Client 1's retry: its appends are not applied again and it gets the reads of its
        // position in the log, not of now.
        assert_eq!(apply(&mut machine, 1, 1, &first), reads(&["", "1 "]));
        assert_eq!(machine.get("x"), "1 2 ");
        assert_eq!(machine.get("y"), "1 ");
        let restored = KvStateMachine::restore(&machine.snapshot()).expect("restores");
        assert_eq!(restored, machine);
    }

    #[test]
    fn a_transaction_over_a_limit_changes_nothing_and_kept_reads_count_against_the_store() {
        use super::super::{Part, MAX_STORE_BYTES, MAX_TXN_STEPS, MAX_VALUE_BYTES};
        let mut machine = with_clients(2);
        let half = "v".repeat(MAX_VALUE_BYTES / 2 + 1);
        // The first append fits; the second would pass the value limit: nothing is applied.
        let over = txn(&[("a", Some(&half)), ("b", Some("1")), ("a", Some(&half))]);
        let refusal = apply(&mut machine, 1, 1, &over).unwrap_err();
        assert_eq!(refusal.part, Part::Value);
        assert!(machine.data().is_empty(), "nothing applied");
        let too_many = KvOp::Txn(vec![TxnStep::Read("a".into()); MAX_TXN_STEPS + 1]);
        let refusal = apply(&mut machine, 1, 2, &too_many).unwrap_err();
        assert_eq!(refusal.part, Part::Steps);
        assert_eq!(
            refusal.to_string(),
            format!(
                "refused: a transaction of {} steps is over the limit of {MAX_TXN_STEPS} steps",
                MAX_TXN_STEPS + 1
            )
        );
        // Reads of more than a value's limit in all are one reply too many.
        apply(&mut machine, 1, 3, &txn(&[("a", Some(&half))])).expect("fits");
        let twice = txn(&[("a", None), ("a", None)]);
        assert_eq!(
            apply(&mut machine, 2, 1, &twice).unwrap_err().part,
            Part::Value
        );
        // Kept reads are bytes the store holds: fill the store to just under its limit with
        // them counted, and a put that fits without them is refused.
        let read = txn(&[("a", None)]);
        assert_eq!(apply(&mut machine, 2, 2, &read), reads(&[&half]));
        assert_eq!(machine.sessions.kept_bytes(), half.len());
        let mut seq = 3;
        loop {
            let room = MAX_STORE_BYTES - machine.stored_bytes - machine.sessions.kept_bytes();
            if room < 1000 {
                break;
            }
            seq += 1;
            let put = KvOp::Put(
                format!("f{seq:05}"),
                "f".repeat((room - 100).min(MAX_VALUE_BYTES)),
            );
            apply(&mut machine, 1, seq, &put).expect("fits with the kept reads");
        }
        let left = MAX_STORE_BYTES - machine.stored_bytes;
        let fits_only_without_kept = KvOp::Put("z".into(), "z".repeat(left - 1));
        let refusal = apply(&mut machine, 1, seq + 1, &fits_only_without_kept).unwrap_err();
        assert_eq!(refusal.part, Part::Store);
        // Client 2's next operation drops its kept reads, and the put fits.
        apply(&mut machine, 2, 3, &KvOp::Get("a".into())).expect("a get");
        assert_eq!(machine.sessions.kept_bytes(), 0);
        apply(&mut machine, 1, seq + 2, &fits_only_without_kept).expect("room again");
    }

    #[test]
    #[should_panic(expected = "out of order")]
    fn a_gap_in_the_applied_indices_is_a_bug() {
        let mut machine = KvStateMachine::new();
        machine.advance(LogIndex(2));
    }
}
