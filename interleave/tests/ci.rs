//! What a CI job relies on: seed ranges that move (`--first-seed random`, environment variables),
//! shards that split a range without overlap, JUnit reports, replay lines that start the way the
//! binary was started, versioned JSON, shell completions and `RUST_LOG`.
#![cfg(not(any(loom, shuttle)))]

mod support;

use std::collections::BTreeSet;
use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = support::interleave_command();
    command.args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("run interleave");
    Run {
        code: output.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn json_lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect()
}

/// The seeds a `--json` run printed, and its summary.
fn seeds_and_summary(stdout: &str) -> (Vec<u64>, serde_json::Value) {
    let mut lines = json_lines(stdout);
    let summary = lines.pop().expect("a summary")["summary"].clone();
    let seeds = lines.iter().map(|l| l["seed"].as_u64().unwrap()).collect();
    (seeds, summary)
}

const SHORT: [&str; 4] = ["--rounds", "5", "--json", "--no-shrink"];

#[test]
fn the_shards_of_a_range_run_every_seed_exactly_once() {
    let mut seen = BTreeSet::new();
    let mut total = 0;
    for shard in 1..=4 {
        let shard = format!("{shard}/4");
        let mut args = vec![
            "chaos",
            "--seeds",
            "10",
            "--first-seed",
            "21",
            "--shard",
            &shard,
        ];
        args.extend(SHORT);
        let run = run(&args, &[]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        let (seeds, summary) = seeds_and_summary(&run.stdout);
        assert_eq!(summary["shard"], shard.as_str());
        assert_eq!(summary["first_seed"], 21);
        total += seeds.len();
        seen.extend(seeds);
    }
    assert_eq!(total, 10, "no seed runs twice");
    assert_eq!(seen, (21..=30).collect(), "every seed runs");
}

#[test]
fn seeds_and_shards_come_from_the_environment_when_no_flag_is_given() {
    let env = [
        ("INTERLEAVE_FIRST_SEED", "40"),
        ("INTERLEAVE_SEED_COUNT", "4"),
        ("INTERLEAVE_SHARD", "2/2"),
    ];
    let mut args = vec!["chaos"];
    args.extend(SHORT);
    let (mut seeds, _) = seeds_and_summary(&run_ok(&args, &env));
    seeds.sort_unstable();
    assert_eq!(seeds, [42, 43]);
    // A flag wins over its variable.
    let mut args = vec!["chaos", "--first-seed", "7", "--shard", "1/1"];
    args.extend(SHORT);
    let (mut seeds, _) = seeds_and_summary(&run_ok(&args, &env));
    seeds.sort_unstable();
    assert_eq!(seeds, [7, 8, 9, 10]);
    // A bad value names the option it stands for.
    let bad = run(&["chaos"], &[("INTERLEAVE_FIRST_SEED", "soon")]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("--first-seed") && bad.stderr.contains("soon"),
        "{}",
        bad.stderr
    );
}

fn run_ok(args: &[&str], env: &[(&str, &str)]) -> String {
    let run = run(args, env);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    run.stdout
}

#[test]
fn a_random_first_seed_is_printed_so_the_range_runs_again() {
    let text = run_ok(
        &[
            "chaos",
            "--seeds",
            "1",
            "--rounds",
            "5",
            "--first-seed",
            "random",
        ],
        &[],
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("first seed drawn at random: "))
        .unwrap_or_else(|| panic!("{text}"));
    let seed: u64 = line["first seed drawn at random: ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(text.contains(&format!("seeds {seed}..={seed}")), "{text}");
    let mut args = vec!["chaos", "--seeds", "1", "--first-seed", "random"];
    args.extend(SHORT);
    let (_, first) = seeds_and_summary(&run_ok(&args, &[]));
    let (_, second) = seeds_and_summary(&run_ok(&args, &[]));
    assert_ne!(
        first["first_seed"], second["first_seed"],
        "two runs, two ranges"
    );
}

#[test]
fn every_json_object_carries_the_format_version() {
    let mut args = vec!["chaos", "--seeds", "2"];
    args.extend(SHORT);
    for object in json_lines(&run_ok(&args, &[])) {
        let version = object
            .get("version")
            .or_else(|| object["summary"].get("version"));
        assert_eq!(version, Some(&serde_json::json!(1)), "{object}");
    }
    let replay = run_ok(&["replay", "--seed", "3", "--rounds", "5", "--json"], &[]);
    assert_eq!(json_lines(&replay)[0]["version"], 1);
}

#[test]
fn a_junit_report_has_one_case_per_seed_and_a_failure_with_its_replay_line() {
    let dir = std::env::temp_dir().join(format!("interleave-ci-junit-{}", std::process::id()));
    let file = dir.join("chaos.xml");
    std::fs::create_dir_all(&dir).unwrap();
    let run = run(
        &[
            "chaos",
            "--seeds",
            "3",
            "--nodes",
            "4",
            "--mutation",
            "half-is-majority",
            "--no-shrink",
            "--out",
            dir.to_str().unwrap(),
            "--junit",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let xml = std::fs::read_to_string(&file).expect("the report");
    assert!(
        xml.contains(r#"<testsuite name="interleave chaos" tests="3""#),
        "{xml}"
    );
    let failures = xml.matches("<failure").count();
    assert!(failures >= 1, "{xml}");
    assert!(xml.contains("replay: "), "{xml}");
    assert!(
        xml.contains(r#"<testcase name="seed 1" classname="chaos raft""#),
        "{xml}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A chaos run whose only seed fails at once: half of a 4-node cluster counted as a majority.
const TWO_LEADERS_ON_SEED_1: [&str; 7] = [
    "chaos",
    "--seeds",
    "1",
    "--nodes",
    "4",
    "--mutation",
    "half-is-majority",
];

#[test]
fn the_replay_line_starts_the_way_the_binary_was_started() {
    // Outside cargo (as after `cargo install`), the line names the program as it was started.
    let binary = env!("CARGO_BIN_EXE_interleave");
    let dir = std::env::temp_dir().join(format!("interleave-ci-replay-{}", std::process::id()));
    let output = Command::new(binary)
        .args(TWO_LEADERS_ON_SEED_1)
        .args(["--json", "--no-shrink", "--out", dir.to_str().unwrap()])
        .env_remove("CARGO")
        .env_remove("CARGO_PKG_NAME")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let failed = &json_lines(&stdout)[0];
    let replay = failed["replay"]
        .as_str()
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        replay.starts_with(&format!("{binary} replay --seed 1 ")),
        "{replay}"
    );
    // Under cargo (as the tests run it), the line is a `cargo run` of the build with the broken
    // variants (the run had one).
    let under_cargo = run(
        &TWO_LEADERS_ON_SEED_1
            .into_iter()
            .chain(["--no-shrink", "--out", dir.to_str().unwrap()])
            .collect::<Vec<_>>(),
        &[],
    );
    assert!(
        under_cargo.stdout.contains(
            "replay: cargo run --release -p interleave --features mutations -- replay --seed 1 "
        ),
        "{}",
        under_cargo.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn completions_list_subcommands_and_mutation_names() {
    let script = run_ok(&["completions", "bash"], &[]);
    for word in [
        "chaos",
        "replay",
        "shrink",
        "--first-seed",
        "half-is-majority",
        "read-index",
    ] {
        assert!(script.contains(word), "{word} missing");
    }
    let help = run_ok(&["chaos", "--help"], &[]);
    assert!(
        help.contains("Possible values") && help.contains("forget-vote"),
        "{help}"
    );
    assert!(help.contains("[env: INTERLEAVE_FIRST_SEED="), "{help}");
}

#[test]
fn rust_log_prints_the_trace_live_and_a_bad_filter_is_refused() {
    let live = run(
        &["replay", "--seed", "3", "--rounds", "5"],
        &[("RUST_LOG", "interleave=info")],
    );
    assert_eq!(live.code, 0);
    assert!(live.stderr.contains("is Leader in t"), "{}", live.stderr);
    assert!(
        !live.stderr.contains('\x1b'),
        "no colour codes when not a terminal"
    );
    let bad = run(
        &["replay", "--seed", "3"],
        &[("RUST_LOG", "interleave=loud")],
    );
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("RUST_LOG=\"interleave=loud\""),
        "{}",
        bad.stderr
    );
}

#[test]
fn gather_puts_the_shards_back_together_and_names_a_missing_one() {
    let dir = support::fresh_dir("gather");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let mut args = vec!["chaos", "--seeds", "7", "--shard", shard];
        args.extend(SHORT);
        let file = dir.join(format!("shard-{}.jsonl", &shard[..1]));
        std::fs::write(&file, run_ok(&args, &[])).unwrap();
        files.push(file.to_str().unwrap().to_string());
    }
    let all: Vec<&str> = files.iter().map(String::as_str).collect();
    let whole = run(&[&["gather"][..], &all].concat(), &[]);
    assert_eq!(whole.code, 0, "{}{}", whole.stdout, whole.stderr);
    assert!(
        whole.stdout.starts_with("7 seeds (1..=7) from 3 shard(s)"),
        "{}",
        whole.stdout
    );
    let missing = run(&["gather", all[0], all[2]], &[]);
    assert_eq!(missing.code, 2, "{}", missing.stdout);
    assert!(missing.stdout.contains("INCOMPLETE"), "{}", missing.stdout);
    let json = run(&["gather", "--json", all[0], all[1], all[2]], &[]);
    assert_eq!(json_lines(&json.stdout)[0]["complete"], true);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_report_or_output_folder_that_cannot_be_written_is_refused_before_the_run() {
    let file = support::fresh_dir("not-a-folder");
    std::fs::write(&file, "a file").unwrap();
    let out = run(&["chaos", "--out", file.to_str().unwrap()], &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("is a file, not a folder"),
        "{}",
        out.stderr
    );
    let junit = run(&["chaos", "--junit", "/nonexistent/dir/report.xml"], &[]);
    assert_eq!(junit.code, 2);
    assert!(
        junit.stderr.contains("is not a folder") && junit.stdout.is_empty(),
        "{}",
        junit.stderr
    );
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn files_a_user_names_are_read_within_limits_and_only_regular_files_are_replaced() {
    let dir = support::fresh_dir("user-files");
    std::fs::create_dir_all(&dir).unwrap();
    let schedule = run(&["replay", "--schedule", "/dev/zero"], &[]);
    assert_eq!(schedule.code, 2, "{}", schedule.stderr);
    assert!(
        schedule
            .stderr
            .contains("cannot read /dev/zero: it is a device, not a regular file"),
        "{}",
        schedule.stderr
    );
    // A FIFO with no writer would hang a plain read: refused at once.
    let fifo = dir.join("shard.jsonl");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: creates a FIFO in this test's own folder.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let gathered = run(&["gather", fifo.to_str().unwrap()], &[]);
    assert_eq!(gathered.code, 2);
    assert!(
        gathered.stderr.contains("it is a FIFO"),
        "{}",
        gathered.stderr
    );
    // A report path that is a link is refused before the run, and the file it names is kept.
    let precious = dir.join("precious.txt");
    std::fs::write(&precious, "keep me").unwrap();
    let link = dir.join("report.xml");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    let junit = run(
        &["chaos", "--seeds", "1", "--junit", link.to_str().unwrap()],
        &[],
    );
    assert_eq!(junit.code, 2);
    assert!(
        junit.stderr.contains("it is a symbolic link"),
        "{}",
        junit.stderr
    );
    assert!(
        junit.stdout.is_empty(),
        "refused before the run: {}",
        junit.stdout
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
    // A folder of the user's that holds a name the run writes is not emptied: refused.
    let out = dir.join("mine");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("summary.txt"), "my notes").unwrap();
    let deploy = run(
        &["deploy", "--duration", "5", "--out", out.to_str().unwrap()],
        &[],
    );
    assert_eq!(deploy.code, 2, "{}", deploy.stderr);
    assert!(
        deploy
            .stderr
            .contains("holds summary.txt that no interleave run wrote"),
        "{}",
        deploy.stderr
    );
    assert_eq!(
        std::fs::read_to_string(out.join("summary.txt")).unwrap(),
        "my notes"
    );
    // A run that cannot start keeps the last run's files (a folder a run claimed before).
    let claimed = dir.join("claimed");
    std::fs::create_dir_all(&claimed).unwrap();
    std::fs::write(claimed.join(".interleave.lock"), "").unwrap();
    std::fs::write(claimed.join("summary.txt"), "the last run").unwrap();
    let failed = run(
        &[
            "deploy",
            "--duration",
            "5",
            "--server",
            "/nonexistent",
            "--out",
            claimed.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(failed.code, 2, "{}", failed.stderr);
    assert!(
        failed.stderr.contains("the last run's files in"),
        "{}",
        failed.stderr
    );
    assert_eq!(
        std::fs::read_to_string(claimed.join("summary.txt")).unwrap(),
        "the last run"
    );
    // One shard of two is not the whole run.
    let mut args = vec!["chaos", "--seeds", "4", "--shard", "1/2"];
    args.extend(SHORT);
    let shard = dir.join("shard-1.jsonl");
    std::fs::write(&shard, run_ok(&args, &[])).unwrap();
    let one = run(&["gather", shard.to_str().unwrap()], &[]);
    assert_eq!(one.code, 2, "{}", one.stdout);
    assert!(one.stdout.contains("missing: 2/2"), "{}", one.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_deterministic_run_longer_than_its_memory_allows_is_refused_with_the_way_out() {
    for command in ["chaos", "replay"] {
        let mut args = vec![command, "--workload", "kv", "--duration", "601"];
        if command == "replay" {
            args.extend(["--seed", "1"]);
        }
        let refused = run(&args, &[]);
        assert_eq!(refused.code, 2, "{command}: {}", refused.stderr);
        assert!(
            refused
                .stderr
                .contains("--duration 601 s is over the 600 s a deterministic run may last")
                && refused.stderr.contains("--scheduler os"),
            "{command}: {}",
            refused.stderr
        );
    }
}

#[test]
fn check_reports_its_errors_under_the_name_the_user_typed() {
    let missing = run(
        &[
            "check",
            "--model",
            "kv",
            "--format",
            "json",
            "/no/such/history.json",
        ],
        &[],
    );
    assert_eq!(missing.code, 2);
    assert!(
        missing
            .stderr
            .starts_with("interleave: cannot read /no/such/history.json"),
        "{}",
        missing.stderr
    );
}
