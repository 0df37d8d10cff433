//! A nemesis's plan: the faults of a run, when each starts and how long it holds, all drawn from
//! one seed before the run starts. The same seed, kinds, node count and duration give the same
//! plan; which node leads when a fault aimed at the leader comes is the run's to decide.

use super::fault::{Fault, FaultKind};
use super::target::Target;
use node::NodeId;
use std::time::Duration;
use threadsim::DetRng;

/// One fault of a plan.
#[derive(Clone, Debug)]
pub struct Step {
    /// When it is injected, from the start of the run.
    pub start: Duration,
    /// The fault.
    pub fault: Box<dyn Fault>,
    /// How long it holds before it is healed (for a disk fault: how long the node has to stop).
    pub hold: Duration,
}

impl PartialEq for Step {
    fn eq(&self, other: &Step) -> bool {
        self.start == other.start && self.hold == other.hold && *self.fault == *other.fault
    }
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
        assert_eq!(fault.kind(), kind, "a drawn fault is of the kind drawn");
        if start + hold > duration {
            return steps;
        }
        assert!(start >= at, "a step starts after the one before it ends");
        steps.push(Step { start, fault, hold });
        at = start + hold;
    }
}

/// One fault of `kind` on a cluster of `nodes` nodes, and how long it holds.
fn draw(rng: &mut DetRng, kind: FaultKind, nodes: u32) -> (Box<dyn Fault>, Duration) {
    let node = |rng: &mut DetRng| NodeId(rng.index(nodes as usize) as u32);
    // Half of the faults that hit one node are aimed at the leader, where most bugs are.
    let target = if rng.chance(0.5) {
        Target::Leader {
            otherwise: node(rng),
        }
    } else {
        Target::Node(node(rng))
    };
    kind.draw(rng, target, nodes)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::nemesis::faults::{clocks, cuts, processes};

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
        let kinds = [
            FaultKind::of(&processes::KILL),
            FaultKind::of(&clocks::CLOCK),
        ];
        let steps: Vec<Step> = (0..20)
            .flat_map(|seed| plan(seed, &kinds, 5, MINUTE))
            .collect();
        for kind in kinds {
            assert!(steps.iter().any(|step| step.fault.kind() == kind), "{kind}");
        }
        assert!(steps.iter().all(|step| kinds.contains(&step.fault.kind())));
        let every: Box<dyn Fault> = Box::new(processes::Kill::Every);
        assert!(steps.iter().any(|step| *step.fault == *every));
        assert!(plan(1, &[], 3, MINUTE).is_empty());
    }

    #[test]
    fn a_partition_cuts_off_a_minority_only() {
        for nodes in [3, 5, 7] {
            for seed in 0..50 {
                let partition = FaultKind::of(&cuts::PARTITION);
                for step in plan(seed, &[partition], nodes, MINUTE) {
                    let fault = step.fault.as_any().downcast_ref::<cuts::Partition>();
                    let size = fault.expect("a partition").size;
                    assert!(size >= 1 && 2 * size < nodes, "{nodes} nodes: {size}");
                }
            }
        }
    }
}
