//! The chaos column of the catalogue, on the deterministic engine: chaos kills, within its seed
//! budget and for the reason the variant models, every variant the catalogue says it kills; and
//! it passes the correct build on the first seeds of each workload the catalogue uses.
#![cfg(not(any(loom, shuttle)))]

use interleave::engines::{run_seed, Watchdog};
use sim::mutants::{catalogue, Detector};

#[test]
fn chaos_kills_every_variant_the_catalogue_says_it_kills() {
    for variant in catalogue() {
        for detector in &variant.detectors {
            let Detector::Chaos {
                workload,
                seeds,
                kills: true,
            } = *detector
            else {
                continue;
            };
            let args = workload.spec(Some(variant.broken));
            let killed = (1..=seeds).find_map(|seed| {
                run_seed(&args.with_seed(seed), Watchdog::default())
                    .failure
                    .map(|f| (seed, f))
            });
            let Some((seed, failure)) = killed else {
                panic!("{} survived {seeds} chaos seeds", variant.broken.name());
            };
            let first = failure.lines().next().unwrap_or_default();
            eprintln!("{}: chaos seed {seed}: {first}", variant.broken.name());
            assert!(
                variant.recognises(first),
                "{} was killed by a different failure: {first}",
                variant.broken.name()
            );
        }
    }
}

#[test]
fn chaos_passes_the_correct_build_on_every_workload_the_catalogue_uses() {
    let mut workloads = Vec::new();
    for variant in catalogue() {
        for detector in &variant.detectors {
            if let Detector::Chaos { workload, .. } = *detector {
                if !workloads.contains(&workload) {
                    workloads.push(workload);
                }
            }
        }
    }
    assert!(
        workloads.len() >= 4,
        "raft and three read modes: {workloads:?}"
    );
    for workload in workloads {
        let args = workload.spec(None);
        for seed in 1..=2 {
            let outcome = run_seed(&args.with_seed(seed), Watchdog::default());
            assert_eq!(outcome.failure, None, "{workload:?} seed {seed}");
        }
    }
}
