//! Spawning threads the clock knows about, and joining them without stopping simulated time.

use super::{ClockRef, Signal};
use crate::sync::thread;
use crate::sync::Arc;

/// A handle to a thread spawned with [`spawn`].
pub struct ClockJoinHandle<T> {
    name: String,
    exited: Arc<Signal>,
    handle: thread::JoinHandle<T>,
}

/// Spawns a named thread that `clock` counts as running from before it starts until it exits.
///
/// A fake clock must never see "every thread durably blocked" while a thread is merely not yet
/// started, so the thread is registered before it is spawned and unregistered as its last act
/// (also when it panics).
pub fn spawn<F, T>(clock: &ClockRef, name: impl Into<String>, body: F) -> ClockJoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let name = name.into();
    let ticket = clock.thread_register(&name);
    let exited = Arc::new(Signal::new(clock, &format!("join {name}")));
    let on_exit = ExitGuard {
        clock: clock.clone(),
        exited: exited.clone(),
        ticket,
    };
    let context = crate::context::current();
    let handle = thread::Builder::new()
        .name(name.clone())
        .spawn(move || {
            let _entered = crate::context::enter(context);
            let _on_exit = on_exit;
            body()
        })
        .unwrap_or_else(|error| panic!("cannot spawn thread {name}: {error}"));
    ClockJoinHandle {
        name,
        exited,
        handle,
    }
}

struct ExitGuard {
    clock: ClockRef,
    exited: Arc<Signal>,
    ticket: super::ThreadTicket,
}

impl Drop for ExitGuard {
    fn drop(&mut self) {
        // Notify first: the joiner stops being durably blocked before this thread stops being
        // counted, so simulated time cannot jump in between.
        self.exited.notify();
        self.clock.thread_unregister(self.ticket);
    }
}

impl<T> ClockJoinHandle<T> {
    /// The thread's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Waits (durably blocked, as far as the clock is concerned) for the thread to exit, then
    /// joins it. A panic in the thread is resumed in the caller.
    pub fn join(self) -> T {
        self.exited.wait();
        match self.handle.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}
