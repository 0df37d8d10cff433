//! A run as the command line says it: the clap form of `runspec::RunSpec` (`WorkloadArgs` and
//! `EngineArgs`, shared by `chaos`, `replay` and `mutants`), read into a [`RunSpec`] once, and
//! the parsers that refuse a broken variant in a build without them. The bounds and names are
//! `runspec`'s; this module imports nothing else of the crate.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Args;
use runspec::{
    bounds, ClockSkew, FaultMix, Mutation, ReadMode, RunSpec, SchedulerKind, SimStorage, Workload,
};
use sim::mutants::Broken;
use std::time::Duration;

/// The workload's shape, shared by `chaos` and `replay`.
#[derive(Args, Clone, Debug)]
pub struct WorkloadArgs {
    /// Number of nodes in the cluster (2 to 9; in an even one, half is not a majority).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(i64::from(*bounds::NODES.start())..=i64::from(*bounds::NODES.end())))]
    pub nodes: u32,
    /// Fault rounds per seed (each 50-500 ms of simulated time).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(i64::from(*bounds::ROUNDS.start())..=i64::from(*bounds::ROUNDS.end())))]
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
    #[arg(long, default_value = "raft", value_name = "WORKLOAD", value_parser = workload_parser())]
    pub workload: Workload,
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
    /// Fault mix: process pauses (raft workload; the key-value workload pauses leaders as part
    /// of its isolations): a node, the leader half the time, stops for a round or more, past an
    /// election timeout, and goes on as if nothing happened.
    #[arg(long)]
    pub pauses: bool,
    /// Fault mix: fault points in the node's own code (BUGGIFY): each seed arms a quarter of
    /// them, and an armed one fires a quarter of the times it is passed: spurious wake-ups,
    /// thread switches inside critical sections, a full apply channel, replies handled twice,
    /// election timeouts at their minimum, requests sent late. Every firing is in the trace.
    #[arg(long)]
    pub fault_points: bool,
    /// Liveness mode (raft workload): when the faults end, a minority stays failed for good
    /// (crashed, cut off from everyone, or deaf: sending but hearing nobody, often the leader),
    /// and every other node must still commit within the bound; the failure names the nodes
    /// that never caught up.
    #[arg(long)]
    pub liveness: bool,
    /// Fault mix: every crash is a power loss, which takes back what the crashed node wrote
    /// but had not synced (a process crash keeps the page cache). A correct node syncs before
    /// it answers; the `skip-fsync` variant does not.
    #[arg(long)]
    pub power_loss: bool,
    /// Fault mix: latent read errors. The first read of a crashed node's disk fails (EIO) and
    /// the node must refuse to start; the next restart reads it. The `read-error-as-empty`
    /// variant takes the failed read for an empty disk instead.
    #[arg(long)]
    pub read_errors: bool,
    /// Fault mix (raft workload): torn writes. Now and then a crash comes in the middle of a
    /// node's next save, and only some of its 512-byte sectors reach the disk; the node must
    /// come back with the state from before the save or after it.
    #[arg(long)]
    pub torn_writes: bool,
    /// Fault mix (raft workload): corruption at rest. Now and then, instead of a restart, a bit
    /// flips in one of the two copies of a crashed node's state while the other copy holds the
    /// newest state; the node must never serve the damaged copy. The
    /// `trust-record-without-checksum` variant does.
    #[arg(long)]
    pub corruption: bool,
    /// Fault mix (raft workload): misdirected writes. Now and then a crash comes right after a
    /// save that wrote one copy of the state over the other's place, leaving that place intact
    /// but stale; the node must come back with the save. The `read-first-good-copy` variant
    /// comes back with the stale copy.
    #[arg(long)]
    pub misdirected_writes: bool,
    /// Fault mix (raft workload): membership changes. The cluster starts with three voters
    /// and the other nodes outside; now and then the leader is asked to add a learner,
    /// promote one, demote a voter or remove a node (one server at a time, each waiting for
    /// the one before and for an entry of the leader's term to commit).
    #[arg(long)]
    pub membership: bool,
    /// With --membership: the Configuration overlap invariant off, so the run goes on past two
    /// configurations whose majorities share no node (to see what the invariant prevents: two
    /// leaders of one term, lost commits). Every other invariant still holds the run to account.
    #[arg(long)]
    pub without_overlap_check: bool,
    /// Fault mix (key-value workload): session churn. The store keeps at most 20 client
    /// sessions for the 30 clients and expires one unused for 2 s of the log's clock; a retry
    /// that finds its session gone must be answered "session expired", never applied again.
    #[arg(long)]
    pub session_churn: bool,
    /// Fault mix: how far the nodes' clocks drift. `within` the nodes' drift bound (rates 0.9x
    /// to 1.1x, no jumps: every read mode must stay linearizable), `beyond` it (0.5x to 1.5x and
    /// forward jumps: deliberately unsafe for lease reads), or `off`.
    #[arg(long, default_value = "within", value_name = "SKEW", value_parser = clock_skew_parser())]
    pub clock_skew: ClockSkew,
    /// Snapshots on: every node's service hands its node a snapshot once the log in its stored
    /// state takes more than BYTES (256 to 1 GiB). Small values (1024) compact, install and
    /// restore snapshots many times a run; off by default.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(bounds::SNAPSHOT_THRESHOLD))]
    pub snapshot_threshold: Option<u64>,
    /// Where every node keeps its state: `copies`, the simulation's disk (the whole state in two
    /// checksummed copies, with torn, misdirected and corrupted writes and read errors), or
    /// `log`, the server's write-ahead log (the storage engine that ships) over a disk in memory
    /// that loses, at a power cut (`--power-loss`), what was not synced and tears what was under
    /// way.
    #[arg(long, default_value = "copies", value_name = "STORAGE", value_parser = storage_parser())]
    pub storage: SimStorage,
}

/// How the cluster's threads are scheduled, shared by `chaos` and `replay`.
#[derive(Args, Clone, Debug)]
pub struct EngineArgs {
    /// Who decides every thread switch: `random` or `pct` (deterministic: the seed decides,
    /// every failure replays exactly), or `os` (real OS threads: real preemption, not
    /// reproducible).
    #[arg(long, default_value = "random", value_name = "SCHEDULER", value_parser = scheduler_parser())]
    pub scheduler: SchedulerKind,
    /// PCT's bug depth: one more than the number of priority changes per run.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(bounds::PCT_DEPTH))]
    pub pct_depth: u64,
    /// On a deterministic scheduler, thread switches with neither simulated time nor the trace
    /// moving past which the seed fails as a livelock (threads busy, time standing still).
    #[arg(long, value_name = "SWITCHES", default_value_t = bounds::DEFAULT_LIVELOCK_SWITCHES,
          value_parser = clap::value_parser!(u64).range(bounds::LIVELOCK_SWITCHES))]
    pub livelock_switches: u64,
}

impl WorkloadArgs {
    /// The run of `seed` these flags and `engine`'s say.
    pub fn spec(&self, engine: &EngineArgs, seed: u64) -> RunSpec {
        let mut mutations: Vec<Mutation> = Vec::new();
        for mutation in &self.mutations {
            if !mutations.contains(mutation) {
                mutations.push(*mutation);
            }
        }
        RunSpec {
            seed,
            workload: self.workload,
            nodes: self.nodes,
            rounds: self.rounds,
            duration: self.duration,
            reliable: self.reliable,
            faults: FaultMix {
                crashes: !self.no_crashes,
                partitions: !self.no_partitions,
                one_way: !self.no_one_way,
                skew: self.clock_skew,
                pauses: self.pauses,
                fault_points: self.fault_points,
                liveness: self.liveness,
                power_loss: self.power_loss,
                read_errors: self.read_errors,
                torn_writes: self.torn_writes,
                corruption: self.corruption,
                misdirected_writes: self.misdirected_writes,
                session_churn: self.session_churn,
                membership: self.membership,
            },
            read_mode: self.read_mode,
            snapshot_threshold: self.snapshot_threshold,
            mutations,
            scheduler: engine.scheduler,
            pct_depth: engine.pct_depth,
            livelock_switches: engine.livelock_switches,
            overlap_unchecked: self.without_overlap_check,
            storage: self.storage,
        }
    }
}

/// The longest simulated run per seed on a deterministic engine. Shuttle keeps every thread
/// switch of a run in memory (for its own replay), about 1.5 MB per simulated second of a
/// key-value run (443 MB at 300 s, measured), so the length of a run is its memory: 600 s is
/// about 1 GB per worker. OS threads record nothing of the kind.
pub const MAX_DETERMINISTIC_DURATION: Duration = Duration::from_secs(600);
const _: () = assert!(MAX_SCHEDULE_END.as_secs() == 2 * MAX_DETERMINISTIC_DURATION.as_secs());

/// Why a run is refused before it starts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunRefused {
    /// Settings that do not go together ([`RunSpec::check`]'s words).
    #[error("{0}")]
    Settings(String),
    /// A broken variant asked of a build without them.
    #[error("{WITHOUT_BROKEN_VARIANTS}")]
    NoBrokenVariants,
    /// A deterministic run longer than its memory allows.
    #[error(
        "--duration {secs} s is over the {max} s a deterministic run may last (shuttle keeps \
         every thread switch in memory, about 1.5 MB per simulated second): run shorter seeds, \
         or --scheduler os for long ones",
        secs = .0.as_secs_f64(),
        max = MAX_DETERMINISTIC_DURATION.as_secs()
    )]
    TooLong(Duration),
    /// Raft rounds that may last longer than a deterministic run may.
    #[error(
        "--rounds {rounds} may take {longest_s} simulated s (a round takes up to {round_max_ms} \
         ms), over the {max} s a deterministic run may last: at most {most} rounds, or \
         --duration {max} to stop them there, or --scheduler os for long ones",
        max = MAX_DETERMINISTIC_DURATION.as_secs()
    )]
    TooManyRounds {
        /// The rounds asked for.
        rounds: u32,
        /// The longest they may take, in simulated seconds.
        longest_s: u64,
        /// The longest round, in milliseconds.
        round_max_ms: u128,
        /// The most rounds that fit.
        most: u128,
    },
    /// A schedule that ends later than a deterministic run may.
    #[error(
        "the schedule ends at {end:.6} s, past the {max} s a schedule may last on a \
         deterministic engine (shuttle keeps every thread switch in memory): cut it, or add \
         --scheduler os to its flags note",
        end = .0.as_secs_f64(),
        max = MAX_SCHEDULE_END.as_secs()
    )]
    ScheduleTooLong(Duration),
}

/// Refuses a run its engine cannot hold in bounded memory, or one with a broken variant in a
/// build without them.
pub fn check_runnable(spec: &RunSpec) -> Result<(), RunRefused> {
    spec.check().map_err(RunRefused::Settings)?;
    if spec.asks_for_broken() && !node::MUTATIONS_AVAILABLE {
        return Err(RunRefused::NoBrokenVariants);
    }
    match spec.duration {
        Some(duration)
            if spec.scheduler.deterministic() && duration > MAX_DETERMINISTIC_DURATION =>
        {
            Err(RunRefused::TooLong(duration))
        }
        _ => check_rounds(spec),
    }
}

/// Refuses, on a deterministic engine, raft rounds that may take longer than
/// [`MAX_DETERMINISTIC_DURATION`] of simulated time with no `--duration` to stop them.
fn check_rounds(spec: &RunSpec) -> Result<(), RunRefused> {
    let round_max = sim::ChaosConfig::default().round_max;
    let longest = round_max * spec.rounds;
    let most = MAX_DETERMINISTIC_DURATION.as_millis() / round_max.as_millis();
    if spec.workload == Workload::Raft
        && spec.scheduler.deterministic()
        && spec.duration.is_none()
        && longest > MAX_DETERMINISTIC_DURATION
    {
        return Err(RunRefused::TooManyRounds {
            rounds: spec.rounds,
            longest_s: longest.as_secs(),
            round_max_ms: round_max.as_millis(),
            most,
        });
    }
    Ok(())
}

/// The latest a schedule replayed on a deterministic engine may end: twice the longest run,
/// so the schedule of any run the commands make (its rounds or clients, then its healing and
/// probes) replays, and one edited to end at 10^7 s is refused before it runs for hours.
pub const MAX_SCHEDULE_END: Duration = Duration::from_secs(2 * 600);

/// Refuses, on a deterministic engine, a schedule whose events go on past [`MAX_SCHEDULE_END`]:
/// the run follows it to its end.
pub fn check_schedule_end(spec: &RunSpec, end: Duration) -> Result<(), RunRefused> {
    if spec.scheduler.deterministic() && end > MAX_SCHEDULE_END {
        return Err(RunRefused::ScheduleTooLong(end));
    }
    Ok(())
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

/// `--workload`: one of [`Workload::ALL`].
fn workload_parser() -> impl TypedValueParser<Value = Workload> {
    PossibleValuesParser::new(Workload::ALL.map(Workload::name))
        .map(|name| Workload::from_name(&name).expect("a listed name"))
}

/// `--scheduler`: one a user can name.
fn scheduler_parser() -> impl TypedValueParser<Value = SchedulerKind> {
    PossibleValuesParser::new(SchedulerKind::ON_THE_COMMAND_LINE.map(SchedulerKind::name))
        .map(|name| SchedulerKind::from_name(&name).expect("a listed name"))
}

/// `--storage`: one of [`SimStorage::ALL`].
fn storage_parser() -> impl TypedValueParser<Value = SimStorage> {
    PossibleValuesParser::new(SimStorage::ALL.map(SimStorage::name))
        .map(|name| SimStorage::from_name(&name).expect("a listed name"))
}

/// `--clock-skew`: one of [`ClockSkew::ALL`].
fn clock_skew_parser() -> impl TypedValueParser<Value = ClockSkew> {
    PossibleValuesParser::new(ClockSkew::ALL.map(ClockSkew::name))
        .map(|name| name.parse().expect("a listed name"))
}

/// `--read-mode`: one of [`ReadMode::ALL`], the broken one only in a build with broken variants.
pub(crate) fn read_mode_parser() -> impl TypedValueParser<Value = ReadMode> {
    PossibleValuesParser::new(ReadMode::ALL.map(ReadMode::name)).try_map(|name| {
        node::kv::parse_read_mode(&name).map_err(|error| match error {
            node::kv::UnknownReadMode::Broken => format!(
                "unsafe-local is a deliberately broken read mode (a deposed leader serves stale \
                 reads); {WITHOUT_BROKEN_VARIANTS}"
            ),
            unknown => unknown.to_string(),
        })
    })
}

/// What is wrong with a `--duration`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BadDuration {
    /// Not a number.
    #[error("{0:?} is not a number of seconds")]
    NotSeconds(String),
    /// Outside the bounds.
    #[error("{0} s is outside 0.1..=86400")]
    OutOfBounds(f64),
}

/// `--duration`: seconds, within [`bounds::DURATION_SECONDS`].
pub(crate) fn parse_duration(text: &str) -> Result<Duration, BadDuration> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| BadDuration::NotSeconds(text.to_string()))?;
    if !bounds::DURATION_SECONDS.contains(&seconds) {
        return Err(BadDuration::OutOfBounds(seconds));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use runspec::{ClockSkew, FaultMix, Mutation, ReadMode, RunSpec, SchedulerKind, Workload};
    use std::time::Duration;

    /// The run `interleave replay --seed N FLAGS` asks for.
    fn parsed(spec: &RunSpec) -> RunSpec {
        let seed = spec.seed.to_string();
        let flags = spec.flags();
        let mut words = vec!["interleave", "replay", "--seed", &seed];
        words.extend(flags.split_whitespace());
        match Cli::try_parse_from(words) {
            Ok(Cli {
                command: Some(Command::Replay(args)),
            }) => args.workload.spec(&args.engine, spec.seed),
            Ok(_) => unreachable!("replay parses as replay"),
            Err(error) => panic!("{flags}: {error}"),
        }
    }

    /// The text form is written and read in `runspec`; the command line reads the same words
    /// with clap. Both must come to the same run, or a printed replay line would lie.
    #[test]
    fn the_command_line_reads_every_replay_line_as_the_run_that_printed_it() {
        let base = RunSpec::default().with_seed(7);
        let mut specs = vec![base.clone()];
        for workload in Workload::ALL {
            for read_mode in ReadMode::ALL {
                for skew in ClockSkew::ALL {
                    specs.push(RunSpec {
                        workload,
                        read_mode: if workload == Workload::Kv {
                            read_mode
                        } else {
                            ReadMode::ReadIndex
                        },
                        faults: FaultMix {
                            skew,
                            crashes: skew != ClockSkew::Off,
                            ..FaultMix::DEFAULT
                        },
                        ..base.clone()
                    });
                }
            }
        }
        for scheduler in SchedulerKind::ON_THE_COMMAND_LINE {
            specs.push(RunSpec {
                scheduler,
                pct_depth: 9,
                nodes: 2,
                rounds: 100_000,
                duration: Some(Duration::from_millis(100)),
                reliable: true,
                snapshot_threshold: Some(256),
                mutations: Mutation::ALL[..5].to_vec(),
                faults: FaultMix {
                    partitions: false,
                    one_way: false,
                    pauses: true,
                    fault_points: true,
                    ..FaultMix::DEFAULT
                },
                ..base.clone()
            });
        }
        for spec in specs {
            let expected = RunSpec {
                pct_depth: if spec.scheduler == SchedulerKind::Pct {
                    spec.pct_depth
                } else {
                    3
                },
                ..spec.clone()
            };
            assert_eq!(parsed(&spec), expected, "{}", spec.flags());
            assert_eq!(RunSpec::parse_flags(spec.seed, &spec.flags()), Ok(expected));
        }
    }
}
