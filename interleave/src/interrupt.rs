//! Ctrl-C and closed pipes, handled the way a command-line tool should.
//!
//! - **Ctrl-C** during `chaos`, `shrink` or `deploy`, and **SIGTERM** and **SIGHUP** alike (a
//!   CI runner's cancel, a closed terminal): the first one asks the command to stop at the next
//!   boundary (no new seed starts, and the seeds under way are abandoned at their next step,
//!   counted as not run; a shrink keeps the smallest failing schedule found so far and writes
//!   it; a nemesis heals and checks what ran), and says so on standard error; a second one ends
//!   the process at once. The exit status is 128 + the signal (130 for Ctrl-C), as
//!   shells report it. Commands that do not ask ([`stop_on_ctrl_c`] not called) keep the
//!   default: the signal ends them.
//! - **A closed pipe** (`interleave chaos | head`): the process ends quietly, as `cat` does,
//!   instead of panicking on its next `println!`.
//! - **An output that cannot be written** (`> /dev/full`): one line saying so, exit 74
//!   (`EX_IOERR`), instead of a panic.

use std::sync::atomic::{AtomicI32, Ordering};

/// The first stopping signal that arrived (0: none).
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// The signals a long command treats as a request to stop at the next boundary.
#[cfg(unix)]
const STOPPING_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Whether Ctrl-C, SIGTERM or SIGHUP arrived since [`stop_on_ctrl_c`].
pub fn interrupted() -> bool {
    STOPPED_BY.load(Ordering::SeqCst) != 0
}

/// What stopped the command, as a person names it: "Ctrl-C", "SIGTERM" or "SIGHUP".
pub fn interruption() -> &'static str {
    #[cfg(unix)]
    match STOPPED_BY.load(Ordering::SeqCst) {
        libc::SIGTERM => return "SIGTERM",
        libc::SIGHUP => return "SIGHUP",
        _ => {}
    }
    "Ctrl-C"
}

/// The exit status of a command stopped by a signal: 128 + the signal, as shells report it
/// (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP).
pub fn interrupted_exit() -> u8 {
    let signal = STOPPED_BY.load(Ordering::SeqCst);
    u8::try_from(128 + signal).unwrap_or(130)
}

#[cfg(unix)]
extern "C" fn on_ctrl_c(signal: libc::c_int) {
    const NOTE: &[u8] =
        b"\ninterleave: stopping: the seeds under way are abandoned (the same signal again quits at once)\n";
    if STOPPED_BY
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        // SAFETY: `signal` and `raise` are async-signal-safe; the default action ends the process.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    } else {
        // The seeds under way stop at their next step instead of running to their end (one
        // atomic store).
        crate::engines::abandon_runs();
        // SAFETY: `write` is async-signal-safe; the buffer is a static byte string.
        unsafe {
            libc::write(libc::STDERR_FILENO, NOTE.as_ptr().cast(), NOTE.len());
        }
    }
}

/// From now on, the first Ctrl-C, SIGTERM or SIGHUP sets [`interrupted`] instead of ending the
/// process.
pub fn stop_on_ctrl_c() {
    #[cfg(unix)]
    for signal in STOPPING_SIGNALS {
        // SAFETY: installs a handler that only touches an atomic and calls async-signal-safe
        // functions.
        unsafe {
            libc::signal(
                signal,
                on_ctrl_c as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// Writing to a closed pipe ends the process quietly (the default Unix action), as it does for
/// the usual command-line tools; Rust's runtime ignores the signal, which turns the next
/// `println!` into a panic.
pub fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restores the default action of SIGPIPE before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The exit status when standard output or standard error cannot be written (`EX_IOERR`).
pub const OUTPUT_FAILED_EXIT: u8 = 74;

/// If `panic` is std's `println!`/`print!` failing to write (a full disk, a closed terminal),
/// what to say about it.
pub fn output_failure(panic: &std::panic::PanicHookInfo<'_>) -> Option<String> {
    let text = panic
        .payload()
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.payload().downcast_ref::<&str>().copied())?;
    let rest = text.strip_prefix("failed printing to ")?;
    let (stream, error) = rest.split_once(": ").unwrap_or((rest, "unknown error"));
    Some(format!("cannot write to {stream}: {error}"))
}
