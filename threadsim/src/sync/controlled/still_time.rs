//! The livelock watch: thread switches made while simulated time stands still.
//!
//! Under fake time a correct run moves its clock whenever every thread has blocked; threads that
//! keep switching without ever all blocking (a loop that polls instead of sleeping, two threads
//! that wake each other forever) hold simulated time still while shuttle records every switch.
//! Past a bound of switches at one simulated instant the run stops as a livelock, naming the
//! threads that ran last and how often, instead of eating memory until the kernel kills it.

use shuttle::scheduler::Task;
use std::collections::BTreeMap;
use std::fmt;

/// How many switches before the bound are tallied by thread for the report.
const REPORTED_SWITCHES: u64 = 10_000;

/// Switches at the current simulated instant, the most at any instant so far, and near the
/// bound, who made them.
pub(super) struct StillTime {
    bound: u64,
    instant: Option<u64>,
    switches: u64,
    most: u64,
    /// Switches by task id in the last [`REPORTED_SWITCHES`] before the bound, with the task's name.
    ran: BTreeMap<usize, (String, u64)>,
}

/// A run stopped for switching `switches` times while simulated time stood still.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Livelock {
    /// The bound that was passed.
    pub switches: u64,
    /// The simulated instant that time stood still at, in microseconds since the run began.
    pub at_micros: u64,
    /// The threads that ran in the last switches before the bound, most often first.
    pub threads: Vec<(String, u64)>,
}

impl StillTime {
    /// A watch that stops a run past `bound` switches at one simulated instant.
    pub(super) fn new(bound: u64) -> StillTime {
        assert!(bound > 0, "a livelock bound of no switches stops every run");
        StillTime {
            bound,
            instant: None,
            switches: 0,
            most: 0,
            ran: BTreeMap::new(),
        }
    }

    /// Notes a switch to `chosen` at simulated instant `now` (microseconds); `Err` once the
    /// switches at one instant pass the bound.
    pub(super) fn switch(&mut self, now: u64, chosen: &Task) -> Result<(), Livelock> {
        if self.instant != Some(now) {
            self.instant = Some(now);
            self.switches = 0;
            self.ran.clear();
        }
        self.switches += 1;
        self.most = self.most.max(self.switches);
        if self.switches + REPORTED_SWITCHES > self.bound && self.switches <= self.bound {
            let id = usize::from(chosen.id());
            self.ran
                .entry(id)
                .or_insert_with(|| (chosen.name().unwrap_or_else(|| format!("task {id}")), 0))
                .1 += 1;
        }
        if self.switches <= self.bound {
            return Ok(());
        }
        let mut threads: Vec<(String, u64)> = self.ran.values().cloned().collect();
        threads.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Err(Livelock {
            switches: self.bound,
            at_micros: now,
            threads,
        })
    }

    /// The most switches made at any one simulated instant so far.
    pub(super) fn most(&self) -> u64 {
        self.most
    }
}

impl fmt::Display for Livelock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seconds = self.at_micros as f64 / 1e6;
        write!(
            f,
            "livelock: {} thread switches while simulated time stood still at {seconds:.6}s \
             (the bound; threads that keep running without ever all blocking stop the clock)",
            self.switches
        )?;
        let window = REPORTED_SWITCHES.min(self.switches);
        write!(f, "\nthe threads that ran in the last {window} switches:")?;
        for (name, count) in &self.threads {
            write!(f, "\n  {name}: {count}")?;
        }
        Ok(())
    }
}
