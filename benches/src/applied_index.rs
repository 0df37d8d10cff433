//! [`AppliedIndex`]: how far a node's service has applied, and the clients waiting for it.

use node::LogIndex;
use std::collections::BTreeMap;
use threadsim::sync::{Arc, Condvar, Mutex};

/// The highest index a service has applied, and which clients wait for which index. Like a
/// service's request handlers, each client is woken only once its own command is applied, not
/// on every batch.
#[derive(Default)]
pub struct AppliedIndex {
    state: Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    applied: LogIndex,
    /// The condvars of the clients waiting for each index.
    waiting: BTreeMap<LogIndex, Vec<Arc<Condvar>>>,
}

impl AppliedIndex {
    /// Records that everything up to `index` is applied and wakes the clients waiting for it.
    pub fn advance_to(&self, index: LogIndex) {
        let ready = {
            let mut state = self.state.lock();
            assert!(index >= state.applied, "applied index went back to {index}");
            state.applied = index;
            let later = state.waiting.split_off(&index.next());
            std::mem::replace(&mut state.waiting, later)
        };
        for condvar in ready.into_values().flatten() {
            condvar.notify_one();
        }
    }

    /// Blocks until `index` is applied; `wake` is the caller's own condvar.
    pub fn wait_for(&self, index: LogIndex, wake: &Arc<Condvar>) {
        let mut state = self.state.lock();
        if state.applied >= index {
            return;
        }
        state.waiting.entry(index).or_default().push(wake.clone());
        while state.applied < index {
            state = wake.wait(state);
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_client_waits_until_its_index_is_applied() {
        let applied = Arc::new(AppliedIndex::default());
        applied.advance_to(LogIndex(2));
        applied.wait_for(LogIndex(2), &Arc::new(Condvar::new()));
        let waiter = {
            let applied = applied.clone();
            std::thread::spawn(move || applied.wait_for(LogIndex(5), &Arc::new(Condvar::new())))
        };
        applied.advance_to(LogIndex(4));
        applied.advance_to(LogIndex(6));
        waiter
            .join()
            .expect("the waiter returns once index 5 is applied");
    }
}
