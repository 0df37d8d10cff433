//! The shell's own checks, independent of the core's rules: the commit index and the term never
//! go back, nothing is applied beyond the commit index, and a higher term seen in any message is
//! adopted (Raft Figure 2, rules for all servers).

use super::state::{Locked, Shell};
use crate::Term;

impl Shell {
    /// Checks the core's and the shell's invariants after every batch of effects.
    pub fn check_invariants(&self, locked: &mut Locked) {
        if let Err(description) = locked.core.check_invariants() {
            self.report(description);
        }
        let (commit, term) = (locked.core.commit_index(), locked.core.term());
        if commit < locked.highest_commit_seen {
            self.report(format!(
                "{}: commit index went back from {} to {commit}",
                self.id, locked.highest_commit_seen
            ));
        }
        if term < locked.highest_term_seen {
            self.report(format!(
                "{}: term went back from {} to {term}",
                self.id, locked.highest_term_seen
            ));
        }
        if locked.last_applied > commit {
            self.report(format!(
                "{}: applied {} beyond commit index {commit}",
                self.id, locked.last_applied
            ));
        }
        locked.highest_commit_seen = locked.highest_commit_seen.max(commit);
        locked.highest_term_seen = locked.highest_term_seen.max(term);
    }

    /// Raft Figure 2, for all servers: a message carrying a higher term makes the receiver adopt
    /// it (and step down). Checked here, independently of the core's rules.
    pub fn check_term_adopted(&self, locked: &Locked, seen: Term, what: &str) {
        let term = locked.core.term();
        if term < seen {
            self.report(format!(
                "{}: saw {seen} in a {what} but stayed in {term} as {:?}",
                self.id,
                locked.core.role()
            ));
        }
    }
}
