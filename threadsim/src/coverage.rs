//! Coverage points: named states a run should reach now and then (Antithesis's `reachable` and
//! `sometimes` assertions, FoundationDB's rare-coverage probes). Code marks a point with
//! [`reached`] where the state holds; a simulation counts the points its run reached
//! ([`crate::Run::coverage`]), and a tool running many seeds says which points no seed reached,
//! so "the run explored it" is a figure, not a hope.
//!
//! Counting is invisible to the run: no lock of the sync facade, no thread switch, no random
//! draw, so a run with coverage counted is the run without. Outside a simulation (a production
//! server, a unit test) [`reached`] finds no run and does nothing.

use crate::context;
pub use crate::context::Counts;

/// Marks `point` reached in the current run (nothing outside a run).
pub fn reached(point: &'static str) {
    context::with(|run| *context::lock(&run.coverage).entry(point).or_insert(0) += 1);
}

/// Marks `point` reached if `condition` holds; returns the condition (Antithesis's
/// `sometimes`: the point says the condition was true at least once).
pub fn sometimes(condition: bool, point: &'static str) -> bool {
    if condition {
        reached(point);
    }
    condition
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::context::{enter, RunContext};
    use std::sync::Arc;

    #[test]
    fn points_are_counted_inside_a_run_only() {
        reached("outside");
        let run = Arc::new(RunContext::default());
        {
            let _entered = enter(Some(run.clone()));
            reached("inside");
            reached("inside");
            assert!(sometimes(true, "true"));
            assert!(!sometimes(false, "false"));
        }
        reached("after");
        let counts = context::lock(&run.coverage).clone();
        assert_eq!(counts, Counts::from([("inside", 2), ("true", 1)]));
    }
}
