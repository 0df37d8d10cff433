//! **Vote durability** (Raft Figure 2: `currentTerm` and `votedFor` are on stable storage before
//! a node answers): a node that granted its vote in a term never grants it to another candidate
//! in that term, and never comes back from a restart with an older term or without that vote.
//! Checked on every vote granted and every restart, so a node that forgets its vote is caught at
//! its first restart after voting, whether or not a second candidate ever asks it.

use node::{NodeId, Term};
use std::collections::BTreeMap;

/// The last vote every node granted, across its restarts.
#[derive(Default)]
pub(super) struct VoteDurability {
    votes: BTreeMap<NodeId, (Term, NodeId)>,
}

impl VoteDurability {
    /// `node` granted its vote of `term` to `candidate`.
    pub fn on_vote_granted(
        &mut self,
        node: NodeId,
        term: Term,
        candidate: NodeId,
    ) -> Result<(), String> {
        if let Some(&(voted_term, voted_for)) = self.votes.get(&node) {
            if voted_term == term && voted_for != candidate {
                return Err(format!(
                    "Vote durability: {node} voted for {voted_for} in {term}, then for \
                     {candidate} in the same term"
                ));
            }
            if voted_term > term {
                return Ok(());
            }
        }
        self.votes.insert(node, (term, candidate));
        Ok(())
    }

    /// A new instance of `node` restored `term` and `voted_for` from its disk.
    pub fn on_restored(
        &self,
        node: NodeId,
        term: Term,
        voted_for: Option<NodeId>,
    ) -> Result<(), String> {
        let Some(&(voted_term, candidate)) = self.votes.get(&node) else {
            return Ok(());
        };
        if term < voted_term {
            return Err(format!(
                "Vote durability: {node} voted for {candidate} in {voted_term} and restarted in \
                 {term}: its term went back"
            ));
        }
        if term == voted_term && voted_for != Some(candidate) {
            let restored = voted_for.map_or_else(|| "no vote".to_string(), |v| v.to_string());
            return Err(format!(
                "Vote durability: {node} voted for {candidate} in {term} and restarted with \
                 {restored} in that term"
            ));
        }
        Ok(())
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_vote_forgotten_across_a_restart_or_given_twice_is_caught() {
        let mut property = VoteDurability::default();
        let (voter, a, b) = (NodeId(0), NodeId(1), NodeId(2));
        assert_eq!(property.on_restored(voter, Term(0), None), Ok(()));
        assert_eq!(property.on_vote_granted(voter, Term(3), a), Ok(()));
        assert_eq!(property.on_vote_granted(voter, Term(3), a), Ok(()));
        assert_eq!(property.on_restored(voter, Term(3), Some(a)), Ok(()));
        assert_eq!(property.on_restored(voter, Term(4), None), Ok(()));
        let forgot = property.on_restored(voter, Term(3), None).unwrap_err();
        assert!(
            forgot.contains("n0 voted for n1 in t3 and restarted with no vote"),
            "{forgot}"
        );
        let back = property.on_restored(voter, Term(2), None).unwrap_err();
        assert!(back.contains("its term went back"), "{back}");
        let twice = property.on_vote_granted(voter, Term(3), b).unwrap_err();
        assert!(twice.contains("then for n2 in the same term"), "{twice}");
        // A vote of an older term, answered late, does not replace the newer one.
        assert_eq!(property.on_vote_granted(voter, Term(5), b), Ok(()));
        assert_eq!(property.on_vote_granted(voter, Term(4), a), Ok(()));
        assert!(property.on_restored(voter, Term(5), Some(a)).is_err());
    }
}
