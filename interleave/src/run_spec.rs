//! What a run is, as the command line and the replay line say it: the workload (cluster, fault
//! mix, broken variants) and the engine (scheduler). The engines, the replay line and the commands
//! all take these types; this module imports nothing else of the crate.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Args;
use node::kv::ReadMode;
use node::Mutation;
use sim::mutants::Broken;
use sim::ClockSkew;
use std::time::Duration;

/// What `chaos` runs on the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadKind {
    /// Commands offered to every node, continuous invariants.
    Raft,
    /// The key-value store with a linearizability check.
    Kv,
}

/// The workload's shape, shared by `chaos` and `replay`.
#[derive(Args, Clone, Debug)]
pub struct WorkloadArgs {
    /// Number of nodes in the cluster (2 to 9; in an even one, half is not a majority).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..=9))]
    pub nodes: u32,
    /// Fault rounds per seed (each 50-500 ms of simulated time).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub rounds: u32,
    /// Keep the network reliable (no message loss); delays and partitions still happen.
    #[arg(long)]
    pub reliable: bool,
    /// Switch on a deliberately broken behaviour (repeatable; `--help` lists the names).
    /// Many are only exposed by their targeted scenario, the key-value workload, a loom model or
    /// shuttle, not by the chaos workload: `interleave mutants` prints which detector kills which.
    #[arg(long = "mutation", value_name = "NAME", value_parser = mutation_parser())]
    pub mutations: Vec<Mutation>,
    /// What runs on the cluster: `raft` (commands offered to every node each round, continuous
    /// invariants) or `kv` (30 clerks against the key-value store, continuous invariants, and
    /// the client history checked for linearizability).
    #[arg(long, value_enum, default_value_t = WorkloadKind::Raft)]
    pub workload: WorkloadKind,
    /// For `--workload kv`: how gets are served (log, read-index, lease, or the broken
    /// unsafe-local).
    #[arg(long, default_value = "read-index", value_name = "MODE", value_parser = read_mode_parser())]
    pub read_mode: ReadMode,
    /// Simulated seconds per seed (raft: the rounds stop early once it has passed; kv: the
    /// clients' run time, default 27).
    #[arg(long, value_name = "SECONDS", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Fault mix: no crashes or restarts.
    #[arg(long)]
    pub no_crashes: bool,
    /// Fault mix: no symmetric partitions (raft workload).
    #[arg(long)]
    pub no_partitions: bool,
    /// Fault mix: no one-way link cuts (raft workload).
    #[arg(long)]
    pub no_one_way: bool,
    /// Fault mix: how far the nodes' clocks drift. `within` the nodes' drift bound (rates 0.9x
    /// to 1.1x, no jumps: every read mode must stay linearizable), `beyond` it (0.5x to 1.5x and
    /// forward jumps: deliberately unsafe for lease reads), or `off`.
    #[arg(long, default_value = "within", value_name = "SKEW", value_parser = clock_skew_parser())]
    pub clock_skew: ClockSkew,
    /// Snapshots on: every node's service hands its node a snapshot once the log in its stored
    /// state takes more than BYTES (256 to 1 GiB). Small values (1024) compact, install and
    /// restore snapshots many times a run; off by default.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(256..=(1 << 30)))]
    pub snapshot_threshold: Option<u64>,
}

/// How the cluster's threads are scheduled, shared by `chaos` and `replay`.
#[derive(Args, Clone, Debug)]
pub struct EngineArgs {
    /// Who decides every thread switch: `random` or `pct` (deterministic: the seed decides,
    /// every failure replays exactly), or `os` (real OS threads: real preemption, not
    /// reproducible).
    #[arg(long, value_enum, default_value_t = SchedulerKind::Random)]
    pub scheduler: SchedulerKind,
    /// PCT's bug depth: one more than the number of priority changes per run.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=20))]
    pub pct_depth: u64,
}

/// The longest simulated run per seed on a deterministic engine. Shuttle keeps every thread
/// switch of a run in memory (for its own replay), about 1.5 MB per simulated second of a
/// key-value run (443 MB at 300 s, measured), so the length of a run is its memory: 600 s is
/// about 1 GB per worker. OS threads record nothing of the kind.
pub const MAX_DETERMINISTIC_DURATION: Duration = Duration::from_secs(600);

/// Refuses a run `workload` asks for that `scheduler`'s engine cannot hold in bounded memory.
pub fn check_duration(scheduler: SchedulerKind, workload: &WorkloadArgs) -> Result<(), String> {
    match workload.duration {
        Some(duration) if scheduler.deterministic() && duration > MAX_DETERMINISTIC_DURATION => {
            Err(format!(
                "--duration {} s is over the {} s a deterministic run may last (shuttle keeps \
                 every thread switch in memory, about 1.5 MB per simulated second): run \
                 shorter seeds, or --scheduler os for long ones",
                duration.as_secs_f64(),
                MAX_DETERMINISTIC_DURATION.as_secs()
            ))
        }
        _ => Ok(()),
    }
}

impl EngineArgs {
    /// The engine, with the watchdog OS-thread runs get (checked by the caller).
    pub fn choice(&self, watchdog: Duration) -> EngineChoice {
        EngineChoice {
            scheduler: self.scheduler,
            pct_depth: self.pct_depth,
            watchdog,
        }
    }
}

/// Which scheduler runs the cluster's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
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
    #[value(skip)]
    RandomOneStream,
}

impl SchedulerKind {
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
}

/// An engine and its settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineChoice {
    /// The scheduler.
    pub scheduler: SchedulerKind,
    /// PCT's bug depth.
    pub pct_depth: u64,
    /// The watchdog of OS-thread runs.
    pub watchdog: Duration,
}

impl EngineChoice {
    /// How the engine is described in output.
    pub fn describe(&self) -> String {
        match self.scheduler {
            SchedulerKind::Random => "deterministic (random scheduler)".to_string(),
            SchedulerKind::Pct => format!("deterministic (PCT, depth {})", self.pct_depth),
            SchedulerKind::Os => "OS threads (not reproducible)".to_string(),
            SchedulerKind::RandomOneStream => {
                "deterministic (random scheduler, one stream)".to_string()
            }
        }
    }
}

/// `--mutation`: one of [`Mutation::ALL`], listed in `--help` and in shell completions, each
/// with the bug it models.
pub(crate) fn mutation_parser() -> impl TypedValueParser<Value = Mutation> {
    let names = sim::mutants::catalogue()
        .into_iter()
        .filter(|variant| matches!(variant.broken, Broken::Node(_)))
        .map(|variant| PossibleValue::new(variant.broken.name()).help(variant.models));
    let listed: Vec<PossibleValue> = names.collect();
    debug_assert_eq!(
        listed.len(),
        Mutation::ALL.len(),
        "every mutation is catalogued"
    );
    PossibleValuesParser::new(listed).try_map(|name| {
        if !node::MUTATIONS_AVAILABLE {
            return Err(WITHOUT_BROKEN_VARIANTS);
        }
        Ok(name.parse().expect("a listed name parses"))
    })
}

/// What a build without the `mutations` feature says when asked for a broken variant.
pub const WITHOUT_BROKEN_VARIANTS: &str =
    "this interleave has no broken variants (a shipped binary never has): run one built with \
     them, `cargo run --release -p interleave --features mutations -- ...`";

/// Whether `workload` asks for a broken variant: a mutation, or the unsafe-local read mode.
pub fn asks_for_broken(workload: &WorkloadArgs) -> bool {
    !workload.mutations.is_empty() || workload.read_mode == ReadMode::UnsafeLocal
}

/// `--clock-skew`: one of [`ClockSkew::ALL`].
pub(crate) fn clock_skew_parser() -> impl TypedValueParser<Value = ClockSkew> {
    PossibleValuesParser::new(ClockSkew::ALL.map(ClockSkew::name))
        .map(|name| name.parse().expect("a listed name"))
}

/// `--read-mode`: one of [`ReadMode::ALL`].
pub(crate) fn read_mode_parser() -> impl TypedValueParser<Value = ReadMode> {
    PossibleValuesParser::new(ReadMode::ALL.map(ReadMode::name)).try_map(|name| {
        name.parse::<ReadMode>().map_err(|error| match error {
            node::kv::UnknownReadMode::Broken => format!(
                "unsafe-local is a deliberately broken read mode (a deposed leader serves stale \
                 reads); {WITHOUT_BROKEN_VARIANTS}"
            ),
            unknown => unknown.to_string(),
        })
    })
}

/// `--duration`: seconds, 0.1 to a day.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(0.1..=86_400.0).contains(&seconds) {
        return Err(format!("{seconds} s is outside 0.1..=86400"));
    }
    Ok(Duration::from_secs_f64(seconds))
}
