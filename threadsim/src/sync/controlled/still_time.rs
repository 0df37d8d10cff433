//! The livelock watch: thread switches made while simulated time stands still and nothing is
//! traced.
//!
//! Under fake time a correct run moves its clock whenever every thread has blocked; threads that
//! keep switching without ever all blocking (a loop that polls instead of sleeping, two threads
//! that wake each other forever) hold simulated time still while shuttle records every switch.
//! Work that takes no simulated time but shows in the trace is not that: a restarted node that
//! applies 15,000 entries at one instant makes 400,000 switches there, tracing each entry. Past a
//! bound of switches with neither time nor the trace moving, the run stops as a livelock, naming
//! the threads that ran last and how often, instead of eating memory until the kernel kills it.

use shuttle::scheduler::Task;
use std::collections::BTreeMap;
use std::fmt;

/// How many switches before the bound are tallied by thread for the report.
const REPORTED_SWITCHES: u64 = 10_000;

/// Switches since simulated time or the trace last moved, the most such switches so far, and
/// near the bound, who made them.
pub(super) struct StillTime {
    bound: u64,
    /// The simulated instant (microseconds) and the count of trace events the switches are at.
    still_at: Option<(u64, u64)>,
    switches: u64,
    most: u64,
    /// Switches by task id in the last [`REPORTED_SWITCHES`] before the bound, with the task's
    /// name.
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
    /// A watch that stops a run past `bound` switches with neither time nor the trace moving.
    pub(super) fn new(bound: u64) -> StillTime {
        assert!(bound > 0, "a livelock bound of no switches stops every run");
        StillTime {
            bound,
            still_at: None,
            switches: 0,
            most: 0,
            ran: BTreeMap::new(),
        }
    }

    /// Notes a switch to `chosen` at simulated instant `now` (microseconds), after `traced`
    /// trace events; `Err` once the switches with neither moving pass the bound.
    pub(super) fn switch(&mut self, now: u64, traced: u64, chosen: &Task) -> Result<(), Livelock> {
        if self.still_at != Some((now, traced)) {
            self.still_at = Some((now, traced));
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

    /// The most switches made so far with neither simulated time nor the trace moving.
    pub(super) fn most(&self) -> u64 {
        self.most
    }
}

impl fmt::Display for Livelock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seconds = self.at_micros as f64 / 1e6;
        write!(
            f,
            "livelock: {} thread switches while simulated time stood still at {seconds:.6}s and \
             nothing was traced (the bound; threads that keep running without ever all blocking \
             stop the clock)",
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
