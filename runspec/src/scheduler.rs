//! Who decides every thread switch of a run.

/// Which scheduler runs the cluster's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchedulerKind {
    /// Deterministic: a uniformly random runnable thread at every step, seeded by the seed.
    Random,
    /// Deterministic: probabilistic concurrency testing (a few priority changes at random
    /// steps), seeded by the seed.
    Pct,
    /// Real OS threads scheduled by the operating system: real preemption, not reproducible.
    Os,
    /// `random` with one stream for the whole run instead of one per simulated instant (not on
    /// the command line: the shrinking benchmark measures what the per-instant streams are worth).
    RandomOneStream,
}

impl SchedulerKind {
    /// The schedulers a user can name, in the order `--help` lists them.
    pub const ON_THE_COMMAND_LINE: [SchedulerKind; 3] =
        [SchedulerKind::Random, SchedulerKind::Pct, SchedulerKind::Os];

    /// Whether one seed decides the whole run.
    pub fn deterministic(self) -> bool {
        self != SchedulerKind::Os
    }

    /// The value as typed on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Random => "random",
            SchedulerKind::Pct => "pct",
            SchedulerKind::Os => "os",
            SchedulerKind::RandomOneStream => "random-one-stream",
        }
    }

    /// The scheduler a user named (`random-one-stream` is not one).
    pub fn from_name(name: &str) -> Option<SchedulerKind> {
        SchedulerKind::ON_THE_COMMAND_LINE
            .into_iter()
            .find(|kind| kind.name() == name)
    }

    /// How the scheduler is described in output.
    pub fn describe(self, pct_depth: u64) -> String {
        match self {
            SchedulerKind::Random => "deterministic (random scheduler)".to_string(),
            SchedulerKind::Pct => format!("deterministic (PCT, depth {pct_depth})"),
            SchedulerKind::Os => "OS threads (not reproducible)".to_string(),
            SchedulerKind::RandomOneStream => {
                "deterministic (random scheduler, one stream)".to_string()
            }
        }
    }
}
