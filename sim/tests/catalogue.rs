//! The catalogue of broken variants (`sim::mutants::catalogue`) is the one list of which detector
//! kills which variant: every variant is in it, every in-process detector it names kills its
//! variant for the reason the variant models, every loom and shuttle test it names exists, and
//! the kill matrix in the docs has a row for each. (The chaos column is checked where the
//! deterministic engine is, in `interleave/tests/catalogue.rs`; `interleave mutants` runs it
//! all.)

use node::Mutation;
use sim::mutants::{catalogue, run_detector, Broken, Cell, Detector, Sweep};
use sim::simulate;
use std::collections::BTreeSet;

#[test]
fn every_broken_variant_is_in_the_catalogue_once() {
    let names: Vec<&str> = catalogue().iter().map(|v| v.broken.name()).collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "a variant listed twice: {names:?}"
    );
    for mutation in Mutation::ALL {
        assert!(
            unique.contains(mutation.name()),
            "{mutation} is not in the catalogue"
        );
    }
    assert!(unique.contains(Broken::UnsafeLocalReads.name()));
    for variant in catalogue() {
        assert!(
            !variant.detectors.is_empty(),
            "{} has no detector",
            variant.broken.name()
        );
        assert!(
            variant
                .detectors
                .iter()
                .any(|d| matches!(d, Detector::Chaos { .. })),
            "{} has no chaos detector (every variant says whether chaos finds it)",
            variant.broken.name()
        );
    }
}

#[test]
fn every_targeted_detector_kills_its_variant_for_the_reason_it_models() {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for variant in catalogue() {
        for detector in &variant.detectors {
            if !matches!(
                detector,
                Detector::Scenario { .. }
                    | Detector::Kv { .. }
                    | Detector::LeaseHunt { .. }
                    | Detector::SessionChurn { .. }
                    | Detector::Transactions { .. }
            ) {
                continue;
            }
            let cell = run_detector(detector, Some(variant.broken), &workspace, Sweep::FirstKill);
            let Cell::Killed { after, how, .. } = cell else {
                panic!(
                    "{} survived its detector {detector:?}: {cell:?}",
                    variant.broken.name()
                );
            };
            eprintln!("{}: killed on seed {after}: {how}", variant.broken.name());
            assert!(
                variant.recognises(&how),
                "{} was killed by a different failure: {how}",
                variant.broken.name()
            );
        }
    }
}

#[test]
fn the_targeted_scenarios_pass_the_correct_build_on_their_first_seeds() {
    let mut seen = BTreeSet::new();
    for variant in catalogue() {
        for detector in &variant.detectors {
            let Detector::Scenario { name, run, .. } = *detector else {
                continue;
            };
            if !seen.insert(name) {
                continue;
            }
            for seed in 1..=3 {
                let result = simulate(seed, move |sim| run(sim, &node::MutationSet::default()));
                if let Err(failure) = result {
                    panic!(
                        "the correct build fails {name} on seed {seed}: {}",
                        failure.message
                    );
                }
            }
        }
    }
}

#[test]
fn every_loom_and_shuttle_test_the_catalogue_names_exists() {
    let sources = [
        (
            "apply_path",
            include_str!("../../loom-tests/tests/apply_path.rs"),
        ),
        (
            "persist_path",
            include_str!("../../loom-tests/tests/persist_path.rs"),
        ),
        (
            "ticker_path",
            include_str!("../../loom-tests/tests/ticker_path.rs"),
        ),
        (
            "snapshot_path",
            include_str!("../../loom-tests/tests/snapshot_path.rs"),
        ),
    ];
    let shuttle = include_str!("../../shuttle-tests/tests/cluster.rs");
    for variant in catalogue() {
        for detector in &variant.detectors {
            match *detector {
                Detector::Loom { binary, test } => {
                    let (_, source) = sources
                        .iter()
                        .find(|(name, _)| *name == binary)
                        .unwrap_or_else(|| panic!("no loom binary {binary}"));
                    assert!(
                        source.contains(&format!("fn {test}()")),
                        "loom-tests/tests/{binary}.rs has no test {test}"
                    );
                }
                Detector::Shuttle { test } => assert!(
                    shuttle.contains(&format!("fn {test}()")),
                    "shuttle-tests/tests/cluster.rs has no test {test}"
                ),
                _ => {}
            }
        }
    }
}

#[test]
fn the_kill_matrix_in_the_docs_has_a_row_for_every_variant_and_no_other() {
    let docs = include_str!("../../docs/faults.md");
    let start = docs
        .find("| variant | the real bug | invariants (sim)")
        .expect("the kill matrix in docs/faults.md");
    let rows: BTreeSet<&str> = docs[start..]
        .lines()
        .take_while(|line| line.starts_with('|'))
        .filter_map(|line| line.strip_prefix("| `")?.split('`').next())
        .collect();
    let catalogued: BTreeSet<&str> = catalogue().iter().map(|v| v.broken.name()).collect();
    assert_eq!(
        rows, catalogued,
        "docs/faults.md's kill matrix differs from the catalogue: regenerate it with \
         `cargo run --release -p interleave -- mutants`"
    );
}
