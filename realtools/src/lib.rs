//! What a test that needs a real tool does when the tool is not here, and the seeds the tests
//! hand a fuzzer ([`fuzz_seed`]).
//!
//! Some tests need what a new machine may lack: root, `nft`, `iptables-restore`, etcd, `/dev/fuse`,
//! a headless Chromium. On a user's machine such a test skips, saying why, and records itself so
//! that `./test.sh` can list every skip at its end with the command that installs what they need.
//! In CI (the `CI` variable set, as CI services and `.ci/run` set it) a missing tool is a failure:
//! a green run there means every test ran.
//!
//! ```
//! fn nft_is_here() -> Result<(), String> {
//!     Ok(())
//! }
//! if !realtools::require("my_test", nft_is_here()) {
//!     return; // skipped on a user's machine; never reached in CI
//! }
//! ```

#![deny(missing_docs)]

mod fuzz_seeds;

pub use fuzz_seeds::{fuzz_seed, FUZZ_SEEDS_VARIABLE};

use std::io::Write;

/// The variable that names the file where skipped tests are recorded, one line each
/// (`./test.sh` sets it and prints the file at its end).
pub const SKIP_LOG_VARIABLE: &str = "INTERLEAVE_SKIPPED_TESTS";

/// Whether `test` can run, given whether its tool is `here` (`Err` says what is missing and how
/// to install it). `true` when it is. When it is not: in CI, panics naming the test and what is
/// missing; elsewhere prints `SKIPPED test: why`, records the skip (see [`SKIP_LOG_VARIABLE`])
/// and returns `false`, and the test returns at once.
pub fn require<E: std::fmt::Display>(test: &str, here: Result<(), E>) -> bool {
    let Err(why) = here else { return true };
    let why = why.to_string();
    if in_ci() {
        panic!(
            "{test} needs what this machine lacks: {why}. In CI a missing tool is a failure, \
             not a skip (.ci/run installs every tool the tests need)"
        );
    }
    eprintln!("SKIPPED {test}: {why}");
    record_skip(test, &why);
    false
}

/// Whether this process runs in CI: `CI` set to anything but empty, `0` or `false`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| !matches!(value.trim(), "" | "0" | "false"))
}

/// Appends `test` and `why` to the skip log, when one is named. A log that cannot be written is
/// said on stderr: the skip is still printed.
fn record_skip(test: &str, why: &str) {
    let Some(path) = std::env::var_os(SKIP_LOG_VARIABLE) else {
        return;
    };
    let line = format!("{test}\t{}\n", why.replace(['\n', '\t'], " "));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(error) = written {
        eprintln!(
            "cannot record the skip in {}: {error}",
            path.to_string_lossy()
        );
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    // The process's environment is shared by the tests of this binary: one test touches it.
    #[test]
    fn a_missing_tool_skips_outside_ci_and_fails_in_ci_and_seeds_go_where_asked() {
        let log = std::env::temp_dir().join(format!("realtools-{}.txt", std::process::id()));
        let _ = std::fs::remove_file(&log);
        std::env::set_var(SKIP_LOG_VARIABLE, &log);
        std::env::set_var("CI", "false");
        assert!(require("present", Ok::<(), String>(())));
        assert!(!require(
            "absent",
            Err::<(), &str>("no\tnft\n(apt-get install nftables)")
        ));
        let recorded = std::fs::read_to_string(&log).unwrap();
        assert_eq!(recorded, "absent\tno nft (apt-get install nftables)\n");

        std::env::set_var("CI", "true");
        assert!(in_ci());
        assert!(
            require("present", Ok::<(), String>(())),
            "a tool that is here never fails"
        );
        let failed = std::panic::catch_unwind(|| require("absent", Err::<(), &str>("no etcd")));
        let message = *failed
            .expect_err("in CI a missing tool fails")
            .downcast::<String>()
            .unwrap();
        assert!(
            message.contains("absent needs") && message.contains("no etcd"),
            "{message}"
        );
        let recorded = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            recorded.lines().count(),
            1,
            "a failure is not recorded as a skip"
        );
        std::fs::remove_file(&log).unwrap();

        let seeds = std::env::temp_dir().join(format!("realtools-seeds-{}", std::process::id()));
        std::env::remove_var(FUZZ_SEEDS_VARIABLE);
        assert_eq!(
            fuzz_seed("wire_rpc", "vote", b"\x01"),
            None,
            "unset: nothing written"
        );
        std::env::set_var(FUZZ_SEEDS_VARIABLE, &seeds);
        let written = fuzz_seed("wire_rpc", "vote", b"\x01").expect("written");
        assert_eq!(written, seeds.join("wire_rpc/vote"));
        assert_eq!(std::fs::read(&written).unwrap(), b"\x01");
        std::fs::remove_dir_all(&seeds).unwrap();
    }
}
