//! [`Trace`]: the event log of one simulation, stamped with simulated time.
//!
//! The harness records what happens (roles and terms, faults, applied entries, the violation) as
//! it happens. The trace belongs to the run, so a failure's trace is the failing run's own, and
//! its [`Digest`] says whether a replay did exactly the same.
//!
//! The trace sits behind a `std` mutex on purpose, not one of [`crate::sync`]'s: it is held only
//! to push or read a line (never across a blocking call), so it cannot take part in a deadlock,
//! and it stays readable after a controlled execution that shuttle tore down.

use crate::digest::Digest;
use crate::Instant;
use std::sync::{Arc, Mutex, MutexGuard};

/// How much an event matters when the trace is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Roles, terms, faults, violations.
    Info,
    /// Commits and applied entries.
    Debug,
}

/// One event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// Simulated time.
    pub at: Instant,
    /// How much it matters.
    pub level: Level,
    /// What happened.
    pub text: String,
}

impl std::fmt::Display for TraceEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}", self.at, self.text)
    }
}

#[derive(Default)]
struct Log {
    events: Vec<TraceEvent>,
    /// The bytes the kept events take (their text and the event itself).
    bytes: usize,
    digest: Digest,
    dropped: u64,
}

/// A shared, append-only event log with a running digest. Cloning shares the log.
#[derive(Clone, Default)]
pub struct Trace {
    log: Arc<Mutex<Log>>,
    limit: usize,
}

/// What a finished run's trace holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceLog {
    /// The events kept, in order.
    pub events: Vec<TraceEvent>,
    /// Digest of every event recorded (kept or not).
    pub digest: Digest,
    /// Events recorded beyond the limit (digested, not kept).
    pub dropped: u64,
}

impl TraceLog {
    /// The events at or above `level`, one line each.
    pub fn render(&self, level: Level) -> String {
        let mut out = String::new();
        for event in self.events.iter().filter(|event| event.level <= level) {
            out.push_str(&event.to_string());
            out.push('\n');
        }
        if self.dropped > 0 {
            out.push_str(&format!("({} more events not kept)\n", self.dropped));
        }
        out
    }

    /// The first event at which this log and `other` differ (its position), if any.
    pub fn first_difference(&self, other: &TraceLog) -> Option<usize> {
        let common = self.events.len().min(other.events.len());
        (0..common)
            .find(|&i| self.events[i] != other.events[i])
            .or_else(|| (self.events.len() != other.events.len()).then_some(common))
    }
}

/// Events kept per run by default (later ones are only digested).
pub const DEFAULT_TRACE_LIMIT: usize = 1_000_000;

/// The most memory a trace's kept events take (64 MiB): past it, later events are only
/// digested, however many fewer than [`DEFAULT_TRACE_LIMIT`] were kept, so a long run's trace
/// costs a bounded amount of memory.
pub const MAX_TRACE_BYTES: usize = 64 << 20;

impl Trace {
    /// An empty trace keeping at most `limit` events.
    pub fn with_limit(limit: usize) -> Trace {
        Trace {
            log: Arc::default(),
            limit,
        }
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records `text` at simulated time `at`, and hands it to `tracing` (target `interleave`)
    /// for anyone watching live.
    pub fn record(&self, at: Instant, level: Level, text: String) {
        match level {
            Level::Info => tracing::info!(target: "interleave", "[{at}] {text}"),
            Level::Debug => tracing::debug!(target: "interleave", "[{at}] {text}"),
        }
        crate::sync::note_traced();
        let mut log = self.log();
        log.digest.write_u64(at.since_epoch().as_micros() as u64);
        log.digest.write_str(&text);
        let bytes = std::mem::size_of::<TraceEvent>() + text.len();
        if log.events.len() < self.limit && log.bytes + bytes <= MAX_TRACE_BYTES {
            log.bytes += bytes;
            log.events.push(TraceEvent { at, level, text });
        } else {
            log.dropped += 1;
        }
    }

    /// Everything recorded so far.
    pub fn snapshot(&self) -> TraceLog {
        let log = self.log();
        TraceLog {
            events: log.events.clone(),
            digest: log.digest,
            dropped: log.dropped,
        }
    }

    /// Takes what was recorded, leaving the trace empty.
    pub fn take(&self) -> TraceLog {
        let mut log = self.log();
        let taken = std::mem::take(&mut *log);
        TraceLog {
            events: taken.events,
            digest: taken.digest,
            dropped: taken.dropped,
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(ms: u64) -> Instant {
        Instant::from_epoch(Duration::from_millis(ms))
    }

    #[test]
    fn the_kept_events_stop_at_the_byte_limit_and_the_rest_are_still_digested() {
        let trace = Trace::with_limit(usize::MAX);
        let text = "x".repeat(1 << 20);
        let count = MAX_TRACE_BYTES / (text.len() + std::mem::size_of::<TraceEvent>()) + 5;
        for i in 0..count {
            trace.record(
                Instant::ZERO + Duration::from_micros(i as u64),
                Level::Debug,
                text.clone(),
            );
        }
        let log = trace.take();
        assert_eq!(log.events.len() as u64 + log.dropped, count as u64);
        assert!(log.dropped >= 5, "{} dropped", log.dropped);
        let kept: usize = log.events.iter().map(|e| e.text.len()).sum();
        assert!(kept <= MAX_TRACE_BYTES, "{kept} bytes kept");
    }

    #[test]
    fn the_digest_covers_every_event_and_a_difference_is_located() {
        let (a, b) = (Trace::with_limit(2), Trace::with_limit(2));
        for trace in [&a, &b] {
            trace.record(at(1), Level::Info, "n0 is Leader in t1".into());
            trace.record(at(2), Level::Debug, "n1 applied #1".into());
        }
        a.record(at(3), Level::Info, "crash n0".into());
        b.record(at(3), Level::Info, "crash n1".into());
        let (a, b) = (a.take(), b.take());
        assert_eq!(a.events, b.events, "only two events are kept");
        assert_eq!((a.dropped, b.dropped), (1, 1));
        assert_ne!(a.digest, b.digest, "the dropped event is still digested");
        assert_eq!(a.first_difference(&b), None);
        assert!(a
            .render(Level::Info)
            .contains("[0.001000s] n0 is Leader in t1"));
        assert!(!a.render(Level::Info).contains("applied"));
    }

    #[test]
    fn the_first_difference_is_the_first_unequal_or_missing_event() {
        let (a, b) = (Trace::with_limit(10), Trace::with_limit(10));
        a.record(at(1), Level::Info, "x".into());
        b.record(at(1), Level::Info, "x".into());
        b.record(at(2), Level::Info, "y".into());
        assert_eq!(a.snapshot().first_difference(&b.snapshot()), Some(1));
        a.record(at(2), Level::Info, "z".into());
        assert_eq!(a.snapshot().first_difference(&b.snapshot()), Some(1));
    }
}
