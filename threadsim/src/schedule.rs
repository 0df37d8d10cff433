//! [`Scheduler`] and [`ScheduleSummary`]: which scheduler a controlled execution runs, and what
//! it did. Plain types beneath both the sync facade, which runs the scheduler, and the
//! simulation runner, which picks it.

/// Which controlled scheduler picks the next thread at each synchronization point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// A uniformly random runnable thread at every step. Its choices at each simulated instant
    /// come from a stream of that instant's own (derived from the seed and the time), so a change
    /// to what happens at one instant (an event removed by a shrinker) does not reshuffle the
    /// thread switches of every later one.
    Random,
    /// [`Scheduler::Random`] with one stream for the whole run: every change reshuffles every
    /// later choice (kept to measure what the per-instant streams are worth).
    RandomOneStream,
    /// Probabilistic concurrency testing: threads run by random priority, and at `depth - 1`
    /// random steps within the first `horizon` scheduling decisions the running thread is demoted
    /// below all others (Burckhardt et al., ASPLOS 2010). Finds bugs that need a few preemptions
    /// at the right places.
    Pct {
        /// The bug depth: one more than the number of priority changes.
        depth: u64,
        /// How many scheduling decisions a run is expected to make (where change points fall).
        horizon: u64,
    },
}

/// What a controlled execution's scheduler did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScheduleSummary {
    /// Scheduling decisions with more than one runnable thread.
    pub decisions: u64,
    /// Digest of every thread switch, in order: two runs with the same digest ran the same
    /// schedule.
    pub digest: u64,
    /// Threads (shuttle tasks) the execution created.
    pub tasks: u64,
    /// The most thread switches made while neither simulated time nor the trace moved (with one
    /// runnable thread or more): how near the run came to the livelock bound.
    pub most_switches_standing_still: u64,
    /// The simulated time the execution reached, in microseconds since the run began: for a
    /// failed run, the instant it stopped at (its trace can end earlier, as a livelock's does).
    pub reached_micros: u64,
}
