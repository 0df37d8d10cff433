//! A nemesis's plan: the faults of a run, when each starts and how long it holds, all drawn from
//! one seed before the run starts. The same seed, kinds, node count and duration give the same
//! plan; which node leads when a fault aimed at the leader comes is the run's to decide.

use super::fault::{Direction, Fault, FaultKind, Reconfiguration, Target};
use crate::lossy_fs::LossMode;
use node::NodeId;
use std::time::Duration;
use threadsim::DetRng;

/// One fault of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// When it is injected, from the start of the run.
    pub start: Duration,
    /// The fault.
    pub fault: Fault,
    /// How long it holds before it is healed (for a disk fault: how long the node has to stop).
    pub hold: Duration,
}

/// The quiet time between two faults.
const GAP: (Duration, Duration) = (Duration::from_millis(500), Duration::from_millis(2000));

/// The faults of a run of `duration` on `nodes` nodes, of the `kinds` given (none: no fault),
/// drawn from `seed`; every fault is healed before `duration` ends.
pub fn plan(seed: u64, kinds: &[FaultKind], nodes: u32, duration: Duration) -> Vec<Step> {
    assert!(nodes >= 1, "a cluster has a node");
    let mut rng = DetRng::new(seed).split(0x6e65_6d65_7369_7321);
    let mut steps = Vec::new();
    if kinds.is_empty() {
        return steps;
    }
    let mut at = Duration::ZERO;
    loop {
        let start = at + rng.duration_ms(GAP.0, GAP.1);
        let kind = kinds[rng.index(kinds.len())];
        let (fault, hold) = draw(&mut rng, kind, nodes);
        if start + hold > duration {
            return steps;
        }
        steps.push(Step { start, fault, hold });
        at = start + hold;
    }
}

fn draw(rng: &mut DetRng, kind: FaultKind, nodes: u32) -> (Fault, Duration) {
    let node = |rng: &mut DetRng| NodeId(rng.index(nodes as usize) as u32);
    // Half of the faults that hit one node are aimed at the leader, where most bugs are.
    let target = if rng.chance(0.5) {
        Target::Leader {
            otherwise: node(rng),
        }
    } else {
        Target::Node(node(rng))
    };
    let seconds = |rng: &mut DetRng, low: u64, high: u64| {
        rng.duration_ms(Duration::from_millis(low), Duration::from_millis(high))
    };
    match kind {
        FaultKind::Partition => {
            let largest_minority = (nodes.saturating_sub(1) / 2).max(1);
            let size = rng.range_inclusive(1, largest_minority.into()) as u32;
            (Fault::Partition { target, size }, seconds(rng, 1000, 4000))
        }
        FaultKind::OneWay => {
            let direction = if rng.chance(0.5) {
                Direction::Outgoing
            } else {
                Direction::Incoming
            };
            (
                Fault::OneWay { target, direction },
                seconds(rng, 1000, 4000),
            )
        }
        FaultKind::Delay => {
            let by = seconds(rng, 20, 300);
            (Fault::Delay { target, by }, seconds(rng, 1000, 4000))
        }
        FaultKind::Jitter => {
            let by = seconds(rng, 20, 200);
            let jitter = seconds(rng, 10, by.as_millis() as u64);
            (
                Fault::Jitter { target, by, jitter },
                seconds(rng, 1000, 4000),
            )
        }
        FaultKind::Reorder => {
            let percent = rng.range_inclusive(10, 50) as u8;
            let by = seconds(rng, 10, 100);
            (
                Fault::Reorder {
                    target,
                    percent,
                    by,
                },
                seconds(rng, 1000, 4000),
            )
        }
        FaultKind::Bridge => (Fault::Bridge { target }, seconds(rng, 1000, 4000)),
        FaultKind::Ring => {
            let mut order: Vec<NodeId> = (0..nodes).map(NodeId).collect();
            for end in (1..order.len()).rev() {
                order.swap(end, rng.index(end + 1));
            }
            (Fault::Ring { order }, seconds(rng, 1000, 4000))
        }
        FaultKind::PacketLoss => {
            let percent = rng.range_inclusive(5, 40) as u8;
            (
                Fault::PacketLoss { target, percent },
                seconds(rng, 1000, 4000),
            )
        }
        FaultKind::Duplicate => {
            let percent = rng.range_inclusive(20, 100) as u8;
            (
                Fault::Duplicate { target, percent },
                seconds(rng, 1000, 4000),
            )
        }
        FaultKind::Kill if rng.chance(0.25) => (Fault::KillAll, seconds(rng, 500, 2000)),
        FaultKind::Kill => (Fault::Kill { target }, seconds(rng, 500, 3000)),
        FaultKind::Pause => (Fault::Pause { target }, seconds(rng, 1000, 3000)),
        FaultKind::Clock => {
            // Half of the time the worst case the bound allows: the leader slowest, the others
            // fastest.
            let worst = rng.chance(0.5);
            let fault = if worst {
                Fault::Clock {
                    rates_ppm: rates(rng, nodes, (1_080_000, 1_100_000)),
                    leader_ppm: Some(rng.range_inclusive(900_000, 920_000)),
                    jump: None,
                }
            } else {
                Fault::Clock {
                    rates_ppm: rates(rng, nodes, (900_000, 1_100_000)),
                    leader_ppm: None,
                    jump: None,
                }
            };
            (fault, seconds(rng, 2000, 6000))
        }
        FaultKind::ClockBeyond => {
            let fault = Fault::Clock {
                rates_ppm: rates(rng, nodes, (1_200_000, 1_500_000)),
                leader_ppm: Some(rng.range_inclusive(250_000, 500_000)),
                jump: Some((node(rng), seconds(rng, 200, 2000))),
            };
            (fault, seconds(rng, 2000, 6000))
        }
        FaultKind::Disk => (Fault::Disk { target }, Duration::from_secs(5)),
        FaultKind::PowerLoss => {
            let mode = LossMode::ALL[rng.index(LossMode::ALL.len())];
            // Half of the cuts take every node: only then can a write that every replica
            // acknowledged without syncing be lost by all of them.
            if rng.chance(0.5) {
                (Fault::PowerLossAll { mode }, seconds(rng, 500, 2000))
            } else {
                (Fault::PowerLoss { target, mode }, seconds(rng, 500, 3000))
            }
        }
        FaultKind::DiskFull => (Fault::DiskFull { target }, Duration::from_secs(5)),
        FaultKind::Corrupt => {
            let zero_sector = rng.chance(0.5);
            (
                Fault::Corrupt {
                    target,
                    zero_sector,
                },
                seconds(rng, 2000, 4000),
            )
        }
        FaultKind::Membership => {
            let change = match rng.index(3) {
                0 => Reconfiguration::Remove(target),
                1 => Reconfiguration::Demote(target),
                _ => Reconfiguration::Transfer,
            };
            (Fault::Reconfigure(change), seconds(rng, 1000, 4000))
        }
        FaultKind::Forged => (Fault::Forged { target }, seconds(rng, 3000, 6000)),
    }
}

/// A clock rate for each of `nodes`, drawn from `range` (millionths).
fn rates(rng: &mut DetRng, nodes: u32, range: (u64, u64)) -> Vec<u64> {
    (0..nodes)
        .map(|_| rng.range_inclusive(range.0, range.1))
        .collect()
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn one_seed_gives_one_plan_and_another_seed_another() {
        let kinds = FaultKind::ALL;
        assert_eq!(plan(7, &kinds, 5, MINUTE), plan(7, &kinds, 5, MINUTE));
        assert_ne!(plan(7, &kinds, 5, MINUTE), plan(8, &kinds, 5, MINUTE));
    }

    #[test]
    fn faults_do_not_overlap_and_end_before_the_run_does() {
        for seed in 0..200 {
            let steps = plan(seed, &FaultKind::ALL, 3, MINUTE);
            assert!(steps.len() >= 8, "seed {seed}: {} faults", steps.len());
            let mut free_from = Duration::ZERO;
            for step in &steps {
                assert!(step.start >= free_from + GAP.0, "seed {seed}: {step:?}");
                free_from = step.start + step.hold;
            }
            assert!(free_from <= MINUTE);
        }
    }

    #[test]
    fn only_the_kinds_asked_for_come_and_every_one_of_them_does() {
        let kinds = [FaultKind::Kill, FaultKind::Clock];
        let steps: Vec<Step> = (0..20)
            .flat_map(|seed| plan(seed, &kinds, 5, MINUTE))
            .collect();
        for kind in kinds {
            assert!(steps.iter().any(|step| step.fault.kind() == kind), "{kind}");
        }
        assert!(steps.iter().all(|step| kinds.contains(&step.fault.kind())));
        assert!(steps.iter().any(|step| step.fault == Fault::KillAll));
        assert!(plan(1, &[], 3, MINUTE).is_empty());
    }

    #[test]
    fn a_partition_cuts_off_a_minority_only() {
        for nodes in [3, 5, 7] {
            for seed in 0..50 {
                for step in plan(seed, &[FaultKind::Partition], nodes, MINUTE) {
                    let Fault::Partition { size, .. } = step.fault else {
                        unreachable!()
                    };
                    assert!(size >= 1 && 2 * size < nodes, "{nodes} nodes: {size}");
                }
            }
        }
    }
}
