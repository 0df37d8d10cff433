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

/// A signal does not wait for the seed under way: a 600 s key-value seed (18 s of work in the
/// test build) is abandoned at its next step, counted as not run, and the command ends at once.
#[test]
fn sigterm_abandons_the_seed_under_way_and_reports_it_not_run() {
    use std::io::Read;
    let mut child = support::interleave_command()
        .args([
            "chaos",
            "--workload",
            "kv",
            "--duration",
            "600",
            "--seeds",
            "1",
            "--workers",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run interleave");
    // The header comes after the handler is installed; a second later the seed is under way.
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut header = String::new();
    stdout.read_line(&mut header).expect("stdout");
    assert!(header.starts_with("interleave chaos: "), "{header}");
    #[allow(clippy::disallowed_methods)] // a real process in real time
    std::thread::sleep(std::time::Duration::from_secs(1));
    #[allow(clippy::disallowed_methods)] // a real process's wall time
    let signalled = std::time::Instant::now();
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    // SAFETY: signals the child this test started and has not yet waited for.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("stdout");
    let status = child.wait().expect("wait");
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{rest}");
    assert!(
        took < std::time::Duration::from_secs(5),
        "{took:?} to stop: {rest}"
    );
    assert!(
        rest.contains("interrupted by SIGTERM: 0 of 1 seeds ran (1 under way abandoned)"),
        "{rest}"
    );
    assert!(!rest.contains("FAILED"), "{rest}");
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

/// The names of slot `slot`'s namespaces and links on this machine.
fn names_of_slot(slot: &str) -> Vec<String> {
    let prefix = format!("ilv{slot}");
    lab::netns::names_on_this_machine()
        .expect("ip lists them")
        .into_iter()
        .filter(|name| {
            name.strip_prefix(&prefix)
                .is_some_and(|rest| rest.starts_with(['n', 'v', 'b']))
        })
        .collect()
}

/// Starts a long `deploy` on network namespaces and reads its standard error up to its first
/// fault; returns it and the slot its hosts are in.
fn deploy_on_hosts_until_its_first_fault(out: &std::path::Path) -> (std::process::Child, String) {
    let mut child = support::interleave_command()
        .args([
            "deploy",
            "--network",
            "namespaces",
            "--faults",
            "partition,loss",
        ])
        .args(["--duration", "600", "--seed", "1", "--out"])
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run interleave");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
    let mut slot = None;
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).expect("stderr") > 0,
            "ended early"
        );
        if let Some(rest) = line.trim_end().strip_suffix(')') {
            if line.starts_with("hosts: ") {
                slot = rest.rsplit(' ').next().map(str::to_string);
            }
        }
        if line.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
            break;
        }
    }
    // Keep reading so that the process never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, slot.expect("a line naming the hosts' slot"))
}

#[test]
fn no_namespace_link_or_server_is_left_after_ctrl_c_or_a_kill_9_of_deploy() {
    if !realtools::require(
        "no_namespace_link_or_server_is_left_after_ctrl_c_or_a_kill_9_of_deploy",
        lab::netns::available(),
    ) {
        return;
    }
    let out = support::fresh_dir("deploy-hosts-left");
    // Ctrl-C: the run heals, stops its servers and removes its hosts before it exits.
    let (child, slot) = deploy_on_hosts_until_its_first_fault(&out);
    assert!(!names_of_slot(&slot).is_empty(), "no hosts while running");
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    // SAFETY: signals the child this test started and has not yet waited for.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(130));
    assert_eq!(names_of_slot(&slot), Vec::<String>::new());
    // kill -9: nothing runs its clean-up; the servers die with it (they asked the kernel to
    // kill them when their parent goes), and the next run removes the names it left.
    let (mut child, slot) = deploy_on_hosts_until_its_first_fault(&out);
    let servers: Vec<String> = (0..3).map(|node| format!("ilv{slot}n{node}")).collect();
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    assert!(
        !names_of_slot(&slot).is_empty(),
        "a killed run removed its hosts"
    );
    let (code, _, stderr) = support::interleave(&[
        "deploy",
        "--network",
        "namespaces",
        "--faults",
        "none",
        "--duration",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(names_of_slot(&slot), Vec::<String>::new(), "{stderr}");
    // No server of the killed run is left anywhere (its namespace is gone, so look by name of
    // its data directory in the command lines).
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .filter(|cmdline| cmdline.contains(" server ") && cmdline.contains(out.to_str().unwrap()))
        .collect();
    assert_eq!(left, Vec::<String>::new(), "servers left: {servers:?}");
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
