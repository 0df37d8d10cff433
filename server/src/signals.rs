//! SIGTERM, SIGINT (Ctrl-C) and SIGHUP (a closed terminal) ask a running server to stop cleanly: close its listeners, stop
//! its node and join every thread. SIGKILL, of course, cannot be asked anything; the state
//! files are made for it.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP_ASKED: AtomicBool = AtomicBool::new(false);

extern "C" fn ask_to_stop(_signal: libc::c_int) {
    STOP_ASKED.store(true, Ordering::SeqCst);
}

/// From now on SIGTERM, SIGINT and SIGHUP set [`stop_asked`] instead of ending the process.
pub fn stop_on_term_or_interrupt() {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(
                signal,
                ask_to_stop as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// Whether SIGTERM, SIGINT or SIGHUP arrived since [`stop_on_term_or_interrupt`].
pub fn stop_asked() -> bool {
    STOP_ASKED.load(Ordering::SeqCst)
}
