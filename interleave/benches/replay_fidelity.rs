//! How often a failing seed's replay reproduces it, on each engine.
//!
//! For each variant below, seeds 1.. are run until `PER_VARIANT` fail (or the budget ends).
//! - deterministic: each failing seed's printed replay line is run in a fresh process
//!   (`interleave replay ... --expect DIGEST --json`); it reproduces when the violation and the
//!   trace digest are the same;
//! - OS threads: each failing seed is run again `ATTEMPTS` times; an attempt reproduces when it
//!   fails with the same violation text.
//!
//! `cargo bench -p interleave --bench replay_fidelity`; with `--test` (as `.ci/run` runs it) one
//! variant and one failing seed per engine.

use interleave::engines::{run_seed, Watchdog};
use runspec::{RunSpec, SchedulerKind};
use std::process::Command;
use std::time::Duration;

const PER_VARIANT: usize = 5;
const ATTEMPTS: usize = 5;

/// (variant, chaos flags, scheduler of the deterministic engine, seed budget)
const VARIANTS: [(&str, &str, SchedulerKind, u64); 9] = [
    (
        "commit-old-term",
        "--mutation commit-old-term",
        SchedulerKind::Random,
        400,
    ),
    (
        "vote-without-up-to-date-check",
        "--mutation vote-without-up-to-date-check",
        SchedulerKind::Random,
        100,
    ),
    (
        "truncate-on-matching-heartbeat",
        "--mutation truncate-on-matching-heartbeat",
        SchedulerKind::Random,
        100,
    ),
    (
        "no-step-down-on-higher-term",
        "--mutation no-step-down-on-higher-term",
        SchedulerKind::Random,
        100,
    ),
    (
        "reply-before-persist",
        "--mutation reply-before-persist",
        SchedulerKind::Random,
        200,
    ),
    (
        "lost-applier-wakeup",
        "--mutation lost-applier-wakeup",
        SchedulerKind::Random,
        100,
    ),
    (
        "ticker-check-then-act",
        "--mutation ticker-check-then-act",
        SchedulerKind::Random,
        400,
    ),
    (
        "sleep-in-persist",
        "--mutation sleep-in-persist",
        SchedulerKind::Pct,
        100,
    ),
    (
        "unsafe-local-reads",
        "--workload kv --read-mode unsafe-local",
        SchedulerKind::Random,
        20,
    ),
];

/// The OS-thread runs' watchdog: a hang is a failure after 5 s.
const WATCHDOG: Watchdog = Watchdog(Duration::from_secs(5));

fn main() {
    // Failing runs are counted, not shown: their panics would bury the table.
    std::panic::set_hook(Box::new(|_| {}));
    let test_mode = std::env::args().any(|arg| arg == "--test");
    let per_variant = if test_mode { 1 } else { PER_VARIANT };
    let variants = if test_mode {
        &VARIANTS[1..2]
    } else {
        &VARIANTS[..]
    };
    let (mut det_total, mut det_same, mut os_total, mut os_same, mut os_failed) = (0, 0, 0, 0, 0);
    println!("| variant | deterministic: failing seeds, fresh-process replays identical | OS threads: failing seeds, reruns with the same violation (any failure) |");
    println!("| --- | --- | --- |");
    for &(name, flags, scheduler, budget) in variants {
        let workload = RunSpec::parse_flags(0, flags).expect("the variants' flags parse");
        // Deterministic: find failing seeds, replay each in a fresh process.
        let det = RunSpec {
            scheduler,
            ..workload.clone()
        };
        let (mut found, mut identical) = (0, 0);
        for seed in 1..=budget {
            if found == per_variant {
                break;
            }
            let spec = det.with_seed(seed);
            let outcome = run_seed(&spec, WATCHDOG);
            let Some(violation) = outcome.failure else {
                continue;
            };
            found += 1;
            // The replay line's own words, as `chaos` prints them.
            let (seed_text, digest, line) = (
                seed.to_string(),
                outcome.trace.digest.to_string(),
                spec.flags(),
            );
            let mut args = vec!["replay", "--seed", &seed_text];
            args.extend(line.split_whitespace());
            args.extend(["--expect", &digest, "--json"]);
            let output = Command::new(env!("CARGO_BIN_EXE_interleave"))
                .args(&args)
                .output()
                .expect("run interleave replay");
            let replayed: serde_json::Value =
                serde_json::from_slice(&output.stdout).expect("replay --json prints one object");
            if replayed["matches_expected"] == true && replayed["violation"] == violation.as_str() {
                identical += 1;
            } else {
                eprintln!("{name} seed {seed}: replay differs: {replayed}");
            }
        }
        det_total += found;
        det_same += identical;
        // OS threads: find failing seeds, rerun each ATTEMPTS times.
        let os = RunSpec {
            scheduler: SchedulerKind::Os,
            ..workload
        };
        let (mut os_found, mut same, mut failed) = (0, 0, 0);
        for seed in 1..=budget {
            if os_found == per_variant {
                break;
            }
            let Some(violation) = run_seed(&os.with_seed(seed), WATCHDOG).failure else {
                continue;
            };
            os_found += 1;
            for _ in 0..if test_mode { 1 } else { ATTEMPTS } {
                let again = run_seed(&os.with_seed(seed), WATCHDOG).failure;
                failed += usize::from(again.is_some());
                same += usize::from(again.as_deref() == Some(violation.as_str()));
            }
        }
        let attempts = os_found * if test_mode { 1 } else { ATTEMPTS };
        os_total += attempts;
        os_same += same;
        os_failed += failed;
        println!(
            "| `{name}` | {found} seeds, {identical} of {found} identical | {os_found} seeds, {same} of {attempts} ({failed}) |"
        );
    }
    println!(
        "\ndeterministic: {det_same} of {det_total} replays identical; OS threads: {os_same} of {os_total} reruns gave the same violation ({os_failed} failed at all)"
    );
}
