//! [`run_ignored_test`]: runs one `#[ignore]`d test of the current test binary in a child process.
//!
//! A loom deadlock panics twice and aborts the whole process, hiding every other test's result.
//! A model that is expected to deadlock (a deliberately broken variant) runs this way: the test
//! that expects the failure asserts on the child's outcome and output.

/// Runs the `#[ignore]`d test `test` of this test binary in a child process; returns whether it
/// failed, with its output (standard output and error).
pub fn run_ignored_test(test: &str) -> (bool, String) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = std::process::Command::new(exe)
        .args([
            test,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .output()
        .expect("run the test binary");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (!output.status.success(), text)
}
