//! The `interleave` command line: exit statuses, JSON output, clear usage errors.

use std::process::Command;

fn interleave(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_interleave"))
        .args(args)
        .output()
        .expect("run interleave");
    (
        output.status.code().expect("exit code"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

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
        stdout.contains("FAILED seed") && stdout.contains("replay: cargo run"),
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
fn usage_errors_exit_two_without_a_panic() {
    for args in [
        &["chaos", "--nodes", "2"][..],
        &["chaos", "--mutation", "bogus"],
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
    let summary = commit_old_term_matrix(&[]);
    assert_eq!(summary["rows"][0]["variant"], "commit-old-term");
    assert_eq!(summary["rows"][0]["cells"][0]["killed"], true);
    assert_eq!(
        summary["rows"][0]["cells"][0]["seeds_killing"],
        serde_json::Value::Null
    );
    assert_eq!(summary["survivors"].as_array().map(Vec::len), Some(0));
    let (code, _, stderr) = interleave(&["mutants", "--only", "no-such-bug"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown variant"), "{stderr}");
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
