//! The kinds of fault a nemesis can inject, by name, and the concrete faults of a plan.

use crate::lossy_fs::LossMode;
use crate::Network;
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
    /// Every link into and out of a node holding each packet a delay drawn around a middle, so
    /// packets overtake one another (network namespaces).
    Jitter,
    /// Every link into and out of a node holding a share of its packets while the rest go at
    /// once (network namespaces).
    Reorder,
    /// The nodes split in two halves and one node in both: every link between the halves cut,
    /// the node in the middle (the leader, often) reaching every other (after Jepsen).
    Bridge,
    /// Each node reaching a majority, its neighbours on a ring drawn from the seed, and no two
    /// nodes the same majority: every link between nodes far apart on the ring cut (Jepsen's
    /// majorities ring).
    Ring,
    /// Every link into and out of a node drops a share of its packets (network namespaces).
    PacketLoss,
    /// Every link into and out of a node sends a share of its packets twice (network
    /// namespaces).
    Duplicate,
    /// `kill -9` of a node (the leader, often) or of every node at once, then a restart from its
    /// files.
    Kill,
    /// SIGSTOP past the election timeout, then SIGCONT.
    Pause,
    /// Every node's clock run fast or slow within the nodes' drift bound (0.9x to 1.1x), half of
    /// the time the worst case for leases (the leader slowest, the others fastest), through the
    /// fault that comes next.
    Clock,
    /// A node's disk fails every write (EIO): the node must stop, having acknowledged nothing it
    /// could not write; it is then restarted on a working disk.
    Disk,
    /// A power cut to a node (the leader, often) or to every node at once: killed with
    /// SIGKILL, and what its lossy disk was written and not synced lost; then a restart.
    PowerLoss,
    /// A node's lossy disk full: every write fails with ENOSPC, the node must stop; then a
    /// restart with room again.
    DiskFull,
    /// A node stopped, a bit flipped or a sector zeroed in one of its files, the node started
    /// again: it must refuse the damage (or repair it), never serve it.
    Corrupt,
    /// The configuration changed under the clients: a voter (the leader, often) removed and
    /// added back, or demoted and promoted back, or the leadership handed to another voter
    /// (through this project's administrator's requests).
    Membership,
    /// Clocks far beyond the drift bound, the worst case for leases (the leader at 0.25x-0.5x,
    /// the others at 1.2x-1.5x), one clock jumped forward, through the fault that comes next:
    /// deliberately unsafe for lease reads, so not part of `all`.
    ClockBeyond,
    /// A process outside the cluster, holding neither key, sends every node forged votes,
    /// appends, handovers, huge frames and administrator's requests while the clients run:
    /// each must be refused, and the cluster must not notice (this project's server; named on
    /// its own, `--faults all,forged`, as it tests the servers' gates rather than the protocol).
    Forged,
}

impl FaultKind {
    /// Every kind.
    pub const ALL: [FaultKind; 19] = [
        FaultKind::Partition,
        FaultKind::OneWay,
        FaultKind::Delay,
        FaultKind::Jitter,
        FaultKind::Reorder,
        FaultKind::Bridge,
        FaultKind::Ring,
        FaultKind::PacketLoss,
        FaultKind::Duplicate,
        FaultKind::Kill,
        FaultKind::Pause,
        FaultKind::Clock,
        FaultKind::Disk,
        FaultKind::PowerLoss,
        FaultKind::DiskFull,
        FaultKind::Corrupt,
        FaultKind::Membership,
        FaultKind::ClockBeyond,
        FaultKind::Forged,
    ];

    /// Whether a correct cluster must survive it with every read mode.
    pub fn is_safe(self) -> bool {
        self != FaultKind::ClockBeyond
    }

    /// Whether `all` names it: every safe kind but `forged`, which is named on its own.
    pub fn in_all(self) -> bool {
        self.is_safe() && self != FaultKind::Forged
    }

    /// Whether it needs the servers' data directories on lossy disks (FUSE and root).
    pub fn needs_lossy_disks(self) -> bool {
        matches!(
            self,
            FaultKind::PowerLoss | FaultKind::DiskFull | FaultKind::Corrupt
        )
    }

    /// Whether links through `network` can make it: lost, duplicated, jittered and reordered
    /// packets need network namespaces (a proxy carries byte streams, in order), and cuts and
    /// delays either.
    pub fn works_on(self, network: Network) -> bool {
        match self {
            FaultKind::PacketLoss
            | FaultKind::Duplicate
            | FaultKind::Jitter
            | FaultKind::Reorder => network == Network::Namespaces,
            FaultKind::Partition
            | FaultKind::OneWay
            | FaultKind::Delay
            | FaultKind::Bridge
            | FaultKind::Ring => network != Network::Direct,
            _ => true,
        }
    }

    /// Whether it holds packets back: on network namespaces, through a queue that the nemesis
    /// reads (`iptables` and the kernel's nfnetlink_queue).
    pub fn holds_packets(self) -> bool {
        matches!(
            self,
            FaultKind::Delay | FaultKind::Jitter | FaultKind::Reorder
        )
    }

    /// Whether the servers themselves must make it (at an administrator's request): clock rates and
    /// jumps, a disk that fails, and changes of the configuration (this project's
    /// administrator's requests); or it speaks this project's wire (forged messages).
    pub fn needs_cooperation(self) -> bool {
        matches!(
            self,
            FaultKind::Clock
                | FaultKind::ClockBeyond
                | FaultKind::Disk
                | FaultKind::Membership
                | FaultKind::Forged
        )
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Partition => "partition",
            FaultKind::OneWay => "one-way",
            FaultKind::Delay => "delay",
            FaultKind::Jitter => "jitter",
            FaultKind::Reorder => "reorder",
            FaultKind::Bridge => "bridge",
            FaultKind::Ring => "ring",
            FaultKind::PacketLoss => "loss",
            FaultKind::Duplicate => "duplicate",
            FaultKind::Kill => "kill",
            FaultKind::Pause => "pause",
            FaultKind::Clock => "clock",
            FaultKind::Disk => "disk",
            FaultKind::PowerLoss => "power-loss",
            FaultKind::DiskFull => "disk-full",
            FaultKind::Corrupt => "corrupt",
            FaultKind::Membership => "membership",
            FaultKind::ClockBeyond => "clock-beyond",
            FaultKind::Forged => "forged",
        }
    }

    /// What it does, in a line (for `--help`).
    pub fn describe(self) -> &'static str {
        match self {
            FaultKind::Partition => "a minority, often the leader, cut off from the rest",
            FaultKind::OneWay => "every link out of (or into) a node cut",
            FaultKind::Delay => "every link of a node slowed by 20-300 ms",
            FaultKind::Jitter => {
                "every link of a node holds each packet 20-200 ms give or take up to all of it, \
                 reordering them (network namespaces)"
            }
            FaultKind::Reorder => {
                "every link of a node holds 10-50% of its packets 10-100 ms, the rest overtaking \
                 them (network namespaces)"
            }
            FaultKind::Bridge => "two halves cut apart, one node (often the leader) in both",
            FaultKind::Ring => "each node reaching a different majority (a majorities ring)",
            FaultKind::PacketLoss => {
                "every link of a node drops 5-40% of its packets (network namespaces)"
            }
            FaultKind::Duplicate => {
                "every link of a node sends 20-100% of its packets twice (network namespaces)"
            }
            FaultKind::Kill => "kill -9 of a node, often the leader, or of all; then a restart",
            FaultKind::Pause => "SIGSTOP of a node past the election timeout, then SIGCONT",
            FaultKind::Clock => {
                "clocks at 0.9x-1.1x (the drift bound), often a slow leader, for two faults"
            }
            FaultKind::Disk => "a node's disk fails every write: it must stop; then a restart",
            FaultKind::PowerLoss => {
                "power cut to a node, often the leader, or to all: unsynced writes lost (FUSE)"
            }
            FaultKind::DiskFull => "a node's disk full (ENOSPC): it must stop; then a restart",
            FaultKind::Corrupt => "a bit flipped or a sector zeroed in a file of a stopped node",
            FaultKind::Membership => {
                "a voter, often the leader, removed and added back or demoted and promoted back; \
                 or the leadership handed over"
            }
            FaultKind::ClockBeyond => {
                "the leader's clock at 0.25x-0.5x, the others' 1.2x-1.5x (unsafe for leases)"
            }
            FaultKind::Forged => {
                "a stranger sends every node forged votes, appends, huge frames and \
                 administrator's requests: each must be refused (not part of all)"
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

/// A change of the configuration, and what undoes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reconfiguration {
    /// The target taken out of the configuration; added back as a learner and promoted when
    /// the fault ends.
    Remove(Target),
    /// The target made a learner; promoted back when the fault ends.
    Demote(Target),
    /// The leadership handed to another voter, drawn when the fault comes.
    Transfer,
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
        /// How long each chunk of bytes (proxies) or packet (packet filters) is held.
        by: Duration,
    },
    /// Every link into and out of the target holding each packet `by` give or take `jitter`.
    Jitter {
        /// The node.
        target: Target,
        /// The delay in the middle.
        by: Duration,
        /// How far a packet's delay may be from `by` (at most `by`).
        jitter: Duration,
    },
    /// Every link into and out of the target holding `percent` of its packets `by`.
    Reorder {
        /// The node.
        target: Target,
        /// Packets held in a hundred.
        percent: u8,
        /// How long a held packet is held.
        by: Duration,
    },
    /// The target reaching every node, the others split in two halves that do not reach
    /// each other; which node goes to which half is drawn when the fault comes.
    Bridge {
        /// The node in the middle.
        target: Target,
    },
    /// Every link between nodes far apart on the ring `order` cut, so each node reaches a
    /// majority (its neighbours) and no two the same one; on 3 nodes, the ring's first and last
    /// node cut apart (a line: each end reaches a majority through the middle).
    Ring {
        /// The nodes around the ring.
        order: Vec<NodeId>,
    },
    /// Every link into and out of the target drops this share of its packets.
    PacketLoss {
        /// The node.
        target: Target,
        /// Packets dropped in a hundred.
        percent: u8,
    },
    /// Every link into and out of the target sends this share of its packets twice.
    Duplicate {
        /// The node.
        target: Target,
        /// Packets duplicated in a hundred.
        percent: u8,
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
    /// Every node's clock set to run at its own rate, one node's also jumped forward; every rate
    /// is set back to 1x when the fault after this one ends (a jump stays).
    Clock {
        /// Local seconds per true second, in millionths, of each node in order of id.
        rates_ppm: Vec<u64>,
        /// The rate of the node that leads when the fault comes, instead of its own in
        /// `rates_ppm`: the worst case for a lease is a slow leader among fast followers.
        leader_ppm: Option<u64>,
        /// A node whose clock jumps forward, and how far.
        jump: Option<(NodeId, Duration)>,
    },
    /// The target's disk fails every write: it must exit; restarted when the fault ends.
    Disk {
        /// The node.
        target: Target,
    },
    /// The target's power cut: killed, its unsynced writes lost as `mode` says; restarted when
    /// the fault ends.
    PowerLoss {
        /// The node.
        target: Target,
        /// What each file keeps of its unsynced writes.
        mode: LossMode,
    },
    /// Every node's power cut at once.
    PowerLossAll {
        /// What each file keeps of its unsynced writes.
        mode: LossMode,
    },
    /// The target's disk full: it must exit; restarted with room when the fault ends.
    DiskFull {
        /// The node.
        target: Target,
    },
    /// The target stopped, one of its files damaged, the target started again; if it refuses
    /// to start, the damage is undone and it is started once more when the fault ends.
    Corrupt {
        /// The node.
        target: Target,
        /// A sector zeroed (else a bit flipped).
        zero_sector: bool,
    },
    /// The configuration changed, and changed back when the fault ends.
    Reconfigure(Reconfiguration),
    /// Forged messages sent to every node until the fault ends; aimed at the target as far as
    /// availability is counted (the leader's writes must not stop).
    Forged {
        /// The node whose leadership is watched.
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
            Fault::Jitter { .. } => FaultKind::Jitter,
            Fault::Reorder { .. } => FaultKind::Reorder,
            Fault::Bridge { .. } => FaultKind::Bridge,
            Fault::Ring { .. } => FaultKind::Ring,
            Fault::PacketLoss { .. } => FaultKind::PacketLoss,
            Fault::Duplicate { .. } => FaultKind::Duplicate,
            Fault::Kill { .. } | Fault::KillAll => FaultKind::Kill,
            Fault::Pause { .. } => FaultKind::Pause,
            Fault::Clock {
                rates_ppm,
                leader_ppm,
                jump,
            } => {
                let within = rates_ppm
                    .iter()
                    .chain(leader_ppm)
                    .all(|rate| rate.abs_diff(1_000_000) <= 100_000);
                if within && jump.is_none() {
                    FaultKind::Clock
                } else {
                    FaultKind::ClockBeyond
                }
            }
            Fault::Disk { .. } => FaultKind::Disk,
            Fault::PowerLoss { .. } | Fault::PowerLossAll { .. } => FaultKind::PowerLoss,
            Fault::DiskFull { .. } => FaultKind::DiskFull,
            Fault::Corrupt { .. } => FaultKind::Corrupt,
            Fault::Reconfigure(_) => FaultKind::Membership,
            Fault::Forged { .. } => FaultKind::Forged,
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
            Fault::Jitter { target, by, jitter } => {
                write!(
                    f,
                    "jitter: every link of {target} holds each packet {by:?} ± {jitter:?}"
                )
            }
            Fault::Reorder {
                target,
                percent,
                by,
            } => write!(
                f,
                "reorder: every link of {target} holds {percent}% of its packets {by:?}"
            ),
            Fault::Bridge { target } => write!(f, "bridge: {target} in the middle of two halves"),
            Fault::Ring { order } => {
                let ring: Vec<String> = order.iter().map(NodeId::to_string).collect();
                write!(
                    f,
                    "ring: each node reaches its neighbours on {}",
                    ring.join("-")
                )
            }
            Fault::PacketLoss { target, percent } => {
                write!(
                    f,
                    "loss: every link of {target} drops {percent}% of its packets"
                )
            }
            Fault::Duplicate { target, percent } => {
                write!(
                    f,
                    "duplicate: every link of {target} sends {percent}% of its packets twice"
                )
            }
            Fault::Kill { target } => write!(f, "kill -9 {target}"),
            Fault::KillAll => write!(f, "kill -9 every node"),
            Fault::Pause { target } => write!(f, "SIGSTOP {target}"),
            Fault::Clock {
                rates_ppm,
                leader_ppm,
                jump,
            } => {
                f.write_str(&clocks_text(rates_ppm, *jump))?;
                match leader_ppm {
                    Some(rate) => write!(f, "; the leader {:.3}x", *rate as f64 / 1e6),
                    None => Ok(()),
                }
            }
            Fault::Disk { target } => write!(f, "disk of {target} fails every write"),
            Fault::PowerLoss { target, mode } => write!(f, "power cut to {target} ({mode})"),
            Fault::PowerLossAll { mode } => write!(f, "power cut to every node ({mode})"),
            Fault::DiskFull { target } => write!(f, "disk of {target} full"),
            Fault::Corrupt {
                target,
                zero_sector: true,
            } => write!(f, "a sector zeroed in a file of {target}"),
            Fault::Corrupt {
                target,
                zero_sector: false,
            } => write!(f, "a bit flipped in a file of {target}"),
            Fault::Reconfigure(Reconfiguration::Remove(target)) => {
                write!(f, "membership: {target} removed, then added back")
            }
            Fault::Reconfigure(Reconfiguration::Demote(target)) => {
                write!(f, "membership: {target} demoted, then promoted back")
            }
            Fault::Reconfigure(Reconfiguration::Transfer) => {
                write!(f, "membership: the leadership handed to another voter")
            }
            Fault::Forged { target } => write!(
                f,
                "forged: a stranger's messages to every node, {target} watched"
            ),
        }
    }
}

/// Says what a clock fault does: each node's rate, and the jump.
pub fn clocks_text(rates_ppm: &[u64], jump: Option<(NodeId, Duration)>) -> String {
    let rates: Vec<String> = rates_ppm
        .iter()
        .enumerate()
        .map(|(node, rate)| format!("n{node} {:.3}x", *rate as f64 / 1e6))
        .collect();
    let mut text = format!("clocks at {}", rates.join(", "));
    if let Some((node, by)) = jump {
        text.push_str(&format!("; {node} jumped {by:?} forward"));
    }
    text
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
        assert!(!FaultKind::ClockBeyond.is_safe() && FaultKind::Clock.is_safe());
    }

    #[test]
    fn a_clock_fault_beyond_the_drift_bound_is_of_the_unsafe_kind() {
        let clock = |rates_ppm: &[u64], jump| Fault::Clock {
            rates_ppm: rates_ppm.to_vec(),
            leader_ppm: None,
            jump,
        };
        assert_eq!(clock(&[900_000, 1_100_000], None).kind(), FaultKind::Clock);
        assert_eq!(
            clock(&[900_000, 1_100_001], None).kind(),
            FaultKind::ClockBeyond
        );
        let jump = Some((NodeId(1), Duration::from_millis(1)));
        assert_eq!(
            clock(&[1_000_000, 1_000_000], jump).kind(),
            FaultKind::ClockBeyond
        );
        assert_eq!(
            clock(&[1_000_000, 1_500_000], jump).to_string(),
            "clocks at n0 1.000x, n1 1.500x; n1 jumped 1ms forward"
        );
        let slow_leader = Fault::Clock {
            rates_ppm: vec![1_100_000, 1_100_000],
            leader_ppm: Some(899_000),
            jump: None,
        };
        assert_eq!(slow_leader.kind(), FaultKind::ClockBeyond);
    }
}
