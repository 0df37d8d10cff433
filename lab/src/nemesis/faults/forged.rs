//! The forged fault: a process outside the cluster, holding neither key, sends every node forged
//! votes, appends, handovers, huge frames and administrator's requests while the clients run
//! ([`Forger`]). Each must be refused and the cluster must not notice. Named on its own
//! (`--faults all,forged`): it tests the servers' gates rather than the protocol.

use super::millis;
use crate::nemesis::error::{Finding, NemesisError};
use crate::nemesis::fault::{fault_boilerplate, Fault, Injected, Injection};
use crate::nemesis::fault::{FaultKind, KindSpec, Outage};
use crate::nemesis::forger::{Forger, Targets};
use crate::nemesis::inject::Nemesis;
use crate::nemesis::target::Target;
use std::fmt;
use std::time::Instant;

/// A stranger's forged messages to every node while the clients run.
pub static FORGED: KindSpec = KindSpec {
    name: "forged",
    describe: "a stranger sends every node forged votes, appends, huge frames and \
               administrator's requests: each must be refused (not part of all)",
    in_all: false,
    needs_cooperation: true,
    // Messages from a stranger must cost the leader nothing: only the clients' own retries.
    outage: Outage::Nothing,
    draw: |rng, target, _| (Box::new(Forged { target }), millis(rng, 3000, 6000)),
    ..KindSpec::PLAIN
};

/// Forged messages sent to every node until the fault ends; aimed at the target as far as
/// availability is counted (the leader's writes must not stop).
#[derive(Clone, Debug, PartialEq)]
pub struct Forged {
    /// The node whose leadership is watched.
    pub target: Target,
}

impl Fault for Forged {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&FORGED)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let (_, named) = nemesis.resolve(self.target);
        let forger = Forger::start(Targets::of(nemesis.cluster))
            .map_err(NemesisError::io("cannot start the forger"))?;
        let what = format!("forged: a stranger's messages to every node ({named} watched)");
        Ok(Injection::new(what, Forging(forger)))
    }

    fault_boilerplate!();
}

impl fmt::Display for Forged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = self.target;
        write!(
            f,
            "forged: a stranger's messages to every node, {target} watched"
        )
    }
}

/// A stranger sends forged messages: stop it, and count what came of them.
pub struct Forging(Forger);

impl Injected for Forging {
    fn heal(self: Box<Self>, _: &mut Nemesis<'_>, _: Instant) -> Result<String, Finding> {
        let tally = self.0.stop();
        if tally.taken.is_empty() && tally.refused > 0 {
            Ok(tally.describe())
        } else if tally.taken.is_empty() {
            Err(Finding(format!(
                "{}: none reached a node",
                tally.describe()
            )))
        } else {
            Err(Finding(format!(
                "{}: {}",
                tally.describe(),
                tally.taken.join("; ")
            )))
        }
    }
}
