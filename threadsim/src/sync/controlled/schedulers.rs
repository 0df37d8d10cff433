//! The two controlled schedulers, seeded by the run's seed: a uniformly random walk, and PCT
//! (Burckhardt et al., ASPLOS 2010) over a known horizon. Both implement shuttle's `Scheduler`
//! and fold every choice into a [`ScheduleSummary`], so two runs can be compared step by step.

use super::still_time::{Livelock, StillTime};
use crate::digest::Digest;
use crate::schedule::{ScheduleSummary, Scheduler as Choice};
use crate::DetRng;
use shuttle::scheduler::{Schedule, Scheduler, Task, TaskId};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// One execution's scheduler: picks the next task, records what it picked.
pub(super) struct Controlled {
    seed: u64,
    started: bool,
    policy: Policy,
    rng: DetRng,
    data: DetRng,
    digest: Digest,
    steps: u64,
    tasks: u64,
    summary: Rc<Cell<ScheduleSummary>>,
    still: StillTime,
    /// Where a livelock is reported when the run is stopped for one.
    livelock: Rc<RefCell<Option<Livelock>>>,
}

enum Policy {
    /// Uniform choices; with `per_instant`, from a stream of each simulated instant's own.
    Random {
        per_instant: bool,
        instant: Option<u64>,
    },
    Pct(Pct),
}

/// PCT's state: a priority per task (higher runs first) and the steps at which the running task
/// is demoted below every task not yet demoted.
struct Pct {
    priorities: Vec<u64>,
    change_points: Vec<u64>,
    next_demoted: u64,
}

/// Priorities of tasks never demoted are drawn above this; demoted ones count down below it.
const DEMOTED_CEILING: u64 = 1 << 32;

impl Controlled {
    /// A scheduler for one execution with `seed`, which stops the run past `livelock_bound`
    /// switches with neither simulated time nor the trace moving, and says so in `livelock`.
    pub(super) fn new(
        seed: u64,
        choice: Choice,
        summary: Rc<Cell<ScheduleSummary>>,
        livelock_bound: u64,
        livelock: Rc<RefCell<Option<Livelock>>>,
    ) -> Controlled {
        let root = DetRng::new(seed);
        let mut rng = root.split(0x5c4e_d01e);
        let policy = match choice {
            Choice::Random => Policy::Random {
                per_instant: true,
                instant: None,
            },
            Choice::RandomOneStream => Policy::Random {
                per_instant: false,
                instant: None,
            },
            Choice::Pct { depth, horizon } => {
                assert!(depth >= 1, "PCT needs a depth of at least 1");
                let horizon = horizon.max(2);
                let mut change_points: Vec<u64> = (1..depth)
                    .map(|_| rng.range_inclusive(1, horizon))
                    .collect();
                change_points.sort_unstable();
                change_points.dedup();
                Policy::Pct(Pct {
                    priorities: Vec::new(),
                    change_points,
                    next_demoted: DEMOTED_CEILING - 1,
                })
            }
        };
        Controlled {
            seed,
            started: false,
            policy,
            rng,
            data: root.split(0xda7a),
            digest: Digest::default(),
            steps: 0,
            tasks: 0,
            summary,
            still: StillTime::new(livelock_bound),
            livelock,
        }
    }
}

impl Pct {
    fn priority(&mut self, task: usize, rng: &mut DetRng) -> u64 {
        while self.priorities.len() <= task {
            // A new task takes a random place among those never demoted.
            self.priorities
                .push(rng.range_inclusive(DEMOTED_CEILING, u64::MAX - 1));
        }
        self.priorities[task]
    }

    fn demote(&mut self, task: usize) {
        self.priorities[task] = self.next_demoted;
        self.next_demoted = self.next_demoted.saturating_sub(1);
    }
}

impl Scheduler for Controlled {
    fn new_execution(&mut self) -> Option<Schedule> {
        if self.started {
            return None;
        }
        self.started = true;
        Some(Schedule::new(self.seed))
    }

    fn next_task(
        &mut self,
        runnable: &[&Task],
        current: Option<TaskId>,
        is_yielding: bool,
    ) -> Option<TaskId> {
        if crate::abandon::runs_abandoned() {
            // No task: shuttle stops the execution, and the run reports it abandoned.
            return None;
        }
        let now = super::simulated_now();
        let highest = runnable.iter().map(|task| usize::from(task.id())).max();
        self.tasks = self.tasks.max(highest.map_or(0, |id| id as u64 + 1));
        let chosen = match &mut self.policy {
            Policy::Random {
                per_instant,
                instant,
            } => {
                if *per_instant && *instant != Some(now) {
                    *instant = Some(now);
                    self.rng = DetRng::new(self.seed).split(now ^ 0x1_5ca1_ab1e);
                }
                runnable[self.rng.index(runnable.len())].id()
            }
            Policy::Pct(pct) => {
                if runnable.len() > 1 {
                    // A change point (or a yield) demotes the task that was running.
                    let change = pct.change_points.first() == Some(&self.steps);
                    if change {
                        pct.change_points.remove(0);
                    }
                    if let Some(current) = current.filter(|_| change || is_yielding) {
                        let current = usize::from(current);
                        pct.priority(current, &mut self.rng);
                        pct.demote(current);
                    }
                }
                let mut best: Option<(u64, TaskId)> = None;
                for task in runnable {
                    let priority = pct.priority(usize::from(task.id()), &mut self.rng);
                    if best.is_none_or(|(top, _)| priority > top) {
                        best = Some((priority, task.id()));
                    }
                }
                best.expect("shuttle offers at least one runnable task").1
            }
        };
        if runnable.len() > 1 {
            self.steps += 1;
        }
        let task = runnable
            .iter()
            .find(|task| task.id() == chosen)
            .expect("the chosen task is runnable");
        let still = self.still.switch(now, super::traced(), task);
        self.digest.write_u64(usize::from(chosen) as u64);
        self.summary.set(ScheduleSummary {
            decisions: self.steps,
            digest: self.digest.value(),
            tasks: self.tasks,
            most_switches_standing_still: self.still.most(),
            reached_micros: now,
        });
        match still {
            Ok(()) => Some(chosen),
            Err(livelock) => {
                // No task: shuttle stops the execution, and the run reports the livelock.
                *self.livelock.borrow_mut() = Some(livelock);
                None
            }
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.data.next_u64()
    }
}
