//! Support for the loom models: the node a model runs, and running a model that must deadlock in a
//! child process. The models use `threadsim::ManualClock` (a clock loom can run) and
//! `node::RecordingPersister` (every save kept, so a crash can be taken at any point).
//!
//! The models themselves are in `tests/`, one binary each (a loom deadlock aborts its whole
//! binary). They only build and run with `RUSTFLAGS="--cfg loom"`; without it this crate is
//! empty.
#![deny(missing_docs)]

/// Runs one `#[ignore]`d test of this binary in a child process (a loom deadlock aborts the
/// whole process): see [`threadsim::isolated::run_ignored_test`].
pub use threadsim::isolated::run_ignored_test as run_isolated;

/// Runs the broken variant's model `child` (an `#[ignore]`d test of this binary) in a child
/// process and requires loom to reject it, with `reason` in its output (a variant that fails
/// for another reason is not shown caught).
pub fn assert_rejected(child: &str, reason: &str) {
    let (failed, output) = run_isolated(child);
    assert!(failed, "{child} survived every interleaving:\n{output}");
    assert!(
        output.contains(reason),
        "{child} failed, but not with {reason:?}:\n{output}"
    );
}

/// The preemption bound of a model: `LOOM_MAX_PREEMPTIONS` if set, else `default`.
pub fn preemption_bound(default: usize) -> usize {
    std::env::var("LOOM_MAX_PREEMPTIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

#[cfg(loom)]
mod model_node;
#[cfg(loom)]
pub use model_node::{model_node, one_slot_follower, panic_message, NoNetwork};
