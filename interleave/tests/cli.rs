//! The `interleave` command line: exit statuses, JSON output, clear usage errors.
#![cfg(not(any(loom, shuttle)))]

mod support;
use support::interleave;

#[test]
fn a_clean_chaos_run_exits_zero_with_one_json_object_per_seed() {
    let (code, stdout, _) = interleave(&["chaos", "--seeds", "2", "--rounds", "20", "--json"]);
    assert_eq!(code, 0, "{stdout}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[2]["summary"]["seeds"], 2);
    assert!(lines[..2].iter().all(|l| l["verdict"] == "passed"));
}

#[test]
fn a_broken_node_exits_one_and_prints_a_replay_line() {
    let out = std::env::temp_dir().join(format!("interleave-broken-{}", std::process::id()));
    let (code, stdout, _) = interleave(&[
        "chaos",
        "--seeds",
        "10",
        "--mutation",
        "vote-without-up-to-date-check",
        "--workers",
        "1",
        "--out",
        out.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("FAILED seed")
            && stdout.contains(
                "replay: cargo run --release -p interleave --features mutations -- replay --seed"
            )
            && stdout.contains("replay verified: rerun once, the same violation"),
        "{stdout}"
    );
    // A run stopped by its violation has no figures; the summary says they are left out.
    assert!(
        stdout.contains("stopped at their violation: their figures are not in the totals"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_swarm_run_draws_each_seeds_configuration_and_prints_it() {
    let (code, stdout, stderr) = interleave(&[
        "chaos", "--swarm", "--seeds", "10", "--rounds", "20", "--json",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let flags: std::collections::BTreeSet<&str> = lines[..10]
        .iter()
        .map(|line| line["flags"].as_str().expect("each seed's flags"))
        .collect();
    assert!(flags.len() > 5, "the seeds drew alike: {flags:?}");
    let summary = &lines[10]["summary"];
    assert_eq!(summary["run"]["swarm"], true, "{stdout}");
    // Every tenth passing seed is run twice and must be the same run: here seed 10.
    assert_eq!(summary["self_checked"], 1, "{stdout}");
    assert_eq!(
        summary["nondeterministic"],
        serde_json::json!([]),
        "{stdout}"
    );
}

/// The seeds of a steered run on `workers` workers: each seed's flags and trace digest, and the
/// summary's steering figures.
fn steered(workers: &str) -> (Vec<(u64, String, String)>, serde_json::Value) {
    let (code, stdout, stderr) = interleave(&[
        "chaos",
        "--steer",
        "--seeds",
        "40",
        "--rounds",
        "20",
        "--json",
        "--workers",
        workers,
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let lines: Vec<serde_json::Value> = (stdout.lines())
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let (summary, seeds) = lines.split_last().expect("a summary");
    let mut runs: Vec<(u64, String, String)> = (seeds.iter())
        .map(|l| {
            let seed = l["seed"].as_u64().expect("seed");
            let text = |key: &str| l[key].as_str().expect(key).to_string();
            (seed, text("flags"), text("trace_digest"))
        })
        .collect();
    runs.sort();
    (runs, summary["summary"]["steering"].clone())
}

#[test]
fn a_steered_run_mutates_kept_runs_and_is_the_same_runs_on_any_number_of_workers() {
    let (one, steering) = steered("1");
    assert_eq!(one.len(), 40);
    assert_eq!(steering["runs"], 40, "{steering}");
    assert!(steering["mutants"].as_u64() > Some(0), "{steering}");
    let (two, steering_on_two) = steered("2");
    assert_eq!(one, two);
    assert_eq!(steering, steering_on_two);
}

#[test]
fn version_prints_the_crate_version_and_exits_zero() {
    let (code, stdout, stderr) = interleave(&["--version"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.trim(),
        format!("interleave {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn usage_errors_exit_two_without_a_panic() {
    for args in [
        &["chaos", "--nodes", "1"][..],
        &["chaos", "--nodes", "10"],
        &["chaos", "--mutation", "bogus"],
        &["chaos", "--swarm", "--nodes", "3"],
        &["chaos", "--swarm", "--no-crashes"],
        &["chaos", "--steer", "--fixed"],
        &["chaos", "--steer", "--nodes", "3"],
        &["chaos", "--steer", "--shard", "1/2"],
        &["frobnicate"],
    ] {
        let (code, _, stderr) = interleave(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// `interleave mutants` on `commit-old-term` alone, simulation column only, as JSON (`extra`
/// flags added); panics unless it exits 0.
fn commit_old_term_matrix(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "mutants",
        "--only",
        "commit-old-term",
        "--skip-loom",
        "--skip-shuttle",
        "--skip-correct",
        "--json",
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = interleave(&args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    serde_json::from_str(stdout.trim()).expect("JSON")
}

#[test]
fn mutants_every_seed_counts_the_seeds_that_kill_a_variant() {
    let summary = commit_old_term_matrix(&["--every-seed"]);
    let counted = &summary["rows"][0]["cells"][0]["seeds_killing"];
    assert_eq!(counted["tried"], 20, "{summary}");
    assert!(
        counted["killing"].as_u64().is_some_and(|k| k >= 1),
        "{summary}"
    );
}

#[test]
fn mutants_prints_a_kill_matrix_row_per_variant_and_refuses_unknown_names() {
    let junit = std::env::temp_dir().join(format!("interleave-mutants-{}.xml", std::process::id()));
    let summary = commit_old_term_matrix(&["--junit", junit.to_str().expect("UTF-8 path")]);
    let xml = std::fs::read_to_string(&junit).expect("the JUnit report");
    assert!(
        xml.contains(r#"failures="0""#) && xml.contains("commit-old-term / invariants (sim)"),
        "{xml}"
    );
    let _ = std::fs::remove_file(&junit);
    assert_eq!(summary["rows"][0]["variant"], "commit-old-term");
    assert_eq!(summary["rows"][0]["cells"][0]["killed"], true);
    assert_eq!(
        summary["rows"][0]["cells"][0]["seeds_killing"],
        serde_json::Value::Null
    );
    assert_eq!(summary["survivors"].as_array().map(Vec::len), Some(0));
    let (code, _, stderr) = interleave(&["mutants", "--only", "no-such-bug"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no-such-bug") && stderr.contains("possible values"),
        "{stderr}"
    );
}

#[test]
fn a_failing_kv_seed_leaves_its_history_counterexample_and_trace_in_the_output_folder() {
    let out = std::env::temp_dir().join(format!("interleave-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let (code, stdout, stderr) = interleave(&[
        "chaos",
        "--workload",
        "kv",
        "--read-mode",
        "unsafe-local",
        "--seeds",
        "1",
        "--fail-fast",
        "--no-shrink",
        "--out",
        out.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("NotLinearizable"), "{stdout}");
    // The run went to its end, so its figures are in the summary (they used to read 0).
    assert!(
        !stdout.contains(" 0 leaders elected") && !stdout.contains("stopped at their violation"),
        "{stdout}"
    );
    let seed = out.join("seed-1");
    for file in [
        "violation.txt",
        "history.jsonl",
        "history.html",
        "trace.log",
        "run.txt",
        "schedule.full.txt",
    ] {
        assert!(seed.join(file).exists(), "{file} missing: {stdout}");
    }
    let trace = std::fs::read_to_string(seed.join("trace.log")).expect("trace");
    assert!(trace.contains("partition"), "{trace}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn an_impossible_duration_is_a_usage_error() {
    let (code, _, stderr) = interleave(&["chaos", "--duration", "0"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--duration"), "{stderr}");
}

/// The arguments of a printed replay line (everything after `cargo run ... --`).
fn replay_arguments(line: &str) -> Vec<String> {
    let (_, arguments) = line.split_once(" -- ").expect("a cargo run line");
    arguments.split_whitespace().map(str::to_string).collect()
}

/// For several broken variants: deterministic chaos finds a failing seed and verifies its replay;
/// the printed replay line, run twice in fresh processes, gives the same violation and the same
/// trace digest, and says it is the run that found it.
#[test]
fn deterministic_failures_replay_exactly_in_fresh_processes() {
    let variants: [&[&str]; 5] = [
        &["--mutation", "commit-old-term", "--fixed"],
        &["--mutation", "no-step-down-on-higher-term", "--swarm"],
        &["--mutation", "vote-without-up-to-date-check"],
        &["--mutation", "sleep-in-persist", "--scheduler", "pct"],
        &["--workload", "kv", "--read-mode", "unsafe-local"],
    ];
    let out = std::env::temp_dir().join(format!("interleave-exact-{}", std::process::id()));
    for variant in variants {
        let mut args = vec![
            "chaos",
            "--seeds",
            "100",
            "--workers",
            "1",
            "--fail-fast",
            "--no-shrink",
            "--json",
        ];
        args.extend_from_slice(variant);
        args.extend_from_slice(&["--out", out.to_str().expect("UTF-8 path")]);
        let (code, stdout, stderr) = interleave(&args);
        assert_eq!(code, 1, "{variant:?} was not found: {stdout}{stderr}");
        let failed: serde_json::Value = stdout
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON"))
            .find(|object| object["verdict"] == "failed")
            .expect("a failing seed");
        assert_eq!(failed["replay_verified"], true, "{failed}");
        let replay = replay_arguments(failed["replay"].as_str().expect("a replay line"));
        assert!(replay.contains(&"--expect".to_string()), "{replay:?}");
        for _ in 0..2 {
            let mut args: Vec<&str> = replay.iter().map(String::as_str).collect();
            args.push("--json");
            let (code, stdout, stderr) = interleave(&args);
            assert_eq!(code, 1, "{args:?}: {stdout}{stderr}");
            let replayed: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON");
            assert_eq!(replayed["violation"], failed["violation"], "{variant:?}");
            assert_eq!(
                replayed["trace_digest"], failed["trace_digest"],
                "{variant:?}"
            );
            assert_eq!(
                replayed["schedule_digest"], failed["schedule_digest"],
                "{variant:?}"
            );
            assert_eq!(replayed["matches_expected"], true, "{variant:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_replay_on_os_threads_counts_how_often_it_fails_and_how_often_it_is_identical() {
    let (code, stdout, stderr) = interleave(&[
        "replay",
        "--seed",
        "1",
        "--rounds",
        "20",
        "--scheduler",
        "os",
        "--attempts",
        "3",
        "--json",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let replayed: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(replayed["attempts"], 3);
    assert_eq!(replayed["failed"], 0);
    assert!(replayed["identical"]
        .as_u64()
        .is_some_and(|n| (1..=3).contains(&n)));
    assert_eq!(replayed["schedule_digest"], serde_json::Value::Null);
}

#[test]
fn a_deadlock_is_reported_with_every_thread_and_what_it_waits_for() {
    let (code, stdout, stderr) = interleave(&[
        "replay",
        "--seed",
        "1",
        "--mutation",
        "sleep-in-persist",
        "--scheduler",
        "pct",
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("deadlock: no thread can run:")
            && stdout.contains("waits for the lock taken at node/src/shell/")
            && stdout.contains("n0-ticker: waits for"),
        "{stdout}"
    );
}

/// When the harness stops at a violation in a key-value run, the clients and servers it leaves
/// behind wait for a clock nobody advances any more: that end is not the failure, the
/// violation is (the deterministic engine once reported it as a deadlock).
#[test]
fn a_violation_in_a_key_value_run_is_reported_as_itself_not_as_the_deadlock_after_it() {
    let (code, stdout, stderr) = interleave(&[
        "replay",
        "--seed",
        "1",
        "--workload",
        "kv",
        "--read-mode",
        "log",
        "--snapshot-threshold",
        "1024",
        "--mutation",
        "snapshot-without-sessions",
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("invariant violated: Snapshot agreement") && !stdout.contains("deadlock:"),
        "{stdout}"
    );
}

/// The coverage gate fails a run that left a reachable point unreached: without fault points no
/// seed of the fixed mix fills an apply channel, and two seeds reach few points anyway.
#[test]
fn the_coverage_gate_fails_a_run_that_leaves_a_point_unreached() {
    let (code, stdout, stderr) = interleave(&[
        "chaos",
        "--fixed",
        "--seeds",
        "2",
        "--rounds",
        "20",
        "--require-coverage",
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("interleave: coverage gate:")
            && stderr.contains("shell: apply channel full"),
        "{stderr}"
    );
    assert!(stdout.contains("found nothing"), "{stdout}");
}
