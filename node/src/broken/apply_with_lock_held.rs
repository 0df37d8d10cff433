//! `apply-with-lock-held`: the applier hands entries to the service while holding the node's
//! lock (the 6.5840 lab 3 deadlock). A service that calls into the node (`start`) while the apply
//! channel is full then waits for the lock the applier holds, while the applier waits for the
//! service to make room. (This node hands every entry to its applier: its handlers never deliver
//! on their own thread.)

use crate::shell::{Pass, Shell};

/// The broken applier pass: takes a batch and sends it with the lock still held.
pub fn applier_pass(shell: &Shell) -> Pass {
    let mut locked = shell.lock();
    if let Some(pass) = locked.gate() {
        return pass;
    }
    if locked.delivering {
        return Pass::WaitUntil(None);
    }
    let batch = shell.take_committed(&mut locked, shell.config.max_entries_per_apply_batch);
    if batch.is_empty() {
        return Pass::WaitUntil(None);
    }
    let sent = shell.apply_sender.send_all(batch).is_ok();
    drop(locked);
    if sent {
        Pass::Again
    } else {
        Pass::Exit
    }
}
