//! **Election Safety** (Raft §5.2, Figure 3): at most one leader can be elected in a given term.
//! Checked on every role change of every node.

use node::{NodeId, Term};
use std::collections::BTreeMap;

/// The leader of every term that had one.
#[derive(Default)]
pub(super) struct ElectionSafety {
    leaders: BTreeMap<Term, NodeId>,
}

impl ElectionSafety {
    /// `node` became leader of `term`; returns whether it is the first leader of that term, or
    /// the violation.
    pub fn on_leader(&mut self, node: NodeId, term: Term) -> Result<bool, String> {
        match self.leaders.get(&term) {
            Some(&other) if other != node => Err(format!(
                "Election Safety: {other} and {node} are both leaders of {term}"
            )),
            Some(_) => Ok(false),
            None => {
                self.leaders.insert(term, node);
                Ok(true)
            }
        }
    }

    /// The newest term that had a leader.
    pub fn newest_term(&self) -> Option<Term> {
        self.leaders.keys().next_back().copied()
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn two_leaders_in_one_term_violate_election_safety() {
        let mut property = ElectionSafety::default();
        assert_eq!(property.on_leader(NodeId(0), Term(4)), Ok(true));
        assert_eq!(property.on_leader(NodeId(0), Term(4)), Ok(false));
        let violation = property.on_leader(NodeId(1), Term(4)).unwrap_err();
        assert!(
            violation.contains("n0 and n1 are both leaders of t4"),
            "{violation}"
        );
        assert_eq!(property.newest_term(), Some(Term(4)));
    }
}
