//! The `lincheck` command line: exit statuses, clear errors on bad input, JSON and HTML output.

use std::path::PathBuf;
use std::process::Command;

fn lincheck(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_lincheck"))
        .args(args)
        .output()
        .expect("run lincheck");
    (
        output.status.code().expect("exit code"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn scratch(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lincheck-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write");
    path
}

const LEGAL: &str = r#"{"client":0,"op":"write","input":1,"call":0,"return":1,"outcome":"ok"}
{"client":1,"op":"read","output":1,"call":2,"return":3,"outcome":"ok"}
"#;
const ILLEGAL: &str = r#"{"client":0,"op":"write","input":1,"call":0,"return":1,"outcome":"ok"}
{"client":1,"op":"read","output":2,"call":2,"return":3,"outcome":"ok"}
"#;

#[test]
fn exit_status_says_what_was_found() {
    let legal = scratch("legal.jsonl", LEGAL);
    let illegal = scratch("illegal.jsonl", ILLEGAL);
    let (code, stdout, _) = lincheck(&[
        "--model",
        "register",
        "--format",
        "json",
        legal.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("linearizable"));
    let (code, stdout, _) = lincheck(&[
        "--model",
        "register",
        "--format",
        "json",
        legal.to_str().unwrap(),
        illegal.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("NOT LINEARIZABLE") && stdout.contains("read() -> 2"),
        "{stdout}"
    );
}

#[test]
fn an_exhausted_budget_exits_three() {
    // 30 concurrent writes, a compare-and-set of unknown outcome that would write 1000 but
    // expects a value nobody wrote, and then a read of 1000: nothing decides it at once (the
    // compare-and-set may have written 1000), and every subset of the writes must be tried
    // before the read is refuted.
    let mut text = String::new();
    for client in 0..30 {
        text.push_str(&format!(
            "{{\"client\":{client},\"op\":\"write\",\"input\":{client},\"call\":0,\"return\":10,\"outcome\":\"ok\"}}\n"
        ));
    }
    text.push_str(
        r#"{"client":98,"op":"cas","input":[5000,1000],"call":0,"return":null,"outcome":"unknown"}"#,
    );
    text.push('\n');
    text.push_str(
        r#"{"client":99,"op":"read","output":1000,"call":11,"return":12,"outcome":"ok"}"#,
    );
    let path = scratch("hard.jsonl", &text);
    let (code, stdout, _) = lincheck(&[
        "--model",
        "register",
        "--format",
        "json",
        "--max-states",
        "1000",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code, 3, "{stdout}");
    assert!(stdout.contains("UNKNOWN"), "{stdout}");
}

#[test]
fn the_memory_budget_counts_large_states_and_gives_unknown() {
    // 1,500 appends of 8 KiB to one key: the search keeps every prefix, each costing the piece it
    // appended (12 MiB in all), in a memo of 1,501 states, far below any state budget.
    let piece = |i: u32| format!("{i:08191},");
    let mut text = String::new();
    for i in 0..1500u32 {
        text.push_str(&format!(
            "{{\"client\":0,\"op\":\"append\",\"key\":\"k\",\"input\":\"{}\",\"call\":{},\"return\":{},\"outcome\":\"ok\"}}\n",
            piece(i),
            2 * i,
            2 * i + 1
        ));
    }
    let whole: String = (0..1500).map(piece).collect();
    text.push_str(&format!(
        "{{\"client\":0,\"op\":\"get\",\"key\":\"k\",\"output\":\"{whole}\",\"call\":3000,\"return\":3001,\"outcome\":\"ok\"}}\n"
    ));
    let path = scratch("appends.jsonl", &text);
    let check = |memory: &str| {
        lincheck(&[
            "--model",
            "kv",
            "--format",
            "json",
            "--max-memory",
            memory,
            path.to_str().unwrap(),
        ])
    };
    let (code, stdout, _) = check("8M");
    assert_eq!(code, 3, "{stdout}");
    assert!(stdout.contains("(limit 8 MiB)"), "{stdout}");
    let (code, stdout, _) = check("64M");
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn bad_input_and_usage_exit_two_with_a_clear_message() {
    let truncated = scratch("truncated.jsonl", "{\"client\":0,\"op\":\"write\",\"inp");
    let (code, _, stderr) = lincheck(&[
        "--model",
        "register",
        "--format",
        "json",
        truncated.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("truncated.jsonl:1: not valid JSON"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let (code, _, stderr) = lincheck(&[
        "--model",
        "register",
        "--format",
        "kv",
        truncated.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("does not read the kv format"), "{stderr}");
    let (code, _, stderr) = lincheck(&["--model", "register", "--format", "json", "/no/such/file"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read /no/such/file"), "{stderr}");
    let (code, _, stderr) = lincheck(&["--model", "tree", "--format", "json", "x"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid value 'tree'"), "{stderr}");
}

#[test]
fn json_output_and_html_pages() {
    let illegal = scratch("page.jsonl", ILLEGAL);
    let dir = illegal.parent().unwrap().join("html");
    let (code, stdout, _) = lincheck(&[
        "--model",
        "register",
        "--format",
        "json",
        "--json",
        "--html",
        dir.to_str().unwrap(),
        illegal.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    let object: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(object["verdict"], "not_linearizable");
    assert_eq!(object["operations"], 2);
    let page = std::fs::read_to_string(dir.join("page.html")).expect("page written");
    assert!(page.contains("Not linearizable") && page.contains("class=\"unplaced\""));
}

/// Runs `lincheck --model register --format json` with `options` on `file`.
fn check_register(options: &[&str], file: &std::path::Path) -> (i32, String, String) {
    let mut args = vec!["--model", "register", "--format", "json"];
    args.extend_from_slice(options);
    args.push(file.to_str().expect("a UTF-8 path"));
    lincheck(&args)
}

#[test]
fn budgets_out_of_range_are_refused_before_any_work() {
    let legal = scratch("budget.jsonl", LEGAL);
    for limit in ["1e19", "1e30", "inf", "nan", "0", "-1", "soon"] {
        let option = format!("--time-limit={limit}");
        let (code, _, stderr) = check_register(&[&option], &legal);
        assert_eq!(code, 2, "--time-limit {limit}: {stderr}");
        assert!(
            stderr.contains("invalid value") && !stderr.contains("panicked"),
            "--time-limit {limit}: {stderr}"
        );
    }
    let (code, _, stderr) = check_register(&["--max-input-bytes", "0"], &legal);
    assert_eq!(code, 2, "{stderr}");
    let (code, stdout, _) = check_register(&["--no-time-limit"], &legal);
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn a_file_over_the_input_limit_is_refused_unread() {
    let legal = scratch("large.jsonl", LEGAL);
    let (code, _, stderr) = check_register(&["--max-input-bytes", "20"], &legal);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("large.jsonl is larger than 20 bytes (--max-input-bytes"),
        "{stderr}"
    );
    // An endless device is refused before a byte is read.
    let (code, _, stderr) = check_register(
        &["--max-input-bytes", "1000000"],
        std::path::Path::new("/dev/zero"),
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cannot read /dev/zero: it is a device, not a regular file"),
        "{stderr}"
    );
}

#[test]
fn encodings_a_user_may_meet_are_read_or_named_by_line() {
    let with_mark = scratch("mark.jsonl", &format!("\u{feff}{LEGAL}"));
    let (code, stdout, _) = check_register(&[], &with_mark);
    assert_eq!(code, 0, "a byte-order mark is skipped: {stdout}");
    let dir = with_mark.parent().expect("a scratch folder");
    let latin1 = dir.join("latin1.jsonl");
    let mut bytes = LEGAL.as_bytes().to_vec();
    bytes.extend_from_slice(b"{\"client\":2,\"op\":\"read\",\"output\":\"caf\xE9\"}\n");
    std::fs::write(&latin1, bytes).expect("write");
    let (code, _, stderr) = check_register(&[], &latin1);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("latin1.jsonl:3: column 38: not valid UTF-8"),
        "{stderr}"
    );
}

#[test]
fn a_closed_output_stops_the_check_quietly() {
    let legal = scratch("pipe.jsonl", LEGAL);
    let path = legal.to_str().expect("a UTF-8 path").to_string();
    let mut args = vec![
        "--model".to_string(),
        "register".into(),
        "--format".into(),
        "json".into(),
    ];
    // Enough files that results are still being written after the reader has gone.
    args.extend(std::iter::repeat_n(path, 2000));
    let mut child = Command::new(env!("CARGO_BIN_EXE_lincheck"))
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run lincheck");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("lincheck ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(141), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

const WRITE_SKEW: &str = r#"{"client":0,"call":0,"return":10,"outcome":"ok","ops":[["r",1,[]],["append",2,1]]}
{"client":1,"call":0,"return":10,"outcome":"ok","ops":[["r",2,[]],["append",1,1]]}
{"client":2,"call":20,"return":30,"outcome":"ok","ops":[["r",1,[1]],["r",2,[1]]]}
"#;
const SERIAL: &str = r#"{"client":0,"call":0,"return":10,"outcome":"ok","ops":[["append",1,1],["r",1,[1]]]}
{"client":1,"call":20,"return":30,"outcome":"ok","ops":[["r",1,[1]]]}
"#;

#[test]
fn list_append_histories_are_checked_for_strict_serializability() {
    let skew = scratch("skew.jsonl", WRITE_SKEW);
    let serial = scratch("serial.jsonl", SERIAL);
    let (code, stdout, _) = lincheck(&[
        "--model",
        "list-append",
        "--format",
        "json",
        serial.to_str().unwrap(),
        skew.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("serial.jsonl: strictly serializable"),
        "{stdout}"
    );
    assert!(stdout.contains("skew.jsonl: NOT SERIALIZABLE"), "{stdout}");
    assert!(
        stdout.contains("G2: transaction 1 (client 0) -rw-> transaction 2 (client 1) -rw->"),
        "{stdout}"
    );
    let (code, stdout, _) = lincheck(&[
        "--model",
        "list-append",
        "--format",
        "json",
        "--json",
        serial.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let object: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one object");
    assert_eq!(object["verdict"], "strictly-serializable");
    // Bad input: a clear error, status 2.
    let backwards = scratch(
        "backwards.jsonl",
        r#"{"client":0,"call":5,"return":1,"outcome":"ok","ops":[]}"#,
    );
    let (code, _, stderr) = lincheck(&[
        "--model",
        "list-append",
        "--format",
        "json",
        backwards.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("backwards.jsonl:1: returns at 1 before its call at 5"),
        "{stderr}"
    );
    let (code, _, stderr) = lincheck(&[
        "--model",
        "list-append",
        "--format",
        "kv",
        serial.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("list-append: json"), "{stderr}");
}
