//! Ctrl-C is a request, not a crash: `chaos` stops starting seeds, reports what ran, and exits
//! with 130 (128 + SIGINT, as shells report it); `deploy` heals its faults, stops its servers and
//! still checks and saves what ran; a closed pipe ends the process quietly.

#![cfg(all(unix, not(any(loom, shuttle))))]

mod support;

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

/// Reads `child`'s standard error until a line `ready` accepts (`what`: the process must not end
/// first), sends it SIGINT, and waits for it to end.
fn interrupt_when(
    child: std::process::Child,
    ready: impl Fn(&str) -> bool,
    what: &str,
) -> std::process::Output {
    signal_when(child, ready, what, libc::SIGINT)
}

/// [`interrupt_when`] with another signal.
fn signal_when(
    mut child: std::process::Child,
    ready: impl Fn(&str) -> bool,
    what: &str,
    signal: libc::c_int,
) -> std::process::Output {
    let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
    let mut line = String::new();
    while !ready(&line) {
        line.clear();
        assert!(
            stderr.read_line(&mut line).expect("stderr") > 0,
            "the process ended before {what}"
        );
    }
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    // SAFETY: signals the child this test started and has not yet waited for.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    child.wait_with_output().expect("wait")
}

#[test]
fn ctrl_c_sigterm_and_sighup_stop_chaos_at_a_boundary_report_what_ran_and_exit_128_plus_the_signal()
{
    for (signal, name) in [
        (libc::SIGINT, "Ctrl-C"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
    ] {
        let child = support::interleave_command()
            .args(["chaos", "--seeds", "1000000", "--workers", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run interleave");
        // The first progress line comes after the handler is installed.
        let output = signal_when(
            child,
            |line| line.starts_with('['),
            "its first progress line",
            signal,
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(128 + signal), "{name}: {stdout}");
        assert!(
            stdout.contains(&format!("interrupted by {name}: "))
                && stdout.contains(" of 1000000 seeds ran"),
            "{name}: {stdout}"
        );
        assert!(
            stdout.contains("found nothing: every invariant held on every seed that ran"),
            "{name}: {stdout}"
        );
    }
}

#[test]
fn ctrl_c_stops_deploy_which_stops_its_servers_and_saves_what_ran() {
    let out = support::fresh_dir("deploy-interrupted");
    let child = support::interleave_command()
        .args(["deploy", "--duration", "600", "--seed", "3", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run interleave");
    // The first fault comes after the clients started, and the handler with them.
    let first_fault = |line: &str| line.trim_start().starts_with(|c: char| c.is_ascii_digit());
    let output = interrupt_when(child, first_fault, "its first fault");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("stopped early by Ctrl-C"), "{stdout}");
    assert!(stdout.contains("history: linearizable"), "{stdout}");
    let summary = std::fs::read_to_string(out.join("summary.txt")).expect("saved");
    assert!(summary.contains("stopped early by Ctrl-C"), "{summary}");
    // Every server was stopped with SIGTERM (its log says so), none left running.
    for node in 0..3 {
        let log = std::fs::read_to_string(out.join(format!("cluster/n{node}.log"))).unwrap();
        assert!(log.trim_end().ends_with("stopped"), "n{node}: {log}");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_closed_pipe_ends_the_process_quietly() {
    // A broken node fails nearly every seed, and every failure writes to standard output.
    let mut child = support::interleave_command()
        .args([
            "chaos",
            "--seeds",
            "1000000",
            "--workers",
            "1",
            "--no-shrink",
            "--mutation",
            "vote-without-up-to-date-check",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run interleave");
    // Read the first line of output, then close the pipe as `head -1` does.
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("stdout");
    assert!(first.starts_with("interleave chaos:"), "{first}");
    drop(stdout);
    let output = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.signal(), Some(libc::SIGPIPE), "{stderr}");
}

#[test]
fn an_output_that_cannot_be_written_is_reported_in_one_line() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return; // not Linux: no device that is always full
    };
    for args in [
        &["chaos", "--seeds", "2", "--rounds", "5"][..],
        &["chaos", "--seeds", "2", "--rounds", "5", "--json"],
        &["completions", "bash"],
        &["--help"],
    ] {
        let output = support::interleave_command()
            .args(args)
            .stdout(full.try_clone().expect("clone"))
            .output()
            .expect("run interleave");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(74), "{args:?}: {stderr}");
        assert!(
            stderr.contains("No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // Standard error full too (or alone): exit 74, not an abort.
    for args in [
        &["chaos", "--seeds", "2", "--rounds", "5"][..],
        &["chaos", "--bogus"],
    ] {
        let output = support::interleave_command()
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(full.try_clone().expect("clone"))
            .output()
            .expect("run interleave");
        assert_eq!(
            output.status.code(),
            Some(74),
            "{args:?}: {:?}",
            output.status
        );
    }
}
