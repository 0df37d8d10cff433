//! Keeping track of the threads this crate starts, so that every one is joined.

use std::thread::JoinHandle;

/// Joins the threads of `threads` that have finished and keeps the others.
pub fn join_finished(threads: &mut Vec<JoinHandle<()>>) {
    let (finished, running): (Vec<_>, Vec<_>) = std::mem::take(threads)
        .into_iter()
        .partition(JoinHandle::is_finished);
    *threads = running;
    join_all(finished);
}

/// Joins every thread of `threads`, propagating a panic.
pub fn join_all(threads: Vec<JoinHandle<()>>) {
    for thread in threads {
        if let Err(panic) = thread.join() {
            std::panic::resume_unwind(panic);
        }
    }
}
