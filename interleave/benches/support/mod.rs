//! What the benchmarks that time whole runs share.

use interleave::engines::{run_seed, Watchdog};
use runspec::RunSpec;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Runs `seeds` (`spec_of` says each seed's run) on `workers` threads; returns the simulated
/// time covered and the wall time. A failing seed panics: a speed is measured on passing runs.
pub fn run_chunk(
    spec_of: impl Fn(u64) -> RunSpec + Sync,
    seeds: &[u64],
    workers: usize,
) -> (Duration, Duration) {
    let next = AtomicU64::new(0);
    let simulated_micros = AtomicU64::new(0);
    #[allow(clippy::disallowed_methods)] // wall time is what is measured
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::SeqCst) as usize;
                let Some(&seed) = seeds.get(index) else {
                    return;
                };
                let outcome = run_seed(&spec_of(seed), Watchdog::default());
                assert!(
                    outcome.failure.is_none(),
                    "seed {seed} failed: {:?}",
                    outcome.failure
                );
                let simulated = outcome.figures.map_or(Duration::ZERO, |f| f.simulated);
                simulated_micros.fetch_add(simulated.as_micros() as u64, Ordering::SeqCst);
            });
        }
    });
    (
        Duration::from_micros(simulated_micros.load(Ordering::SeqCst)),
        started.elapsed(),
    )
}
