//! `replicator-busy-waits`: a replicator with nothing to send looks again at once instead of
//! waiting until new entries or a reply wake it. On real threads the loop only burns a core and
//! everything still works; under fake time the node's threads never all block, the clock cannot
//! advance, and the run livelocks (the bound on thread switches at one instant reports it).

use crate::shell::Pass;

/// What the broken replicator does when it has nothing to send: another pass at once.
pub fn nothing_to_send() -> Pass {
    Pass::Again
}
