//! [`Clerk`]: the client library of the key-value service.

use super::round_trips::RoundTrips;
use super::{ClientId, KvOp, KvReply, KvRequest, KvResult, Refusal, Seq, SessionExpired, TxnStep};
use crate::transport::TransportError;
use crate::NodeId;
use std::time::Duration;
use threadsim::clock::ClockRef;
use threadsim::sync::Arc;
use threadsim::Instant;

/// How a clerk reaches the servers (the simulated network in tests).
pub trait KvTransport: Send + Sync {
    /// Sends `request` to `server` and waits at most `timeout` for its reply.
    fn call(
        &self,
        server: NodeId,
        request: KvRequest,
        timeout: Duration,
    ) -> Result<KvReply, TransportError>;
}

/// Timing of a clerk.
#[derive(Clone, Debug)]
pub struct ClerkConfig {
    /// The longest one call waits for a reply (longer than the server's wait timeout): the
    /// wait before any reply came, and the most that unanswered calls back off to. Between
    /// answers a call waits a few of the round trips seen ([`RoundTrips`]), measured apart for
    /// gets and for writes.
    pub call_timeout: Duration,
    /// The shortest a call waits, however short the round trips seen.
    pub min_call_timeout: Duration,
    /// Pause after every server was tried once without success.
    pub retry_pause: Duration,
}

impl Default for ClerkConfig {
    fn default() -> Self {
        ClerkConfig {
            call_timeout: Duration::from_millis(200),
            min_call_timeout: Duration::from_millis(20),
            retry_pause: Duration::from_millis(50),
        }
    }
}

/// The clerk stopped retrying at the caller's deadline: the operation may or may not take effect
/// (its outcome is unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("gave up after {attempts} attempts; the operation may still take effect")]
pub struct GaveUp {
    /// Calls made.
    pub attempts: u64,
}

/// Why an operation did not return a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClerkError {
    /// The deadline passed: the operation may or may not take effect.
    #[error(transparent)]
    GaveUp(#[from] GaveUp),
    /// The operation is over the size limits (refused by the clerk before sending, or by the
    /// store for an append that would grow a value past them): it took no effect.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The clerk's session expired: the operation was not applied at the end, but an earlier
    /// attempt may have been (its outcome is unknown). The clerk registers again for its next
    /// operation.
    #[error(transparent)]
    SessionExpired(#[from] SessionExpired),
}

/// A client of the store: one operation at a time, each retried with the same sequence number
/// until a server answers it or the caller's deadline passes. It registers a session before its
/// first operation, and again after its session expired.
pub struct Clerk {
    /// The session's id, once registered.
    id: Option<ClientId>,
    next_seq: Seq,
    servers: Vec<NodeId>,
    leader: usize,
    transport: Arc<dyn KvTransport>,
    clock: ClockRef,
    config: ClerkConfig,
    /// Round trips of answered gets, and of answered writes (which wait for a commit).
    gets: RoundTrips,
    writes: RoundTrips,
}

impl Clerk {
    /// A clerk for the cluster of `servers` (it registers on its first operation).
    pub fn new(
        servers: Vec<NodeId>,
        transport: Arc<dyn KvTransport>,
        clock: ClockRef,
        config: ClerkConfig,
    ) -> Clerk {
        assert!(!servers.is_empty(), "a clerk needs at least one server");
        Clerk {
            id: None,
            next_seq: Seq(1),
            servers,
            leader: 0,
            transport,
            clock,
            config,
            gets: RoundTrips::default(),
            writes: RoundTrips::default(),
        }
    }

    /// This clerk's session id, once it registered.
    pub fn id(&self) -> Option<ClientId> {
        self.id
    }

    /// Reads `key`.
    pub fn get(&mut self, key: &str, deadline: Option<Instant>) -> Result<String, ClerkError> {
        match self.execute(KvOp::Get(key.to_string()), deadline)? {
            KvResult::Value(value) => Ok(value),
            other => unreachable!("a get answered {other:?}"),
        }
    }

    /// Runs a transaction's `steps` atomically; the values its reads saw, in order. A retry of
    /// a transaction that took effect is answered its first reads.
    pub fn transact(
        &mut self,
        steps: Vec<TxnStep>,
        deadline: Option<Instant>,
    ) -> Result<Vec<String>, ClerkError> {
        match self.execute(KvOp::Txn(steps), deadline)? {
            KvResult::Reads(reads) => Ok(reads),
            other => unreachable!("a transaction answered {other:?}"),
        }
    }

    /// Sets `key` to `value`.
    pub fn put(
        &mut self,
        key: &str,
        value: &str,
        deadline: Option<Instant>,
    ) -> Result<(), ClerkError> {
        self.execute(KvOp::Put(key.into(), value.into()), deadline)
            .map(|_| ())
    }

    /// Appends `value` to `key`.
    pub fn append(
        &mut self,
        key: &str,
        value: &str,
        deadline: Option<Instant>,
    ) -> Result<(), ClerkError> {
        self.execute(KvOp::Append(key.into(), value.into()), deadline)
            .map(|_| ())
    }

    /// Runs `op` until a server answers it, or gives up once `deadline` (if any) has passed.
    /// An operation over the size limits is refused here, without a call. Registers a session
    /// first if the clerk has none.
    pub fn execute(&mut self, op: KvOp, deadline: Option<Instant>) -> Result<KvResult, ClerkError> {
        op.check_size()?;
        let client = match self.id {
            Some(client) => client,
            None => match self.call(KvRequest::Register, false, deadline)? {
                KvReply::Registered(client) => {
                    self.id = Some(client);
                    self.next_seq = Seq(1);
                    client
                }
                other => unreachable!("a registration answered {other:?}"),
            },
        };
        let seq = self.next_seq;
        self.next_seq = seq.next();
        let is_get = matches!(op, KvOp::Get(_));
        match self.call(KvRequest::Op { client, seq, op }, is_get, deadline)? {
            KvReply::Ok(result) => Ok(result),
            KvReply::Refused(refusal) => Err(refusal.into()),
            KvReply::SessionExpired => {
                self.id = None;
                Err(SessionExpired.into())
            }
            other => unreachable!("an operation answered {other:?}"),
        }
    }

    /// Sends `request` until a server answers it for good (a result, a refusal, a registration
    /// or an expired session), or the deadline passes.
    fn call(
        &mut self,
        request: KvRequest,
        is_get: bool,
        deadline: Option<Instant>,
    ) -> Result<KvReply, GaveUp> {
        let mut attempts = 0;
        let mut failures_in_a_row = 0;
        loop {
            if deadline.is_some_and(|deadline| self.clock.now() >= deadline) {
                return Err(GaveUp { attempts });
            }
            attempts += 1;
            let server = self.servers[self.leader];
            let trips = if is_get {
                &mut self.gets
            } else {
                &mut self.writes
            };
            let wait = trips.wait(self.config.min_call_timeout, self.config.call_timeout);
            let sent = self.clock.now();
            let reply = self.transport.call(server, request.clone(), wait);
            match &reply {
                Ok(
                    KvReply::Ok(_)
                    | KvReply::Refused(_)
                    | KvReply::Registered(_)
                    | KvReply::SessionExpired,
                ) => trips.answered(self.clock.now().saturating_since(sent)),
                Err(_) => trips.unanswered(),
                Ok(_) => {}
            }
            match reply {
                Ok(
                    answer @ (KvReply::Ok(_)
                    | KvReply::Refused(_)
                    | KvReply::Registered(_)
                    | KvReply::SessionExpired),
                ) => return Ok(answer),
                Ok(KvReply::WrongLeader {
                    leader_hint: Some(hint),
                }) if hint != server && self.servers.contains(&hint) => {
                    self.leader = self.servers.iter().position(|&s| s == hint).expect("known");
                }
                // Still the leader as far as it knows: ask it again.
                Ok(KvReply::Retry | KvReply::Timeout) => {}
                Ok(KvReply::WrongLeader { .. }) | Err(_) => {
                    self.leader = (self.leader + 1) % self.servers.len();
                }
            }
            failures_in_a_row += 1;
            if failures_in_a_row >= self.servers.len() {
                failures_in_a_row = 0;
                self.clock.sleep(self.config.retry_pause);
            }
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, VecDeque};
    use threadsim::sync::Mutex;
    use threadsim::SystemClock;

    /// Answers each server's calls from a script (no answer once it runs out) and records
    /// every call.
    struct Scripted {
        answers: Mutex<BTreeMap<NodeId, VecDeque<Option<KvReply>>>>,
        calls: Mutex<Vec<(NodeId, KvRequest)>>,
        /// The real clock the clerks here run on, and when each call came by it.
        clock: ClockRef,
        times: Mutex<Vec<Instant>>,
        /// How long each call was allowed to wait.
        waits: Mutex<Vec<Duration>>,
        /// Registrations answered (each at once, with ids 7, 8, ..., and not recorded as calls).
        registrations: Mutex<u64>,
    }

    impl Default for Scripted {
        fn default() -> Self {
            Scripted {
                answers: Mutex::default(),
                calls: Mutex::default(),
                clock: Arc::new(SystemClock::new()),
                times: Mutex::default(),
                waits: Mutex::default(),
                registrations: Mutex::default(),
            }
        }
    }

    impl Scripted {
        fn answer(&self, server: u32, reply: KvReply) {
            self.answers
                .lock()
                .entry(NodeId(server))
                .or_default()
                .push_back(Some(reply));
        }
        /// The next call to `server` goes unanswered.
        fn lose(&self, server: u32) {
            self.answers
                .lock()
                .entry(NodeId(server))
                .or_default()
                .push_back(None);
        }
        /// Every operation called, with its session and sequence number.
        fn ops(&self) -> Vec<(ClientId, Seq, KvOp)> {
            self.calls
                .lock()
                .iter()
                .map(|(_, request)| match request {
                    KvRequest::Op { client, seq, op } => (*client, *seq, op.clone()),
                    KvRequest::Register => unreachable!("registrations are not recorded"),
                })
                .collect()
        }
        fn servers_called(&self) -> Vec<u32> {
            self.calls
                .lock()
                .iter()
                .map(|(server, _)| server.0)
                .collect()
        }
    }

    impl KvTransport for Scripted {
        fn call(
            &self,
            server: NodeId,
            request: KvRequest,
            timeout: Duration,
        ) -> Result<KvReply, TransportError> {
            if request == KvRequest::Register {
                let mut registrations = self.registrations.lock();
                *registrations += 1;
                return Ok(KvReply::Registered(ClientId(6 + *registrations)));
            }
            self.calls.lock().push((server, request));
            self.waits.lock().push(timeout);
            self.times.lock().push(self.clock.now());
            let answer = self
                .answers
                .lock()
                .get_mut(&server)
                .and_then(VecDeque::pop_front)
                .flatten();
            answer.ok_or(TransportError::NoReply(server))
        }
    }

    fn clerk(script: &Arc<Scripted>) -> Clerk {
        clerk_pausing(script, Duration::from_millis(1))
    }

    fn clerk_pausing(script: &Arc<Scripted>, retry_pause: Duration) -> Clerk {
        Clerk::new(
            (0..3).map(NodeId).collect(),
            script.clone(),
            script.clock.clone(),
            ClerkConfig {
                call_timeout: Duration::from_millis(1),
                min_call_timeout: Duration::from_millis(1),
                retry_pause,
            },
        )
    }

    #[test]
    fn put_and_append_send_their_operation_and_retries_keep_the_sequence_number() {
        let script = Arc::new(Scripted::default());
        script.answer(0, KvReply::Ok(KvResult::Done));
        script.answer(0, KvReply::Timeout);
        script.answer(0, KvReply::Ok(KvResult::Done));
        let mut clerk = clerk(&script);
        clerk.put("k", "v", None).expect("done");
        clerk.append("k", "w", None).expect("done after a retry");
        assert_eq!(
            script.ops(),
            [
                (ClientId(7), Seq(1), KvOp::Put("k".into(), "v".into())),
                (ClientId(7), Seq(2), KvOp::Append("k".into(), "w".into())),
                (ClientId(7), Seq(2), KvOp::Append("k".into(), "w".into())),
            ]
        );
        assert_eq!(
            *script.registrations.lock(),
            1,
            "registered once, before the first"
        );
    }

    #[test]
    fn an_expired_session_ends_the_operation_as_unknown_and_the_next_registers_again() {
        let script = Arc::new(Scripted::default());
        script.answer(0, KvReply::Ok(KvResult::Done));
        script.answer(0, KvReply::SessionExpired);
        script.answer(0, KvReply::Ok(KvResult::Done));
        let mut clerk = clerk(&script);
        clerk.put("k", "v", None).expect("done");
        assert_eq!(
            clerk.append("k", "w", None),
            Err(ClerkError::SessionExpired(SessionExpired))
        );
        assert_eq!(clerk.id(), None, "the session is gone");
        clerk.append("k", "x", None).expect("done in a new session");
        assert_eq!(clerk.id(), Some(ClientId(8)));
        assert_eq!(
            script.ops(),
            [
                (ClientId(7), Seq(1), KvOp::Put("k".into(), "v".into())),
                (ClientId(7), Seq(2), KvOp::Append("k".into(), "w".into())),
                (ClientId(8), Seq(1), KvOp::Append("k".into(), "x".into())),
            ]
        );
    }

    #[test]
    fn a_hint_naming_the_server_itself_or_a_stranger_is_not_followed() {
        let script = Arc::new(Scripted::default());
        script.answer(
            0,
            KvReply::WrongLeader {
                leader_hint: Some(NodeId(0)),
            },
        );
        script.answer(
            1,
            KvReply::WrongLeader {
                leader_hint: Some(NodeId(9)),
            },
        );
        script.answer(2, KvReply::Ok(KvResult::Value("v".into())));
        assert_eq!(clerk(&script).get("k", None), Ok("v".into()));
        assert_eq!(script.servers_called(), [0, 1, 2]);
    }

    #[test]
    fn a_hint_to_another_server_is_followed() {
        let script = Arc::new(Scripted::default());
        script.answer(
            0,
            KvReply::WrongLeader {
                leader_hint: Some(NodeId(2)),
            },
        );
        script.answer(2, KvReply::Ok(KvResult::Value("v".into())));
        assert_eq!(clerk(&script).get("k", None), Ok("v".into()));
        assert_eq!(script.servers_called(), [0, 2]);
    }

    #[test]
    fn a_clerk_that_gives_up_says_how_many_calls_it_made() {
        let script = Arc::new(Scripted::default());
        let mut clerk = clerk(&script);
        let deadline = clerk.clock.now() + Duration::from_millis(20);
        let gave_up = clerk
            .get("k", Some(deadline))
            .expect_err("no server answers");
        let calls = script.calls.lock().len() as u64;
        assert!(calls >= 3, "{calls} calls");
        assert_eq!(gave_up, ClerkError::GaveUp(GaveUp { attempts: calls }));
    }

    #[test]
    fn an_operation_over_the_limits_is_refused_without_a_call_and_a_server_refusal_is_final() {
        let script = Arc::new(Scripted::default());
        let mut clerk = clerk(&script);
        let long = "v".repeat(crate::kv::MAX_VALUE_BYTES + 1);
        let refused = clerk.put("k", &long, None).expect_err("too long");
        assert!(matches!(refused, ClerkError::Refused(_)), "{refused:?}");
        assert!(script.calls.lock().is_empty(), "nothing was sent");
        let refusal = Refusal::check_value(crate::kv::MAX_VALUE_BYTES + 9).unwrap_err();
        script.answer(0, KvReply::Refused(refusal));
        assert_eq!(
            clerk.append("k", "grows it past the limit", None),
            Err(ClerkError::Refused(refusal))
        );
        assert_eq!(script.servers_called(), [0], "a refusal is not retried");
    }

    #[test]
    fn a_clerk_pauses_after_trying_every_server_once_and_only_then() {
        let script = Arc::new(Scripted::default());
        // Long enough that a thread delayed by a busy machine does not look like a pause.
        let pause = Duration::from_millis(200);
        let mut clerk = clerk_pausing(&script, pause);
        let deadline = clerk.clock.now() + Duration::from_millis(450);
        clerk
            .get("k", Some(deadline))
            .expect_err("no server answers");
        let times = script.times.lock().clone();
        // Three calls, a pause, three calls, a pause, three calls: nine at most, and the
        // first three at once.
        assert!(
            (3..=9).contains(&times.len()),
            "{} calls in 450 ms with a 200 ms pause after every round",
            times.len()
        );
        assert!(
            times[2].saturating_since(times[0]) < pause / 2,
            "the clerk paused before trying every server"
        );
    }

    #[test]
    fn a_call_waits_a_few_round_trips_once_answered_and_twice_as_long_after_each_loss() {
        let script = Arc::new(Scripted::default());
        let mut clerk = Clerk::new(
            vec![NodeId(0)],
            script.clone(),
            script.clock.clone(),
            ClerkConfig {
                call_timeout: Duration::from_millis(200),
                min_call_timeout: Duration::from_millis(20),
                retry_pause: Duration::ZERO,
            },
        );
        let value = || KvReply::Ok(KvResult::Value("v".into()));
        script.answer(0, value());
        clerk.get("k", None).expect("answered");
        script.lose(0);
        script.lose(0);
        script.answer(0, value());
        clerk.get("k", None).expect("answered");
        script.answer(0, KvReply::Ok(KvResult::Done));
        clerk.put("k", "v", None).expect("answered");
        script.answer(0, value());
        clerk.get("k", None).expect("answered");
        let ms = Duration::from_millis;
        // No round trip seen: the longest. Then the round trips seen here (well under a
        // millisecond) give the shortest, doubled by each loss. Writes have their own round
        // trips (the registration's, a write of the log), and an answer ends the doubling.
        assert_eq!(
            *script.waits.lock(),
            vec![ms(200), ms(20), ms(40), ms(80), ms(20), ms(20)]
        );
    }
}
