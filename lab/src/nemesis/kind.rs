//! The registry of the kinds of fault a nemesis can inject, [`FaultKind::ALL`]: one line a kind,
//! each declared in its family's file under `faults/`. Kinds are named, parsed and ordered by it.

use super::fault::FaultKind;
use super::faults;
use std::cmp::Ordering;

impl FaultKind {
    /// Every kind, in the order `--help` lists them: the registry.
    pub const ALL: [FaultKind; 20] = [
        FaultKind(&faults::cuts::PARTITION),
        FaultKind(&faults::cuts::ONE_WAY),
        FaultKind(&faults::packets::DELAY),
        FaultKind(&faults::packets::JITTER),
        FaultKind(&faults::packets::REORDER),
        FaultKind(&faults::cuts::BRIDGE),
        FaultKind(&faults::cuts::RING),
        FaultKind(&faults::packets::LOSS),
        FaultKind(&faults::packets::DUPLICATE),
        FaultKind(&faults::processes::KILL),
        FaultKind(&faults::processes::PAUSE),
        FaultKind(&faults::clocks::CLOCK),
        FaultKind(&faults::strobe::CLOCK_STROBE),
        FaultKind(&faults::disks::DISK),
        FaultKind(&faults::disks::POWER_LOSS),
        FaultKind(&faults::disks::DISK_FULL),
        FaultKind(&faults::disks::CORRUPT),
        FaultKind(&faults::membership::MEMBERSHIP),
        FaultKind(&faults::clocks::CLOCK_BEYOND),
        FaultKind(&faults::forged::FORGED),
    ];

    /// Its place in [`FaultKind::ALL`].
    fn position(self) -> usize {
        FaultKind::ALL
            .iter()
            .position(|known| known.name() == self.name())
            .expect("every kind is registered")
    }
}

impl PartialOrd for FaultKind {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for FaultKind {
    fn cmp(&self, other: &Self) -> Ordering {
        self.position().cmp(&other.position())
    }
}

/// A name that is no fault kind's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: known faults are {known}", known = FaultKind::ALL.map(FaultKind::name).join(", "))]
pub struct UnknownFault(pub String);

impl std::str::FromStr for FaultKind {
    type Err = UnknownFault;

    fn from_str(text: &str) -> Result<Self, UnknownFault> {
        FaultKind::ALL
            .into_iter()
            .find(|kind| kind.name() == text)
            .ok_or_else(|| UnknownFault(text.to_string()))
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::nemesis::target::Target;
    use threadsim::DetRng;

    #[test]
    fn every_kind_parses_from_its_name_and_an_unknown_name_lists_them() {
        for kind in FaultKind::ALL {
            assert_eq!(kind.name().parse::<FaultKind>(), Ok(kind));
        }
        let error = "fire".parse::<FaultKind>().unwrap_err().to_string();
        assert!(error.contains("partition, one-way"), "{error}");
        let beyond: FaultKind = "clock-beyond".parse().unwrap();
        let clock: FaultKind = "clock".parse().unwrap();
        assert!(!beyond.is_safe() && clock.is_safe());
    }

    #[test]
    fn names_are_distinct_and_kinds_sort_in_the_registrys_order() {
        let mut names: Vec<&str> = FaultKind::ALL.map(FaultKind::name).to_vec();
        let mut sorted = FaultKind::ALL.to_vec();
        sorted.reverse();
        sorted.sort();
        assert_eq!(sorted, FaultKind::ALL.to_vec());
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FaultKind::ALL.len());
    }

    #[test]
    fn every_kind_draws_faults_of_its_own_kind() {
        let mut rng = DetRng::new(3);
        for kind in FaultKind::ALL {
            for nodes in [3, 5] {
                for _ in 0..20 {
                    let target = Target::Node(node::NodeId(0));
                    let (fault, _) = kind.draw(&mut rng, target, nodes);
                    assert_eq!(fault.kind(), kind, "{fault}");
                }
            }
        }
    }
}
