//! Builds without shuttle have no controlled executions: every thread is a real thread.

use crate::schedule::{ScheduleSummary, Scheduler};

/// This build cannot run controlled executions.
pub const AVAILABLE: bool = false;

/// Nothing to note outside a controlled execution.
pub(crate) struct WaitNote;

/// Does nothing (and never calls `what`).
#[inline(always)]
pub(crate) fn note_wait(_what: impl FnOnce() -> super::Waiting) -> WaitNote {
    WaitNote
}

/// Does nothing: only a controlled execution's scheduler counts trace events.
#[inline(always)]
pub(crate) fn note_traced() {}

/// Does nothing: only a controlled execution's scheduler wants to know the simulated time.
#[inline(always)]
pub(crate) fn note_time(_now: crate::Instant) {}

/// Refuses: a controlled execution needs the shuttle build.
pub(crate) fn run<T, F>(
    _seed: u64,
    _scheduler: Scheduler,
    _max_steps: u64,
    _livelock_switches: u64,
    _body: F,
) -> (Result<T, String>, ScheduleSummary)
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    (
        Err("this build has no controlled scheduler: build with --cfg shuttle (the deterministic engine does)".into()),
        ScheduleSummary::default(),
    )
}
