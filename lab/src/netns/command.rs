//! Running the system's own network tools (`ip`, `nft`) and saying what went wrong when one
//! fails: the command line and what it printed on standard error.

use std::io::{self, Write};
use std::process::{Command, Stdio};

/// Runs `program` with `args`, feeding it `input` on standard input when given; fails with the
/// command line and its standard error unless it exits 0.
pub(super) fn run(program: &str, args: &[&str], input: Option<&str>) -> io::Result<String> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let line = || format!("{program} {}", args.join(" "));
    let mut child = command
        .spawn()
        .map_err(|error| io::Error::new(error.kind(), format!("cannot run {}: {error}", line())))?;
    if let Some(input) = input {
        let mut stdin = child.stdin.take().expect("piped");
        stdin.write_all(input.as_bytes())?;
    }
    let output = child.wait_with_output()?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(io::Error::other(format!(
            "{} failed ({}): {}",
            line(),
            output.status,
            said.trim()
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs `program` in the network namespace `namespace` (through `ip netns exec`).
pub(super) fn run_in(
    namespace: &str,
    program: &str,
    args: &[&str],
    input: Option<&str>,
) -> io::Result<String> {
    let mut all = vec!["netns", "exec", namespace, program];
    all.extend_from_slice(args);
    run("ip", &all, input)
}

/// Whether `program` can be run at all (found and executable).
pub(super) fn exists(program: &str, version_flag: &str) -> bool {
    Command::new(program)
        .arg(version_flag)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
