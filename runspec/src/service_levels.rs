//! What a user asks of the replicated store's availability, stated once and apart from any
//! node's settings: how soon writes commit again after one fault on the leader. The simulation's
//! availability checks hold every window to these as well as to the bound the node's own timing
//! analysis gives (`node::Config::commit_bound_leader_lost` and its kin): a bound derived from
//! the settings under test grows with a timing set wrong and so can never catch it; a service
//! level does not move.
//!
//! The figures are a user's, for the default timing: a five-node store that takes writes again
//! within 4 s of losing its leader, and within 5 s when the leader must first find out it has
//! lost its quorum (it still sends but hears nothing). They are met by the node's own analysis at
//! its default timing with every split vote the checks allow (a test in `sim` checks it), so a
//! correct run never fails them; a timing that does not meet them fails the run, whatever its
//! derived bound says.

use std::time::Duration;

/// The availability a user asks for after one fault on the leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceLevels {
    /// Writes commit again within this long after the leader is lost: crashed, paused, cut off
    /// with a minority, or unable to send.
    pub writes_after_leader_lost: Duration,
    /// Writes commit again within this long after the leader stops hearing a majority while it
    /// still sends (it must find out before anyone else may lead).
    pub writes_after_leader_deaf: Duration,
}

/// The service levels every simulated availability check holds a run to.
pub const SERVICE_LEVELS: ServiceLevels = ServiceLevels {
    writes_after_leader_lost: Duration::from_secs(4),
    writes_after_leader_deaf: Duration::from_secs(5),
};
