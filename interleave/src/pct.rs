//! Where PCT's priority changes may fall: the number of scheduling decisions a run of a workload
//! is expected to make (PCT picks its change points uniformly below it).
//!
//! Measured with the random scheduler (`interleave replay --seed N`, which prints the count) on
//! seeds 1-3: the raft workload makes about 28 x nodes^2 decisions per round (3 nodes 58-74k,
//! 5 nodes 140-163k, 7 nodes 245-296k for 200 rounds); the key-value workload about
//! 7,500 + 4,500 x nodes per simulated second (3 nodes 550-600k, 5 nodes 810-820k for 27 s). An
//! estimate off by a factor of two only moves where the change points fall.

use runspec::{RunSpec, Workload};

/// The expected number of scheduling decisions of one run of `workload`.
pub fn horizon(workload: &RunSpec) -> u64 {
    let nodes = u64::from(workload.nodes);
    match workload.workload {
        Workload::Raft => {
            let rounds = u64::from(workload.rounds);
            // A round lasts 275 ms on average; --duration may end the rounds early.
            let rounds = workload.duration.map_or(rounds, |duration| {
                rounds.min((duration.as_millis() as u64 / 275).max(1))
            });
            28 * nodes * nodes * rounds
        }
        Workload::Kv | Workload::ListAppend => {
            let seconds = workload
                .duration
                .map_or(27, |duration| duration.as_secs().max(1));
            (7_500 + 4_500 * nodes) * seconds
        }
    }
}
