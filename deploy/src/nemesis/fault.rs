//! The kinds of fault a nemesis can inject, by name, and the concrete faults of a plan.

use node::NodeId;
use std::fmt;
use std::time::Duration;

/// A kind of fault, as `--faults` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// A minority (the leader, often) cut off from the rest: every link into and out of it cut,
    /// and the writing clients on the majority's side.
    Partition,
    /// Every link out of a node (or into it) cut, the other direction working.
    OneWay,
    /// Every link into and out of a node slowed by tens to hundreds of milliseconds.
    Delay,
    /// `kill -9` of a node (the leader, often) or of every node at once, then a restart from its
    /// files.
    Kill,
    /// SIGSTOP past the election timeout, then SIGCONT.
    Pause,
    /// A node's clock run fast or slow within the nodes' drift bound (0.9x to 1.1x).
    Clock,
    /// A node's disk fails every write (EIO): the node must stop, having acknowledged nothing it
    /// could not write; it is then restarted on a working disk.
    Disk,
    /// A node's clock run far beyond the drift bound (0.5x to 1.5x) and jumped forward:
    /// deliberately unsafe for lease reads, so not part of `all`.
    ClockBeyond,
}

impl FaultKind {
    /// Every kind.
    pub const ALL: [FaultKind; 8] = [
        FaultKind::Partition,
        FaultKind::OneWay,
        FaultKind::Delay,
        FaultKind::Kill,
        FaultKind::Pause,
        FaultKind::Clock,
        FaultKind::Disk,
        FaultKind::ClockBeyond,
    ];

    /// What `all` means: every kind a correct cluster must survive with every read mode.
    pub const SAFE: [FaultKind; 7] = [
        FaultKind::Partition,
        FaultKind::OneWay,
        FaultKind::Delay,
        FaultKind::Kill,
        FaultKind::Pause,
        FaultKind::Clock,
        FaultKind::Disk,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Partition => "partition",
            FaultKind::OneWay => "one-way",
            FaultKind::Delay => "delay",
            FaultKind::Kill => "kill",
            FaultKind::Pause => "pause",
            FaultKind::Clock => "clock",
            FaultKind::Disk => "disk",
            FaultKind::ClockBeyond => "clock-beyond",
        }
    }

    /// What it does, in a line (for `--help`).
    pub fn describe(self) -> &'static str {
        match self {
            FaultKind::Partition => "a minority, often the leader, cut off from the rest",
            FaultKind::OneWay => "every link out of (or into) a node cut",
            FaultKind::Delay => "every link of a node slowed by 20-300 ms",
            FaultKind::Kill => "kill -9 of a node, often the leader, or of all; then a restart",
            FaultKind::Pause => "SIGSTOP of a node past the election timeout, then SIGCONT",
            FaultKind::Clock => "a node's clock at 0.9x-1.1x (within the drift bound)",
            FaultKind::Disk => "a node's disk fails every write: it must stop; then a restart",
            FaultKind::ClockBeyond => {
                "a node's clock at 0.5x-1.5x and jumped forward (unsafe for lease reads)"
            }
        }
    }
}

impl std::str::FromStr for FaultKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        FaultKind::ALL
            .into_iter()
            .find(|kind| kind.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = FaultKind::ALL.map(FaultKind::name).to_vec();
                format!("{text:?}: known faults are {}", names.join(", "))
            })
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which node a fault hits, decided when it is injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The node that leads then; `otherwise` when none does (or two believe they do).
    Leader {
        /// The node hit when there is no single leader.
        otherwise: NodeId,
    },
    /// This node.
    Node(NodeId),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Leader { otherwise } => write!(f, "the leader (else {otherwise})"),
            Target::Node(node) => write!(f, "{node}"),
        }
    }
}

/// Which links of a node a one-way cut takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The node's calls to the others (and their answers) fail; theirs to it go through.
    Outgoing,
    /// The others' calls to the node fail; its calls to them go through.
    Incoming,
}

/// One fault of a plan, with everything drawn from the seed that it needs.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// The target and `size - 1` other nodes cut off from the rest.
    Partition {
        /// The first node of the minority.
        target: Target,
        /// How many nodes the minority has (less than half).
        size: u32,
    },
    /// The target's links in one direction cut.
    OneWay {
        /// The node.
        target: Target,
        /// Which links.
        direction: Direction,
    },
    /// Every link into and out of the target slowed.
    Delay {
        /// The node.
        target: Target,
        /// How long each chunk of bytes is held.
        by: Duration,
    },
    /// The target killed with SIGKILL, restarted when the fault ends.
    Kill {
        /// The node.
        target: Target,
    },
    /// Every node killed with SIGKILL at once, all restarted when the fault ends.
    KillAll,
    /// The target stopped with SIGSTOP, resumed with SIGCONT when the fault ends.
    Pause {
        /// The node.
        target: Target,
    },
    /// The target's clock set to run at `rate_ppm` and jumped forward by `jump`; its rate is set
    /// back to 1x when the fault ends (a jump stays).
    Clock {
        /// The node.
        target: Target,
        /// Local seconds per true second, in millionths.
        rate_ppm: u64,
        /// How far the clock jumps forward.
        jump: Duration,
    },
    /// The target's disk fails every write: it must exit; restarted when the fault ends.
    Disk {
        /// The node.
        target: Target,
    },
}

impl Fault {
    /// The kind it is one of.
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::Partition { .. } => FaultKind::Partition,
            Fault::OneWay { .. } => FaultKind::OneWay,
            Fault::Delay { .. } => FaultKind::Delay,
            Fault::Kill { .. } | Fault::KillAll => FaultKind::Kill,
            Fault::Pause { .. } => FaultKind::Pause,
            Fault::Clock { jump, .. } if !jump.is_zero() => FaultKind::ClockBeyond,
            Fault::Clock { rate_ppm, .. } if rate_ppm.abs_diff(1_000_000) > 100_000 => {
                FaultKind::ClockBeyond
            }
            Fault::Clock { .. } => FaultKind::Clock,
            Fault::Disk { .. } => FaultKind::Disk,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Partition { target, size: 1 } => write!(f, "partition: {target} cut off"),
            Fault::Partition { target, size } => {
                write!(f, "partition: {target} and {} more cut off", size - 1)
            }
            Fault::OneWay {
                target,
                direction: Direction::Outgoing,
            } => write!(f, "one-way: every link out of {target} cut"),
            Fault::OneWay {
                target,
                direction: Direction::Incoming,
            } => write!(f, "one-way: every link into {target} cut"),
            Fault::Delay { target, by } => {
                write!(f, "delay: every link of {target} slowed by {by:?}")
            }
            Fault::Kill { target } => write!(f, "kill -9 {target}"),
            Fault::KillAll => write!(f, "kill -9 every node"),
            Fault::Pause { target } => write!(f, "SIGSTOP {target}"),
            Fault::Clock {
                target,
                rate_ppm,
                jump,
            } => {
                let rate = *rate_ppm as f64 / 1e6;
                if jump.is_zero() {
                    write!(f, "clock of {target} at {rate:.3}x")
                } else {
                    write!(
                        f,
                        "clock of {target} at {rate:.3}x, jumped {jump:?} forward"
                    )
                }
            }
            Fault::Disk { target } => write!(f, "disk of {target} fails every write"),
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_from_its_name_and_an_unknown_name_lists_them() {
        for kind in FaultKind::ALL {
            assert_eq!(kind.name().parse::<FaultKind>(), Ok(kind));
        }
        let error = "fire".parse::<FaultKind>().unwrap_err();
        assert!(error.contains("partition, one-way"), "{error}");
        assert!(!FaultKind::SAFE.contains(&FaultKind::ClockBeyond));
    }

    #[test]
    fn a_clock_fault_beyond_the_drift_bound_is_of_the_unsafe_kind() {
        let target = Target::Node(NodeId(1));
        let clock = |rate_ppm, jump| Fault::Clock {
            target,
            rate_ppm,
            jump,
        };
        assert_eq!(clock(900_000, Duration::ZERO).kind(), FaultKind::Clock);
        assert_eq!(clock(1_100_000, Duration::ZERO).kind(), FaultKind::Clock);
        assert_eq!(
            clock(899_999, Duration::ZERO).kind(),
            FaultKind::ClockBeyond
        );
        assert_eq!(
            clock(1_000_000, Duration::from_millis(1)).kind(),
            FaultKind::ClockBeyond
        );
    }
}
