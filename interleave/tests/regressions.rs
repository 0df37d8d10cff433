//! The kept seeds of `regressions.txt`, replayed on today's build: a fixed bug must stay fixed
//! (`passes`), and a broken variant must keep failing on the seed that once caught it, the same
//! way twice (`fails`). See `interleave::regressions` for the file's format.
#![cfg(not(any(loom, shuttle)))]

use interleave::engines::{run_seed, Watchdog};
use interleave::regressions::{parse, Expect};

#[test]
fn every_kept_seed_does_what_the_regressions_file_says() {
    let text = include_str!("regressions.txt");
    let kept = parse(text).unwrap_or_else(|error| panic!("regressions.txt: {error}"));
    assert!(kept.len() >= 4, "the file lost its seeds");
    let mut wrong = Vec::new();
    for regression in &kept {
        let outcome = run_seed(&regression.spec, Watchdog::default());
        let line = format!(
            "regressions.txt:{} (seed {})",
            regression.line, regression.spec.seed
        );
        match (regression.expect, &outcome.failure) {
            (Expect::Passes, None) => {}
            (Expect::Passes, Some(failure)) => wrong.push(format!("{line} fails again: {failure}")),
            (Expect::Fails, None) => wrong.push(format!("{line} no longer fails")),
            (Expect::Fails, Some(_)) => {
                let again = run_seed(&regression.spec, Watchdog::default());
                if again.fingerprint() != outcome.fingerprint() {
                    wrong.push(format!("{line} fails differently when replayed"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
