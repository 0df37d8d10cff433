//! Shrinking, end to end through the command line: `interleave chaos` shrinks its first failure
//! and writes the shrunk schedule beside the full one; the shrunk schedule fails again when
//! replayed, passes on the correct build (the bug, not the schedule, causes the failure), and
//! loses its failure when any one of its events is removed (it is 1-minimal, as reported); a
//! schedule that no longer fails is not shrunk, nor reported minimal.
#![cfg(not(any(loom, shuttle)))]

use sim::schedule::Schedule;
use std::path::{Path, PathBuf};

mod support;
use support::interleave;

fn path(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

fn read(file: &Path) -> Schedule {
    std::fs::read_to_string(file)
        .expect("schedule written")
        .parse()
        .expect("a schedule interleave wrote reads back")
}

/// The violation's kind as a replay prints it: the verdict line's text up to the first `:`
/// after `FAILED: `.
fn replay_verdict(schedule: &Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["replay", "--schedule", path(schedule)];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = interleave(&args);
    let verdict = stdout
        .lines()
        .find(|line| line.contains(" FAILED: ") || line.contains(": nothing found"))
        .unwrap_or_else(|| panic!("no verdict line: {stdout}{stderr}"))
        .to_string();
    (code, verdict)
}

fn kind(verdict: &str) -> String {
    let failure = verdict.split(" FAILED: ").nth(1).unwrap_or_default();
    sim::shrink::violation_kind(failure)
}

#[test]
fn chaos_shrinks_its_first_failure_to_a_minimal_schedule_that_fails_only_with_the_bug() {
    let out: PathBuf =
        std::env::temp_dir().join(format!("interleave-shrink-{}", std::process::id()));
    let (code, stdout, stderr) = interleave(&[
        "chaos",
        "--mutation",
        "vote-without-up-to-date-check",
        "--seeds",
        "10",
        "--workers",
        "1",
        "--out",
        path(&out),
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains(", 1-minimal (no single event can go); replay verified: it fails with"),
        "{stdout}"
    );
    let line = stdout
        .lines()
        .find(|line| line.contains("replay --schedule"))
        .unwrap_or_else(|| panic!("no replay line for the shrunk schedule: {stdout}"));
    let shrunk_file = PathBuf::from(line.rsplit(' ').next().expect("a path"));
    let folder = shrunk_file.parent().expect("in the failure folder");
    let full = read(&folder.join("schedule.full.txt"));
    let shrunk = read(&shrunk_file);
    assert!(shrunk.removable() < full.removable() && shrunk.removable() <= 10);
    // The seed is the run's own, or one of the others a stuck removal is tried with.
    let seed_of = |schedule: &Schedule| -> u64 {
        schedule
            .note("seed")
            .expect("a seed note")
            .parse()
            .expect("a number")
    };
    let (full_seed, shrunk_seed) = (seed_of(&full), seed_of(&shrunk));
    assert!(
        shrunk_seed >= full_seed && (shrunk_seed - full_seed) % 1_000_000 == 0,
        "seed {shrunk_seed} is not a reroll of {full_seed}"
    );

    // Replayed, the shrunk schedule fails the same way; on the correct build it passes.
    let (code, verdict) = replay_verdict(&shrunk_file, &[]);
    assert_eq!(code, 1, "{verdict}");
    let violation = kind(&verdict);
    assert_eq!(
        violation,
        sim::shrink::violation_kind(shrunk.note("violation").expect("noted"))
    );
    let (code, verdict) = replay_verdict(&shrunk_file, &["--no-mutations"]);
    assert_eq!(
        code, 0,
        "the correct build fails the shrunk schedule: {verdict}"
    );

    // 1-minimal, as reported: without any one of its events it does not fail that way.
    let mut no_longer_fails = None;
    for index in 0..shrunk.removable() {
        let mut without = shrunk.clone();
        without.events.remove(index);
        let file = folder.join(format!("without-{index}.txt"));
        std::fs::write(&file, without.to_string()).expect("write");
        let (_, verdict) = replay_verdict(&file, &[]);
        assert_ne!(
            kind(&verdict),
            violation,
            "still fails without event {index}, yet was reported minimal"
        );
        no_longer_fails.get_or_insert(file);
    }

    // A schedule that no longer fails is not shrunk, let alone reported minimal.
    let passing = no_longer_fails.expect("at least one event");
    let (code, stdout, _) = interleave(&["shrink", path(&passing)]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("does not fail: nothing to shrink"),
        "{stdout}"
    );
    assert!(!stdout.contains("minimal"), "{stdout}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_schedule_naming_a_node_the_cluster_lacks_is_refused_clearly() {
    let file = std::env::temp_dir().join(format!("interleave-stray-{}.txt", std::process::id()));
    std::fs::write(
        &file,
        "# interleave schedule, version 1\n# seed: 3\n# flags: --nodes 3\n1.000000s crash n4\n",
    )
    .expect("write");
    for command in ["replay", "shrink"] {
        let args: Vec<&str> = match command {
            "replay" => vec!["replay", "--schedule", path(&file)],
            _ => vec!["shrink", path(&file)],
        };
        let (code, stdout, stderr) = interleave(&args);
        assert_eq!(code, 2, "{command}: {stdout}{stderr}");
        assert!(
            stderr.contains("crash n4: the cluster has 3 nodes, n0 to n2, not n4"),
            "{command}: {stderr}"
        );
    }
    let _ = std::fs::remove_file(&file);
}

#[test]
fn a_folder_without_a_schedule_is_refused_clearly() {
    let folder = std::env::temp_dir().join(format!("interleave-empty-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("create");
    let (code, stdout, stderr) = interleave(&["shrink", path(&folder)]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("is not a failure folder: it has no schedule.full.txt"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn a_schedule_whose_events_come_faster_than_the_cluster_carries_them_out_still_runs() {
    // A crash joins the node's threads, which takes simulated time: the restart and the crashes
    // after it are overdue when the follower looks again, and come together.
    let file = std::env::temp_dir().join(format!("interleave-dense-{}.txt", std::process::id()));
    std::fs::write(
        &file,
        "# interleave schedule, version 1\n# seed: 5\n# flags: --nodes 3\n\
         1.000000s crash n0\n1.000001s restart n0\n1.000002s crash n1\n1.000003s crash n2\n\
         1.000004s restart n1\n2.000000s end\n",
    )
    .expect("write");
    let (code, stdout, stderr) = interleave(&["replay", "--schedule", path(&file)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("nothing found"), "{stdout}");
    let _ = std::fs::remove_file(&file);
}
