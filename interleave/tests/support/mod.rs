//! What every command-line test file shares: the binary, started with a failure folder of its
//! own (`INTERLEAVE_OUT`), since tests run in parallel and a chaos run holds its folder's lock.

#![allow(dead_code)] // each test file uses its own part of this

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh folder under the system's temporary folder, for one command.
pub fn fresh_dir(what: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    std::env::temp_dir().join(format!("interleave-{what}-{}-{n}", std::process::id()))
}

/// `interleave` with its failure folders in a fresh folder (an explicit `--out` still wins).
pub fn interleave_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_interleave"));
    command.env("INTERLEAVE_OUT", fresh_dir("out"));
    command
}

/// Runs `interleave args`: the exit code, standard output and standard error.
pub fn interleave(args: &[&str]) -> (i32, String, String) {
    let output = interleave_command()
        .args(args)
        .output()
        .expect("run interleave");
    (
        output.status.code().expect("exit code"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
