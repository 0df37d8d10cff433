//! Client sessions, and the rule that expires them without breaking exactly-once (Raft thesis
//! §6.3).
//!
//! A clerk registers before its first operation: the `Register` entry's log index becomes its
//! [`ClientId`], so no two sessions ever share an id, and an id is never given out again. A
//! session remembers the client's last sequence number (so a retry is not applied twice) and
//! when it was last used, by the **log's clock**: each command carries the time on its leader's
//! clock when it was proposed, and the state machine's clock is the largest such time applied so
//! far. Every replica applies the same entries, so every replica expires the same sessions at
//! the same entry, whatever its own clock says.
//!
//! A session unused for [`SessionPolicy::timeout`] of the log's clock expires, and so does the
//! least recently used one when a registration would pass [`SessionPolicy::max_sessions`]. An
//! operation of an expired (or never registered) session is not applied: its client is told its
//! session expired, and the operation's outcome is unknown to it (a retry may have been applied
//! before the session expired). Since ids are never reused, a late retry can never be mistaken
//! for a new operation: expiry costs clients an error, never a duplicate.

use super::{ClientId, Refusal, Seq};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The most sessions a store keeps by default.
pub const MAX_SESSIONS: usize = 1 << 16;
/// How long, by the log's clock, a session may go unused by default.
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(600);
/// A session's bytes in a snapshot, besides the texts of kept reads (which count against the
/// store's limit): client, sequence number, last use, result tag, and a refusal or the kept
/// reads' count and lengths.
pub(super) const SESSION_BYTES: usize = 8 + 8 + 8 + 1 + 8 + 4 * super::MAX_TXN_STEPS;
const _: () = assert!(1 + 8 + 8 <= 8 + 4 * super::MAX_TXN_STEPS);
const _: () = assert!(
    MAX_SESSIONS * SESSION_BYTES <= crate::persist::MAX_SNAPSHOT_BYTES / 16,
    "the most sessions take a small part of a snapshot"
);

/// When sessions expire. Part of the replicated state machine's rules: every replica must use
/// the same policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionPolicy {
    /// A session unused this long, by the log's clock, expires.
    pub timeout: Duration,
    /// The most sessions kept: registering one more expires the least recently used.
    pub max_sessions: usize,
}

impl Default for SessionPolicy {
    fn default() -> Self {
        SessionPolicy {
            timeout: SESSION_TIMEOUT,
            max_sessions: MAX_SESSIONS,
        }
    }
}

/// A client's operation came for a session the store does not hold: it expired, or was never
/// registered. The operation was not applied now; whether an earlier attempt was is unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the client's session expired; the operation's outcome is unknown")]
pub struct SessionExpired;

/// What a session keeps of its client's last operation, to answer a retry of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Kept {
    /// It took effect. A get's value is not kept: a retried get reads again, which is
    /// linearizable (it is still in progress).
    Done,
    /// It was refused: a retry is refused again.
    Refused(Refusal),
    /// A transaction's reads. A retry gets them, not reads of now: its appends are not applied
    /// again, so a new read would not see the store at the transaction's position in the log.
    /// Their bytes count against the store's limit ([`Sessions::kept_bytes`]).
    Reads(Vec<String>),
}

impl Kept {
    /// The bytes of the reads it keeps.
    pub(super) fn bytes(&self) -> usize {
        match self {
            Kept::Reads(reads) => reads.iter().map(String::len).sum(),
            Kept::Done | Kept::Refused(_) => 0,
        }
    }
}

/// The last operation applied for one client, and when the session was last used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Session {
    /// The client's last sequence number applied.
    pub(super) seq: Seq,
    /// What a retry of that operation is answered.
    pub(super) kept: Kept,
    /// The log's clock when it was last used, in nanoseconds.
    pub(super) last_used: u64,
}

/// Every live session, ordered by client and by last use, and the log's clock.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Sessions {
    by_client: BTreeMap<ClientId, Session>,
    /// (last use, client) of every session: the first is the least recently used.
    by_use: BTreeSet<(u64, ClientId)>,
    /// The largest proposal time applied, in nanoseconds of a leader's clock.
    clock: u64,
    /// The bytes of every session's kept reads.
    kept_bytes: usize,
}

impl Sessions {
    /// The log's clock: the largest proposal time applied so far.
    pub(super) fn clock(&self) -> u64 {
        self.clock
    }

    /// The bytes of the transaction reads every session keeps.
    pub(super) fn kept_bytes(&self) -> usize {
        self.kept_bytes
    }

    /// Sets the clock a snapshot held.
    pub(super) fn restore_clock(&mut self, clock: u64) {
        self.clock = clock;
    }

    /// Moves the log's clock to `proposed` if later, and expires every session unused for
    /// longer than the policy allows by it.
    pub(super) fn tick(&mut self, proposed: u64, policy: &SessionPolicy) {
        self.clock = self.clock.max(proposed);
        let timeout = u64::try_from(policy.timeout.as_nanos()).unwrap_or(u64::MAX);
        while let Some(&(last_used, client)) = self.by_use.first() {
            if last_used.saturating_add(timeout) >= self.clock {
                break;
            }
            self.remove(client);
        }
    }

    /// Opens a session for `client` (a fresh id), expiring the least recently used sessions
    /// while the policy's count would be passed.
    pub(super) fn register(&mut self, client: ClientId, policy: &SessionPolicy) {
        assert!(
            !self.by_client.contains_key(&client),
            "session ids are never reused: {client:?} registered twice"
        );
        while !self.by_client.is_empty() && self.by_client.len() >= policy.max_sessions.max(1) {
            let &(_, oldest) = self.by_use.first().expect("a session per client");
            self.remove(oldest);
        }
        let session = Session {
            seq: Seq(0),
            kept: Kept::Done,
            last_used: self.clock,
        };
        self.insert(client, session);
    }

    /// Opens a session for `client` whatever its id, as though it had applied nothing (only
    /// the `expired-session-reopened` variant does: ids are otherwise never reused).
    pub(super) fn reopen(&mut self, client: ClientId, policy: &SessionPolicy) {
        if !self.by_client.contains_key(&client) {
            while self.by_client.len() >= policy.max_sessions.max(1) {
                let &(_, oldest) = self.by_use.first().expect("a session per client");
                self.remove(oldest);
            }
            self.record(client, Seq(0), Kept::Done);
        }
    }

    /// The session of `client`, if it is live.
    pub(super) fn get(&self, client: ClientId) -> Option<&Session> {
        self.by_client.get(&client)
    }

    /// Records `seq` (and what a retry of it is answered) as `client`'s last operation, used
    /// now.
    pub(super) fn record(&mut self, client: ClientId, seq: Seq, kept: Kept) {
        let last_used = self.clock;
        self.insert(
            client,
            Session {
                seq,
                kept,
                last_used,
            },
        );
    }

    /// Puts a session in (replacing the client's earlier one).
    pub(super) fn insert(&mut self, client: ClientId, session: Session) {
        self.kept_bytes += session.kept.bytes();
        let last_used = session.last_used;
        if let Some(earlier) = self.by_client.insert(client, session) {
            self.by_use.remove(&(earlier.last_used, client));
            self.kept_bytes -= earlier.kept.bytes();
        }
        self.by_use.insert((last_used, client));
    }

    fn remove(&mut self, client: ClientId) {
        let session = self.by_client.remove(&client).expect("a live session");
        self.by_use.remove(&(session.last_used, client));
        self.kept_bytes -= session.kept.bytes();
    }

    /// Every session, by client.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&ClientId, &Session)> {
        self.by_client.iter()
    }

    /// How many there are.
    pub(super) fn len(&self) -> usize {
        self.by_client.len()
    }

    /// The last client, in id order.
    pub(super) fn last_client(&self) -> Option<ClientId> {
        self.by_client.keys().next_back().copied()
    }

    /// The same clients, each as if it had applied nothing yet (the `snapshot-without-sessions`
    /// variant).
    pub(super) fn forgetting_what_was_applied(&self) -> Sessions {
        let mut forgetful = self.clone();
        for session in forgetful.by_client.values_mut() {
            session.seq = Seq(0);
            session.kept = Kept::Done;
        }
        forgetful.kept_bytes = 0;
        forgetful
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn the_limits_page_gives_what_the_sessions_take_of_a_snapshot() {
        let page = include_str!("../../../docs/limits.md");
        let mib = (MAX_SESSIONS * SESSION_BYTES) as f64 / f64::from(1 << 20);
        let said =
            format!("at most {mib:.1} MiB of a snapshot (65,536 sessions of {SESSION_BYTES} bytes");
        assert_eq!(MAX_SESSIONS, 65_536);
        assert!(page.contains(&said), "docs/limits.md should say {said:?}");
    }

    const SECOND: u64 = 1_000_000_000;

    fn policy(timeout_secs: u64, max_sessions: usize) -> SessionPolicy {
        SessionPolicy {
            timeout: Duration::from_secs(timeout_secs),
            max_sessions,
        }
    }

    #[test]
    fn a_session_unused_past_the_timeout_by_the_logs_clock_expires() {
        let policy = policy(10, 100);
        let mut sessions = Sessions::default();
        sessions.tick(SECOND, &policy);
        sessions.register(ClientId(1), &policy);
        sessions.tick(5 * SECOND, &policy);
        sessions.register(ClientId(2), &policy);
        sessions.tick(11 * SECOND, &policy);
        assert!(sessions.get(ClientId(1)).is_some(), "exactly the timeout");
        // A proposal time from a leader whose clock is behind does not move the clock back.
        sessions.tick(3 * SECOND, &policy);
        assert_eq!(sessions.clock(), 11 * SECOND);
        sessions.tick(11 * SECOND + 1, &policy);
        assert!(sessions.get(ClientId(1)).is_none(), "unused for longer");
        assert!(sessions.get(ClientId(2)).is_some());
        sessions.record(ClientId(2), Seq(1), Kept::Done);
        sessions.tick(20 * SECOND, &policy);
        assert!(sessions.get(ClientId(2)).is_some(), "used at 11 s");
        sessions.tick(22 * SECOND, &policy);
        assert_eq!(sessions.len(), 0);
    }

    #[test]
    fn registering_past_the_count_expires_the_least_recently_used() {
        let policy = policy(1000, 3);
        let mut sessions = Sessions::default();
        for client in 1..=3 {
            sessions.tick(client * SECOND, &policy);
            sessions.register(ClientId(client), &policy);
        }
        sessions.tick(4 * SECOND, &policy);
        sessions.record(ClientId(1), Seq(1), Kept::Done);
        sessions.register(ClientId(4), &policy);
        let live: Vec<u64> = sessions.iter().map(|(client, _)| client.0).collect();
        assert_eq!(live, [1, 3, 4], "2 was the least recently used");
    }

    #[test]
    #[should_panic(expected = "never reused")]
    fn registering_an_id_twice_is_a_bug() {
        let mut sessions = Sessions::default();
        sessions.register(ClientId(1), &SessionPolicy::default());
        sessions.register(ClientId(1), &SessionPolicy::default());
    }
}
