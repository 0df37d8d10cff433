//! A server thread that panics stops the whole server: exit 1, said in the log. A server with a
//! dead thread is worse than one that is gone: it may hold a lock forever, answer some calls and
//! not others, and ignore SIGTERM. Its state files are made for a sudden end (kill -9 leaves
//! them whole), so ending at once is safe, and a supervisor restarts it.

/// The exit status of a server stopped by a panic.
pub const PANIC_EXIT: i32 = 1;

/// From now on, a panic on any thread of this process ends it with [`PANIC_EXIT`], after the
/// usual panic message and one line saying so. For server processes only: a test harness or a
/// command that catches panics must not call it.
pub fn exit_on_panic() {
    use std::io::Write;
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |panic| {
        report(panic);
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("an unnamed thread");
        tracing::error!(
            thread = name,
            "a server thread panicked: stopping (exit {PANIC_EXIT})"
        );
        // Not `eprintln!`: a closed or full standard error must not stop the exit.
        let _ = writeln!(
            std::io::stderr(),
            "a server thread ({name}) panicked: the server stops (exit {PANIC_EXIT})"
        );
        std::process::exit(PANIC_EXIT);
    }));
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::process::Command;

    const CHILD: &str = "INTERLEAVE_FAIL_STOP_CHILD";

    #[test]
    fn a_thread_that_panics_ends_the_process_with_exit_1() {
        if std::env::var_os(CHILD).is_some() {
            exit_on_panic();
            let panicked = std::thread::Builder::new()
                .name("replicator".into())
                .spawn(|| panic!("on purpose"))
                .expect("spawn")
                .join();
            // Without the hook the process would go on, half alive, and end with 0 here.
            assert!(panicked.is_err());
            std::process::exit(0);
        }
        let output = Command::new(std::env::current_exe().expect("the test binary"))
            .args([
                "--exact",
                "fail_stop::tests::a_thread_that_panics_ends_the_process_with_exit_1",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .expect("run the child");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(PANIC_EXIT), "{stderr}");
        assert!(
            stderr.contains("a server thread (replicator) panicked: the server stops (exit 1)"),
            "{stderr}"
        );
    }
}
