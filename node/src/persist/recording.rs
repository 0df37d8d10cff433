//! [`RecordingPersister`]: keeps every save in order, so a test or a loom model can take a crash
//! at any point (any prefix of the saves) and check what a restarted node would believe.

use super::{PersistentState, Persister, StorageError};
use threadsim::sync::Mutex;

/// A persister that remembers every state it was asked to save.
#[derive(Default)]
pub struct RecordingPersister {
    saves: Mutex<Vec<Vec<u8>>>,
}

impl RecordingPersister {
    /// An empty persister.
    pub fn new() -> RecordingPersister {
        RecordingPersister::default()
    }

    /// How many saves have completed.
    pub fn save_count(&self) -> usize {
        self.saves.lock().len()
    }

    /// The state a node restarted after the first `count` saves would load.
    pub fn state_after(&self, count: usize) -> PersistentState {
        match count {
            0 => PersistentState::default(),
            n => PersistentState::decode(&self.saves.lock()[n - 1]).expect("a save decodes"),
        }
    }
}

impl Persister for RecordingPersister {
    fn save(&self, bytes: &[u8]) -> Result<(), StorageError> {
        self.saves.lock().push(bytes.to_vec());
        Ok(())
    }

    fn load(&self) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.saves.lock().last().cloned())
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::Term;

    #[test]
    fn every_save_is_kept_and_a_crash_after_any_of_them_can_be_taken() {
        let persister = RecordingPersister::new();
        assert_eq!(persister.load(), Ok(None));
        let states: Vec<PersistentState> = (1..=3)
            .map(|term| PersistentState {
                current_term: Term(term),
                ..PersistentState::default()
            })
            .collect();
        for state in &states {
            persister.save(&state.encode()).expect("in memory");
        }
        assert_eq!(persister.save_count(), 3);
        assert_eq!(persister.state_after(0), PersistentState::default());
        assert_eq!(persister.state_after(1), states[0]);
        assert_eq!(persister.state_after(2), states[1]);
        assert_eq!(persister.load(), Ok(Some(states[2].encode())));
    }
}
