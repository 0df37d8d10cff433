//! Abandoning the runs under way: a command told to stop (Ctrl-C, SIGTERM) must not wait for a
//! long seed to end. [`abandon_runs`] is one atomic store, so a signal handler may call it; from
//! then on every controlled run stops at its next scheduling decision, and every run on OS
//! threads at its watchdog's next look (every 100 ms), each failing with [`ABANDONED`], which
//! says nothing of the seed: the caller counts it as not run.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set once the runs under way are to stop.
static ABANDONED_RUNS: AtomicBool = AtomicBool::new(false);

/// The failure of a run stopped by [`abandon_runs`].
pub const ABANDONED: &str =
    "abandoned: the run was stopped before its end (Ctrl-C or SIGTERM); it says nothing of the seed";

/// Stops every run under way, and every run started later, in this process (async-signal-safe).
pub fn abandon_runs() {
    ABANDONED_RUNS.store(true, Ordering::SeqCst);
}

/// Whether [`abandon_runs`] was called.
pub fn runs_abandoned() -> bool {
    ABANDONED_RUNS.load(Ordering::Relaxed)
}

/// Whether a run's failure `message` is [`ABANDONED`]: not a finding.
pub fn is_abandoned(message: &str) -> bool {
    message == ABANDONED
}
