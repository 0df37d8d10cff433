//! Faults of a node's disk: every write failing (EIO, made by a server that cooperates), the
//! disk full (ENOSPC on its lossy disk), a power cut that loses what was written and not synced,
//! and a file damaged while the node is stopped. A node whose disk fails must exit having
//! acknowledged nothing it could not write; one that finds damage must refuse it, never serve
//! it.

use super::millis;
use crate::lossy_fs::{Corruption, LossMode};
use crate::nemesis::error::{Finding, NemesisError};
use crate::nemesis::fault::{fault_boilerplate, Fault, Injected, Injection};
use crate::nemesis::fault::{FaultKind, KindSpec};
use crate::nemesis::faults::processes::Killed;
use crate::nemesis::inject::{Nemesis, CONTROL_TIMEOUT};
use crate::nemesis::target::Target;
use node::NodeId;
use server::real_time::now;
use std::fmt;
use std::time::{Duration, Instant};

/// How long a node whose disk failed has to stop.
const TO_STOP: Duration = Duration::from_secs(5);

/// A node's disk fails every write (EIO): the node must stop, having acknowledged nothing it
/// could not write; it is then restarted on a working disk.
pub static DISK: KindSpec = KindSpec {
    name: "disk",
    describe: "a node's disk fails every write: it must stop; then a restart",
    needs_cooperation: true,
    draw: |_, target, _| (Box::new(DiskFault::Fails(target)), TO_STOP),
    ..KindSpec::PLAIN
};

/// A power cut to a node (the leader, often) or to every node at once: killed with SIGKILL, and
/// what its lossy disk was written and not synced lost; then a restart.
pub static POWER_LOSS: KindSpec = KindSpec {
    name: "power-loss",
    describe: "power cut to a node, often the leader, or to all: unsynced writes lost (FUSE)",
    needs_lossy_disks: true,
    draw: |rng, target, _| {
        let mode = LossMode::ALL[rng.index(LossMode::ALL.len())];
        // Half of the cuts take every node: only then can a write that every replica
        // acknowledged without syncing be lost by all of them.
        if rng.chance(0.5) {
            let cut = PowerLoss { target: None, mode };
            (Box::new(cut), millis(rng, 500, 2000))
        } else {
            let target = Some(target);
            (Box::new(PowerLoss { target, mode }), millis(rng, 500, 3000))
        }
    },
    ..KindSpec::PLAIN
};

/// A node's lossy disk full: every write fails with ENOSPC, the node must stop; then a restart
/// with room again.
pub static DISK_FULL: KindSpec = KindSpec {
    name: "disk-full",
    describe: "a node's disk full (ENOSPC): it must stop; then a restart",
    needs_lossy_disks: true,
    draw: |_, target, _| (Box::new(DiskFault::Full(target)), TO_STOP),
    ..KindSpec::PLAIN
};

/// A node stopped, a bit flipped or a sector zeroed in one of its files, the node started
/// again: it must refuse the damage (or repair it), never serve it.
pub static CORRUPT: KindSpec = KindSpec {
    name: "corrupt",
    describe: "a bit flipped or a sector zeroed in a file of a stopped node",
    needs_lossy_disks: true,
    draw: |rng, target, _| {
        let zero_sector = rng.chance(0.5);
        let corrupt = Corrupt {
            target,
            zero_sector,
        };
        (Box::new(corrupt), millis(rng, 2000, 4000))
    },
    ..KindSpec::PLAIN
};

/// The target's disk stops taking writes: it must exit; restarted when the fault ends.
#[derive(Clone, Debug, PartialEq)]
pub enum DiskFault {
    /// Every write fails (EIO), at the server's own hand.
    Fails(Target),
    /// The lossy disk is full (ENOSPC).
    Full(Target),
}

/// The target's power cut (every node's, without one): killed, its unsynced writes lost as
/// `mode` says; restarted when the fault ends.
#[derive(Clone, Debug, PartialEq)]
pub struct PowerLoss {
    /// The node; `None`: every node at once.
    pub target: Option<Target>,
    /// What each file keeps of its unsynced writes.
    pub mode: LossMode,
}

/// The target stopped, one of its files damaged, the target started again; if it refuses to
/// start, the damage is undone and it is started once more when the fault ends.
#[derive(Clone, Debug, PartialEq)]
pub struct Corrupt {
    /// The node.
    pub target: Target,
    /// A sector zeroed (else a bit flipped).
    pub zero_sector: bool,
}

impl Fault for DiskFault {
    fn kind(&self) -> FaultKind {
        match self {
            DiskFault::Fails(_) => FaultKind::of(&DISK),
            DiskFault::Full(_) => FaultKind::of(&DISK_FULL),
        }
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let (node, named) = match *self {
            DiskFault::Fails(target) | DiskFault::Full(target) => nemesis.resolve(target),
        };
        let what = match self {
            DiskFault::Fails(_) => {
                (nemesis.control()?.fail_disk(node, CONTROL_TIMEOUT))
                    .map_err(NemesisError::server(format!("the disk of {node}")))?;
                format!("disk of {named} fails every write")
            }
            DiskFault::Full(_) => {
                (nemesis.cluster.set_disk_full(node, true))
                    .map_err(NemesisError::io(format!("the disk of {node}")))?;
                format!("disk of {named} full")
            }
        };
        Ok(Injection::new(what, DiskFailed { node, since: now() }))
    }

    fault_boilerplate!();
}

impl fmt::Display for DiskFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiskFault::Fails(target) => write!(f, "disk of {target} fails every write"),
            DiskFault::Full(target) => write!(f, "disk of {target} full"),
        }
    }
}

/// This node's disk was made to fail (or full) at `since`: it must exit; start it again on a
/// working disk.
pub struct DiskFailed {
    node: NodeId,
    since: Instant,
}

impl Injected for DiskFailed {
    fn heal(self: Box<Self>, nemesis: &mut Nemesis<'_>, limit: Instant) -> Result<String, Finding> {
        let DiskFailed { node, since } = *self;
        let exited = (nemesis.cluster)
            .wait_for_exit(node, limit.saturating_duration_since(now()))
            .map_err(|error| Finding(format!("waiting for {node}: {error}")))?;
        let after = now().saturating_duration_since(since);
        let outcome = match exited {
            Some(status) if status.code() == Some(1) => Ok(format!(
                "{node} stopped (exit status 1) {after:.1?} after its disk failed; restarted on \
                 a working disk"
            )),
            Some(status) => Err(Finding(format!(
                "{node}'s disk failed and it exited with {status}, not with 1 and a message"
            ))),
            None => {
                let _ = nemesis.cluster.kill_9(node);
                Err(Finding(format!(
                    "{node} kept running {after:.1?} after its disk failed: it went on as if its \
                     writes had been made"
                )))
            }
        };
        if nemesis.cluster.has_lossy_disks() {
            (nemesis.cluster.set_disk_full(node, false))
                .map_err(|error| Finding(format!("the disk of {node}: {error}")))?;
        }
        nemesis.start(&[node])?;
        outcome
    }

    fn down(&self) -> Vec<NodeId> {
        vec![self.node]
    }

    fn healed_once_stopped(&self) -> bool {
        true
    }
}

impl Fault for PowerLoss {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&POWER_LOSS)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let mode = self.mode;
        let Some(target) = self.target else {
            let nodes = nemesis.cluster.ids();
            let reports = (nemesis.cluster.power_loss(&nodes, mode, &mut nemesis.rng))
                .map_err(NemesisError::io("power cut"))?;
            let lost: Vec<String> = (nodes.iter().zip(&reports))
                .map(|(node, report)| format!("{node} {}", report.bytes_lost))
                .collect();
            let what = format!(
                "power cut to every node ({mode}): unsynced bytes lost {}",
                lost.join(", ")
            );
            return Ok(Injection::new(what, Killed(nodes)));
        };
        let (node, named) = nemesis.resolve(target);
        let reports = (nemesis.cluster.power_loss(&[node], mode, &mut nemesis.rng))
            .map_err(NemesisError::io(format!("power cut to {node}")))?;
        let what = format!("power cut to {named}: {}", reports[0]);
        Ok(Injection::new(what, Killed(vec![node])))
    }

    fault_boilerplate!();
}

impl fmt::Display for PowerLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.target {
            Some(target) => write!(f, "power cut to {target} ({})", self.mode),
            None => write!(f, "power cut to every node ({})", self.mode),
        }
    }
}

impl Fault for Corrupt {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&CORRUPT)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let (node, named) = nemesis.resolve(self.target);
        nemesis.kill(&[node])?;
        let corruption = (nemesis.cluster)
            .corrupt(node, &mut nemesis.rng, self.zero_sector)
            .map_err(NemesisError::io(format!("damaging a file of {node}")))?;
        nemesis.start(&[node])?;
        let what = match &corruption {
            Some(corruption) => format!("{named} stopped, {corruption}, started"),
            None => format!("{named} stopped and started: it had no file to damage"),
        };
        Ok(Injection::new(what, Corrupted { node, corruption }))
    }

    fault_boilerplate!();
}

impl fmt::Display for Corrupt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.zero_sector {
            true => write!(f, "a sector zeroed in a file of {}", self.target),
            false => write!(f, "a bit flipped in a file of {}", self.target),
        }
    }
}

/// This node was stopped, one of its files damaged (if it had one) and the node started again:
/// if it refused to start, undo the damage and start it once more.
pub struct Corrupted {
    node: NodeId,
    corruption: Option<Corruption>,
}

impl Injected for Corrupted {
    /// What came of the damage: a node that runs took it (it was in nothing the node needed, or
    /// cut as a torn tail; the history says whether it served it); one that exited must have
    /// said what was damaged, and is started again on the undamaged file.
    fn heal(self: Box<Self>, nemesis: &mut Nemesis<'_>, _: Instant) -> Result<String, Finding> {
        let Corrupted { node, corruption } = *self;
        let exited = (nemesis.cluster.wait_for_exit(node, Duration::ZERO))
            .map_err(|error| Finding(format!("waiting for {node}: {error}")))?;
        let Some(status) = exited else {
            return Ok(format!("{node} ran on it"));
        };
        let log = nemesis.cluster.log(node);
        let said = log.lines().rev().find(|line| line.contains("damaged"));
        let outcome = match (said, &corruption) {
            (Some(line), Some(corruption)) => {
                (nemesis.cluster.repair(node, corruption))
                    .map_err(|error| Finding(format!("undoing the damage to {node}: {error}")))?;
                Ok(format!(
                    "{node} refused it ({status}: {}); the bytes put back, restarted",
                    line.trim()
                ))
            }
            _ => Err(Finding(format!(
                "{node} exited with {status} after a file was damaged, without saying what was \
                 damaged"
            ))),
        };
        nemesis.start(&[node])?;
        outcome
    }

    fn down(&self) -> Vec<NodeId> {
        vec![self.node]
    }
}
