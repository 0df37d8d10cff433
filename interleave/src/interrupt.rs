//! Ctrl-C and closed pipes, handled the way a command-line tool should.
//!
//! - **Ctrl-C** during `chaos` or `shrink`: the first one asks the command to stop at the next
//!   boundary (no new seed starts; a shrink keeps the smallest failing schedule found so far and
//!   writes it), and says so on standard error; a second one ends the process at once. Commands
//!   that do not ask ([`stop_on_ctrl_c`] not called) keep the default: Ctrl-C ends them.
//! - **A closed pipe** (`interleave chaos | head`): the process ends quietly, as `cat` does,
//!   instead of panicking on its next `println!`.
//! - **An output that cannot be written** (`> /dev/full`): one line saying so, exit 74
//!   (`EX_IOERR`), instead of a panic.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const INTERRUPTED_EXIT: u8 = 130;

/// Whether Ctrl-C was pressed since [`stop_on_ctrl_c`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

#[cfg(unix)]
extern "C" fn on_ctrl_c(_signal: libc::c_int) {
    const NOTE: &[u8] =
        b"\ninterleave: stopping at the next boundary (Ctrl-C again to quit at once)\n";
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        // SAFETY: `signal` and `raise` are async-signal-safe; the default action ends the process.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::raise(libc::SIGINT);
        }
    } else {
        // SAFETY: `write` is async-signal-safe; the buffer is a static byte string.
        unsafe {
            libc::write(libc::STDERR_FILENO, NOTE.as_ptr().cast(), NOTE.len());
        }
    }
}

/// From now on, the first Ctrl-C sets [`interrupted`] instead of ending the process.
pub fn stop_on_ctrl_c() {
    #[cfg(unix)]
    // SAFETY: installs a handler that only touches an atomic and calls async-signal-safe
    // functions.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_ctrl_c as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
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
