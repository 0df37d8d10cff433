//! The core's local invariants, checked after every call by the shell: each must be able to fail.

use super::*;

#[test]
fn a_commit_beyond_the_log_and_a_leader_without_its_own_vote_are_reported() {
    let mut core = core(0, 3);
    assert_eq!(core.check_invariants(), Ok(()));
    core.commit_index = LogIndex(1);
    let error = core.check_invariants().unwrap_err();
    assert!(error.contains("beyond last log index"), "{error}");
    core.commit_index = LogIndex(0);
    elect(&mut core);
    assert_eq!(core.check_invariants(), Ok(()));
    core.state.voted_for = None;
    let error = core.check_invariants().unwrap_err();
    assert!(error.contains("did not vote for itself"), "{error}");
}
