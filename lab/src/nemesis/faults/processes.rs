//! Faults of the server processes: `kill -9` of a node (the leader, often) or of every node,
//! then a restart from its files; SIGSTOP past the election timeout, then SIGCONT.

use super::millis;
use crate::nemesis::error::{Finding, NemesisError};
use crate::nemesis::fault::{fault_boilerplate, Fault, Injected, Injection};
use crate::nemesis::fault::{FaultKind, KindSpec};
use crate::nemesis::inject::Nemesis;
use crate::nemesis::target::Target;
use node::NodeId;
use std::fmt;
use std::time::Instant;

/// `kill -9` of a node (the leader, often) or of every node at once, then a restart from its
/// files.
pub static KILL: KindSpec = KindSpec {
    name: "kill",
    describe: "kill -9 of a node, often the leader, or of all; then a restart",
    draw: |rng, target, _| {
        if rng.chance(0.25) {
            (Box::new(Kill::Every), millis(rng, 500, 2000))
        } else {
            (Box::new(Kill::One(target)), millis(rng, 500, 3000))
        }
    },
    ..KindSpec::PLAIN
};

/// SIGSTOP past the election timeout, then SIGCONT.
pub static PAUSE: KindSpec = KindSpec {
    name: "pause",
    describe: "SIGSTOP of a node past the election timeout, then SIGCONT",
    draw: |rng, target, _| (Box::new(Pause { target }), millis(rng, 1000, 3000)),
    ..KindSpec::PLAIN
};

/// Nodes killed with SIGKILL, restarted when the fault ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Kill {
    /// The target.
    One(Target),
    /// Every node at once.
    Every,
}

/// The target stopped with SIGSTOP, resumed with SIGCONT when the fault ends.
#[derive(Clone, Debug, PartialEq)]
pub struct Pause {
    /// The node.
    pub target: Target,
}

/// These nodes were killed (or lost their power): start them again.
pub struct Killed(pub Vec<NodeId>);

impl Injected for Killed {
    fn heal(self: Box<Self>, nemesis: &mut Nemesis<'_>, _: Instant) -> Result<String, Finding> {
        nemesis.start(&self.0)?;
        Ok("restarted".into())
    }

    fn down(&self) -> Vec<NodeId> {
        self.0.clone()
    }
}

/// This node was stopped with SIGSTOP: resume it.
pub struct Paused(NodeId);

impl Injected for Paused {
    fn heal(self: Box<Self>, nemesis: &mut Nemesis<'_>, _: Instant) -> Result<String, Finding> {
        let node = self.0;
        (nemesis.cluster.signal(node, libc::SIGCONT))
            .map_err(|error| Finding(format!("SIGCONT {node}: {error}")))?;
        Ok("resumed".into())
    }
}

impl Fault for Kill {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&KILL)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let (nodes, named) = match self {
            Kill::One(target) => {
                let (node, named) = nemesis.resolve(*target);
                (vec![node], named)
            }
            Kill::Every => (nemesis.cluster.ids(), "every node".to_string()),
        };
        nemesis.kill(&nodes)?;
        Ok(Injection::new(format!("kill -9 {named}"), Killed(nodes)))
    }

    fault_boilerplate!();
}

impl fmt::Display for Kill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kill::One(target) => write!(f, "kill -9 {target}"),
            Kill::Every => f.write_str("kill -9 every node"),
        }
    }
}

impl Fault for Pause {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&PAUSE)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let (node, named) = nemesis.resolve(self.target);
        (nemesis.cluster.signal(node, libc::SIGSTOP))
            .map_err(NemesisError::io(format!("SIGSTOP {node}")))?;
        Ok(Injection::new(format!("SIGSTOP {named}"), Paused(node)))
    }

    fault_boilerplate!();
}

impl fmt::Display for Pause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SIGSTOP {}", self.target)
    }
}
