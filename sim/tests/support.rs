//! Helpers shared by the simulation tests.

use node::{Command, NodeId};
use sim::Cluster;
use std::time::Duration;
use threadsim::clock::spawn;

/// The default seeds each scenario runs (`INTERLEAVE_SEED` replaces them with one).
pub const SEEDS: &[u64] = &[1, 2, 3];

/// A distinct command for test value `value`.
pub fn cmd(value: u64) -> Command {
    Command::from_text(&value.to_string())
}

/// Twice the longest election timeout: long enough for any election to finish.
pub const ELECTION_SETTLE: Duration = Duration::from_millis(1200);

/// Calls `start` from `threads` concurrent clock-registered threads and returns what each got.
pub fn concurrent_starts(
    cluster: &std::sync::Arc<Cluster>,
    leader: NodeId,
    threads: u64,
) -> Vec<Option<u64>> {
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let clock = cluster.clock().clone();
            let cluster = cluster.clone();
            spawn(&clock, format!("client-{i}"), move || {
                cluster
                    .start(leader, cmd(100 + i))
                    .map(|(index, _)| index.0)
            })
        })
        .collect();
    handles.into_iter().map(|handle| handle.join()).collect()
}

/// Starts a real-time stopwatch, for tests that report how long a check took (never for
/// simulated time).
#[allow(clippy::disallowed_methods)]
pub fn stopwatch() -> std::time::Instant {
    std::time::Instant::now()
}
