//! What each task of a controlled execution is waiting for, so a deadlock report can say it.
//!
//! Shuttle names the blocked tasks but not what they wait on. The facade notes, just before a
//! task may block, what it is about to wait for (a lock at a source location, a clock signal),
//! and clears the note once it goes on. All tasks of an execution run on one OS thread, so the
//! notes live in a thread-local that outlives the execution and can be read after shuttle has
//! reported the deadlock.

use crate::sync::Waiting;
use std::cell::RefCell;
use std::collections::BTreeMap;

#[derive(Default)]
struct Notes {
    /// Task id to what it waits for.
    waiting: BTreeMap<usize, Waiting>,
    /// Task id to name, filled the first time a task waits.
    names: BTreeMap<usize, String>,
}

std::thread_local! {
    static NOTES: RefCell<Notes> = RefCell::default();
}

fn current_task() -> Option<usize> {
    shuttle::current::try_get_current_task().map(usize::from)
}

/// Clears every note (a new execution starts).
pub(crate) fn reset() {
    NOTES.with(|notes| *notes.borrow_mut() = Notes::default());
}

/// While alive, the current task is noted as waiting for something.
pub(crate) struct WaitNote(Option<usize>);

impl Drop for WaitNote {
    fn drop(&mut self) {
        if let Some(task) = self.0 {
            NOTES.with(|notes| notes.borrow_mut().waiting.remove(&task));
        }
    }
}

/// Notes that the current task waits for `what` until the returned note is dropped. Cheap: no
/// allocation except the first time a task waits (its name).
pub(crate) fn waiting(what: Waiting) -> WaitNote {
    let Some(task) = current_task() else {
        return WaitNote(None);
    };
    NOTES.with(|notes| {
        let mut notes = notes.borrow_mut();
        notes.names.entry(task).or_insert_with(|| {
            shuttle::thread::current()
                .name()
                .unwrap_or("<unnamed>")
                .to_string()
        });
        notes.waiting.insert(task, what);
    });
    WaitNote(Some(task))
}

/// What the tasks noted when the execution stopped: one line per task
/// (`  name: waits for ...`), and how many wait for a lock and how many on a clock signal.
pub(crate) struct Report {
    /// The lines.
    pub lines: String,
    /// Tasks waiting for a lock.
    pub on_locks: usize,
    /// Tasks waiting on a clock signal.
    pub on_signals: usize,
}

/// The notes as they stand.
pub(crate) fn report() -> Report {
    NOTES.with(|notes| {
        let notes = notes.borrow();
        let mut report = Report {
            lines: String::new(),
            on_locks: 0,
            on_signals: 0,
        };
        for (task, what) in &notes.waiting {
            let name = notes.names.get(task).map_or("<unnamed>", String::as_str);
            report
                .lines
                .push_str(&format!("  {name}: waits for {what}\n"));
            match what {
                Waiting::Lock(_) => report.on_locks += 1,
                Waiting::Signal { .. } => report.on_signals += 1,
            }
        }
        report
    })
}
