//! The command line: subcommands and their options (clap).

use crate::run_spec::{
    parse_duration, read_mode_parser, EngineArgs, WorkloadArgs, WITHOUT_BROKEN_VARIANTS,
};
use crate::seeds::{FirstSeed, Shard};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use lab::nemesis::FaultKind;
use node::kv::ReadMode;
use std::path::PathBuf;
use std::time::Duration;

/// The command line.
#[derive(Parser)]
#[command(
    name = "interleave",
    version,
    about = "Makes the bugs of distributed systems common, fast and reproducible.",
    long_about = "Runs a Raft cluster on threads in simulated time under random faults (message \
                  loss and delay, crashes, restarts, symmetric and one-way partitions) and checks \
                  State Machine Safety, Election Safety and in-order apply on every applied entry \
                  and state change. By default one seed decides everything, thread switches \
                  included, and every failure is replayed before it is reported. With no \
                  subcommand, runs `chaos` with its defaults."
)]
pub struct Cli {
    /// The subcommand (none: `chaos`).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Subcommand)]
pub enum Command {
    /// Run the chaos workload over a range of seeds, in parallel, with a progress display.
    Chaos(ChaosArgs),
    /// Rerun one seed and print its event trace: elections and terms, partitions, cuts, crashes,
    /// and the violation if there is one (`--verbose` adds commits and applied entries).
    Replay(ReplayArgs),
    /// Check history files for linearizability (the same tool as `lincheck`): exit 0 all
    /// linearizable, 1 some not, 3 some unknown (budget exhausted), 2 bad input.
    Check(models::cli::CheckArgs),
    /// Shrink a failing seed's schedule (from its folder, `schedule.full.txt`) to the few events
    /// that still make it fail the same way, and write `schedule.shrunk.txt` beside it: exit 0
    /// shrunk and verified, 1 the schedule does not fail, 2 bad input, 130 stopped by Ctrl-C.
    Shrink(ShrinkArgs),
    /// Run every deliberately broken variant against every detector that applies (continuous
    /// invariants, KV linearizability, loom models, shuttle schedules) and print the kill
    /// matrix; then run the same detectors on the correct build, which must show no failure.
    /// Exit 0 when every variant is killed and the correct build passes, 1 otherwise. The loom
    /// and shuttle columns build their own test binaries with cargo (minutes the first time).
    Mutants(MutantsArgs),
    /// Put the shards of a sharded chaos run back together: read each shard's `chaos --json`
    /// output, check that every seed of the range ran exactly once, and print one summary with
    /// every failure and its replay line. Exit 0 all passed, 1 some failed, 2 a file is
    /// malformed or the shards miss or repeat seeds.
    Gather(GatherArgs),
    /// Run a real cluster under a nemesis, after Jepsen: server processes on this machine, a TCP
    /// proxy on every link, clients recording a history with real times, and faults from a seed
    /// (partitions, one-way cuts, delays, kill -9, SIGSTOP, clock skew, a failing disk); then
    /// heal everything, require recovery, and check the history for linearizability. Writes the
    /// history, an HTML counterexample, the faults and every server's log to `--out`. Exit 0
    /// linearizable and nothing else wrong, 1 a violation or a server that misbehaved, 2 bad
    /// input or a cluster that would not start, 3 the checker could not decide, 130 Ctrl-C.
    Deploy(DeployArgs),
    /// Run one server of the replicated key-value store on real disks and TCP (the same as the
    /// `interleave-server` binary; `interleave deploy` starts its servers this way).
    Server(server::ServerArgs),
    /// Change a running cluster's membership, or hand its leadership over: asks each server
    /// in turn until the leader does it, and prints the configuration after it. Exit 0 done,
    /// 1 refused, no leader, or done in part (it may still happen), 2 bad input.
    Admin(AdminArgs),
    /// Print a shell completion script (`interleave completions bash > /etc/bash_completion.d/
    /// interleave`): subcommands, options, and the names of mutations, read modes and variants.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `interleave admin`.
#[derive(Args, Clone, Debug)]
#[command(
    after_help = "Examples (a cluster whose servers take clients on ports 7100-7102, started with --admin-key admin.key):\n  \
    interleave admin --admin-key admin.key --servers 127.0.0.1:7100,127.0.0.1:7101,127.0.0.1:7102 membership\n  \
    export INTERLEAVE_ADMIN_KEY_FILE=admin.key\n  \
    interleave admin --servers 127.0.0.1:7100,127.0.0.1:7101 add-learner 3\n  \
    interleave admin --servers 127.0.0.1:7100,127.0.0.1:7101 promote 3\n  \
    interleave admin --servers 127.0.0.1:7100,127.0.0.1:7101 transfer 1"
)]
pub struct AdminArgs {
    /// The servers' client addresses (HOST:PORT), separated by commas: each is asked in turn
    /// until the one that leads answers.
    #[arg(long, required = true, value_delimiter = ',', value_parser = server::parse_address)]
    pub servers: Vec<std::net::SocketAddr>,
    /// The administrators' key file, the one the servers were started with (--admin-key): the
    /// servers answer an administrator's request only on a connection that proves it holds it.
    #[arg(long, env = "INTERLEAVE_ADMIN_KEY_FILE", value_name = "FILE")]
    pub admin_key: std::path::PathBuf,
    /// How long to keep asking before giving up, in seconds (a new leader must commit an
    /// entry of its term first, and one change waits for the one before it).
    #[arg(long, default_value = "10", value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// What to do.
    #[command(subcommand)]
    pub action: AdminAction,
}

/// What `interleave admin` asks for.
#[derive(Subcommand, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdminAction {
    /// Print the configuration the cluster follows: its voters and learners.
    Membership,
    /// Add a node that is among every server's --members, as a learner: it gets the log and
    /// does not vote.
    AddLearner {
        /// The node's id.
        node: u32,
    },
    /// Make a learner a voter (once it has caught up).
    Promote {
        /// The node's id.
        node: u32,
    },
    /// Make a voter a learner.
    Demote {
        /// The node's id.
        node: u32,
    },
    /// Take a node out of the configuration.
    Remove {
        /// The node's id.
        node: u32,
    },
    /// Hand the leadership to a voter: the leader brings its log up to date, then tells it to
    /// start an election at once.
    Transfer {
        /// The node's id.
        node: u32,
    },
}

/// What is wrong with an option's value (clap prints it after the option's name).
#[derive(Debug, thiserror::Error)]
pub enum BadValue {
    /// Not 16 hexadecimal digits.
    #[error("{0:?} is not a digest (16 hexadecimal digits)")]
    NotADigest(String),
    /// Not a system `deploy` knows.
    #[error("{0:?}: the system is interleave, etcd or etcd-serializable")]
    UnknownSystem(String),
    /// Not a network `deploy` knows.
    #[error("{0:?}: the network is auto, namespaces or proxies")]
    UnknownNetwork(String),
    /// An empty name in a list of faults.
    #[error("{0:?}: an empty fault name")]
    EmptyFaultName(String),
    /// Not a fault's name.
    #[error("{0}; or all, none")]
    UnknownFault(lab::nemesis::UnknownFault),
}

/// `interleave gather`.
#[derive(Args, Clone)]
pub struct GatherArgs {
    /// The shards' output files (`interleave chaos --shard K/N --json > shard-K.jsonl`).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `interleave mutants`.
#[derive(Args, Clone)]
pub struct MutantsArgs {
    /// Only these variants (repeatable; see the README's catalogue for the names).
    #[arg(long = "only", value_name = "NAME", value_parser = variant_names())]
    pub only: Vec<String>,
    /// Skip the loom column (no `--cfg loom` build).
    #[arg(long)]
    pub skip_loom: bool,
    /// Skip the shuttle column (no `--cfg shuttle` build).
    #[arg(long)]
    pub skip_shuttle: bool,
    /// Skip the correct-build row.
    #[arg(long)]
    pub skip_correct: bool,
    /// Run every seed of the simulation and key-value detectors instead of stopping at the
    /// first kill, and report how many seeds killed each variant (how strong the detector is,
    /// not only whether it can fail; slower). Loom models are exhaustive, and shuttle's
    /// detectors have their own benchmark (`detector_strength`).
    #[arg(long)]
    pub every_seed: bool,
    /// Print the matrix as one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Run only the K-th of N disjoint slices of the catalogue's variants (a CI matrix job's
    /// share), with the correct build through their detectors.
    #[arg(long, env = "INTERLEAVE_SHARD", value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Also write a JUnit XML report to this file: one test case per variant and detector (a
    /// survivor is a failure), and one per detector of the correct build.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The workspace whose loom and shuttle tests to build (default: this binary's source tree).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The engine of the chaos column.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// `deploy --broken-write`: one of the broken ways to write, in a build with broken variants.
fn broken_write_parser() -> impl TypedValueParser<Value = String> {
    PossibleValuesParser::new([
        "ack-before-write",
        "in-place",
        "ignore-failures",
        "no-dir-sync",
    ])
    .try_map(|how| {
        if node::MUTATIONS_AVAILABLE {
            Ok(how)
        } else {
            Err(WITHOUT_BROKEN_VARIANTS)
        }
    })
}

/// `mutants --only`: a variant of the catalogue.
fn variant_names() -> PossibleValuesParser {
    let names = sim::mutants::catalogue()
        .into_iter()
        .map(|variant| PossibleValue::new(variant.broken.name()).help(variant.models));
    PossibleValuesParser::new(names.collect::<Vec<_>>())
}

fn parse_digest(text: &str) -> Result<u64, BadValue> {
    let not_a_digest = || BadValue::NotADigest(text.to_string());
    if text.len() != 16 {
        return Err(not_a_digest());
    }
    u64::from_str_radix(text, 16).map_err(|_| not_a_digest())
}

/// `interleave shrink`.
#[derive(Args, Clone)]
pub struct ShrinkArgs {
    /// A failing seed's folder (as `chaos` writes it), or a schedule file.
    pub folder: PathBuf,
    /// Stop shrinking after this many seconds of real time (the result is then not minimal).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub shrink_time: u64,
}

/// `interleave replay`.
#[derive(Args, Clone)]
pub struct ReplayArgs {
    /// The seed to rerun (with `--schedule`, the file's seed).
    #[arg(long, env = "INTERLEAVE_SEED", required_unless_present = "schedule")]
    pub seed: Option<u64>,
    /// Run exactly the events of this schedule file (as `chaos` and `shrink` write them), with
    /// the seed and workload its notes give; `--mutation` or `--no-mutations` change only the
    /// build it runs on.
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<PathBuf>,
    /// Run the correct build (with `--schedule`: the schedule's events without its mutations).
    #[arg(long)]
    pub no_mutations: bool,
    /// The workload (as the run that found the seed had it).
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// The engine.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Run the seed this many times and say how many runs failed and how many were identical to
    /// the first (same violation, same event trace, same schedule).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub attempts: u32,
    /// The trace digest the run that found this seed printed: the replay says whether it ran
    /// the identical run (a different digest means a different build, or uncontrolled
    /// nondeterminism).
    #[arg(long, value_name = "DIGEST", value_parser = parse_digest)]
    pub expect: Option<u64>,
    /// Print commits and applied entries too.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print the verdict (and with `--attempts`, the counts) as one JSON object on standard
    /// output; the trace still goes to standard error or `--out`.
    #[arg(long)]
    pub json: bool,
    /// Write the event trace to this file instead of standard error.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write the run report to this file: a self-contained HTML page with one lane per node
    /// (role and term over simulated time, crashes, pauses, partitions and cuts), the clients'
    /// operations for the key-value workload, and the violation marked (a failing seed's folder
    /// from `chaos` always has one, `report.html`).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}

/// The settings of a run's configuration, as clap names them: giving any of them pins the
/// configuration of every seed (`chaos` runs the swarm only without them).
pub const CONFIGURATION_FLAGS: [&str; 19] = [
    "nodes",
    "reliable",
    "no_crashes",
    "no_partitions",
    "no_one_way",
    "pauses",
    "fault_points",
    "liveness",
    "power_loss",
    "read_errors",
    "torn_writes",
    "corruption",
    "misdirected_writes",
    "session_churn",
    "membership",
    "clock_skew",
    "snapshot_threshold",
    "read_mode",
    "storage",
];

impl Cli {
    /// The command line `words` (the program's name first) as a [`Cli`], with `chaos`'s swarm
    /// settled ([`ChaosArgs::settle_swarm`]).
    pub fn parse_words<I, T>(words: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches};
        let matches = Cli::command().try_get_matches_from(words)?;
        let mut cli = Cli::from_arg_matches(&matches)?;
        if let (Some(Command::Chaos(args)), Some(("chaos", chaos))) =
            (&mut cli.command, matches.subcommand())
        {
            args.settle_swarm(chaos);
        }
        Ok(cli)
    }
}

impl ChaosArgs {
    /// Whether each seed draws its configuration: `--swarm`, or neither `--fixed` nor any of
    /// [`CONFIGURATION_FLAGS`] on the command line `matches` read.
    pub fn settle_swarm(&mut self, matches: &clap::ArgMatches) {
        let pinned = CONFIGURATION_FLAGS
            .iter()
            .any(|id| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine));
        self.swarm = self.swarm || !(self.fixed || pinned);
    }
}

/// `interleave chaos`.
#[derive(Args, Clone)]
pub struct ChaosArgs {
    /// The workload.
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// The engine.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Swarm testing, the default unless `--fixed` or a setting of the configuration is given:
    /// each seed draws its own cluster size (3 to 7), message loss, fault kinds (each on half
    /// the time, pauses, fault points and clock skew included), snapshot threshold and, for
    /// the key-value workload, read mode from the seed, so one range covers configurations no
    /// fixed mix reaches; a failure's replay line names what its seed drew. The workload,
    /// broken variants and rounds are the command line's.
    #[arg(long, conflicts_with_all = CONFIGURATION_FLAGS)]
    pub swarm: bool,
    /// One configuration for every seed: the defaults (5 nodes, message loss, crashes,
    /// partitions and one-way cuts, clocks within their bound, no snapshots) and the settings
    /// given. Giving any setting of the configuration (`--nodes`, `--pauses`, ...) implies it.
    #[arg(long, conflicts_with = "swarm")]
    pub fixed: bool,
    /// Coverage steering (swarm only): after each generation of 32 seeds, runs that reached a
    /// coverage point fewer than 5% of the runs before them had are kept, and half the seeds of
    /// the next generations run a kept run's configuration with a quarter of its settings
    /// redrawn and their own schedule, so the range spends more seeds near rarely reached
    /// states. Deterministic: the same range is the same runs on any number of workers; each
    /// run's replay line names its configuration.
    #[arg(long, conflicts_with_all = CONFIGURATION_FLAGS)]
    #[arg(conflicts_with_all = ["fixed", "shard"])]
    pub steer: bool,
    /// How many seeds to run.
    #[arg(long, env = "INTERLEAVE_SEED_COUNT", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub seeds: u64,
    /// The first seed; seeds run are first-seed, first-seed + 1, ... `random` draws a fresh
    /// range for each run (in CI: new seeds every run) and prints it, so it replays.
    #[arg(
        long,
        env = "INTERLEAVE_FIRST_SEED",
        default_value = "1",
        value_name = "SEED|random"
    )]
    pub first_seed: FirstSeed,
    /// Run only the K-th of N disjoint slices of the seed range (a CI matrix job's share; the N
    /// shards together run every seed once).
    #[arg(long, env = "INTERLEAVE_SHARD", value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Parallel workers, each running one seed at a time (default: the number of cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub workers: Option<u64>,
    /// Stop at the first failing seed.
    #[arg(long)]
    pub fail_fast: bool,
    /// Print one JSON object per seed and a summary object on standard output, for CI.
    #[arg(long)]
    pub json: bool,
    /// Where each failing seed's folder goes: the violation with its verified replay line, the
    /// event trace and schedule of the failing run, and for the key-value workload its client
    /// history and an HTML counterexample. A run holds the folder's lock (a second run into it
    /// is refused) and first removes the seed folders an earlier run left there.
    #[arg(
        long,
        env = "INTERLEAVE_OUT",
        value_name = "DIR",
        default_value = "target/interleave-runs"
    )]
    pub out: PathBuf,
    /// Also write a JUnit XML report to this file: one test case per seed, a failure carrying
    /// the violation and its verified replay line (for CI dashboards).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Determinism self-check (deterministic schedulers): every N-th seed that passes is run a
    /// second time and must be the same run (the same trace, thread switches and history); a
    /// difference is a failure of the tool, reported with both traces. 0 turns it off. A
    /// failing seed is always run twice.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub self_check_every: u64,
    /// Write what the run explored to FILE as JSON: every coverage point of the node, whether
    /// this run's configuration can reach it, and in how many seeds it was reached.
    #[arg(long, value_name = "FILE")]
    pub coverage: Option<PathBuf>,
    /// Fail (exit 1) if a coverage point this run's configuration can reach was reached by no
    /// seed: the gate that keeps a change from leaving part of the protocol untested.
    #[arg(long)]
    pub require_coverage: bool,
    /// Do not shrink the first failure's schedule.
    #[arg(long)]
    pub no_shrink: bool,
    /// Stop shrinking the first failure after this many seconds of real time.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub shrink_time: u64,
}

/// `interleave deploy`.
#[derive(Args, Clone, Debug)]
pub struct DeployArgs {
    /// How many server processes (3 to 9).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(3..=9))]
    pub nodes: u32,
    /// Seconds of faults and clients; then every fault is healed and the cluster has 10 s to
    /// recover.
    #[arg(long, default_value = "60", value_name = "SECONDS", value_parser = parse_duration)]
    pub duration: Duration,
    /// How the servers serve gets (log, read-index, lease, or the broken unsafe-local).
    #[arg(long, default_value = "read-index", value_name = "MODE", value_parser = read_mode_parser())]
    pub read_mode: ReadMode,
    /// The faults, separated by commas: `all` (every kind a correct cluster must survive),
    /// `none`, or any of the names below; `clock-beyond` (clocks far beyond the drift bound) is
    /// deliberately unsafe for lease reads and only comes when named.
    #[arg(long, default_value = "all", value_name = "FAULTS", value_parser = parse_faults, long_help = faults_help())]
    pub faults: FaultList,
    /// The seed of the fault plan and the clients' choices, or `random` (drawn and printed). The
    /// same seed injects the same faults at the same moments; real processes and real time
    /// decide the rest, so a rerun is not the same run.
    #[arg(long, default_value = "random", value_name = "SEED|random")]
    pub seed: FirstSeed,
    /// The run's folder: the history (`history.jsonl`), the counterexample (`history.html`),
    /// the faults as injected (`faults.txt`), the verdict (`summary.txt`), and each server's
    /// data directory and log (`cluster/`). A new run clears the last one's.
    #[arg(long, value_name = "DIR", default_value = "target/interleave-deploy")]
    pub out: PathBuf,
    /// The system under test: `interleave` (this project's server), `etcd` (etcd with
    /// linearizable reads, Debian's `etcd-server`; needs network namespaces) or
    /// `etcd-serializable` (etcd's serializable reads, answered from a node's own state:
    /// possibly stale, so they must be caught). etcd makes no clock or disk faults of its own.
    #[arg(long, value_name = "NAME", default_value = "interleave", value_parser = parse_system)]
    pub system: SystemChoice,
    /// The server program to run: as `interleave-server` is run (default: this program's own
    /// `server` subcommand), or etcd's `etcd` (default: `etcd` on the PATH).
    #[arg(long, value_name = "PATH")]
    pub server: Option<PathBuf>,
    /// Make the servers compact their logs into snapshots once a log takes more than this many
    /// bytes (default: the server's, 1 MiB), so restarts and lagging nodes go through
    /// snapshots and InstallSnapshot; small values do so many times a run.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(runspec::bounds::SNAPSHOT_THRESHOLD))]
    pub snapshot_threshold: Option<u64>,
    /// How the servers store their state: `wal` (the default: an append-only log, fsyncs
    /// shared among concurrent writes) or `file` (the whole state rewritten per save).
    #[arg(long, value_name = "KIND", default_value = "wal", value_parser = storage::StorageKind::parse)]
    pub storage: storage::StorageKind,
    /// Make the servers write their state in a deliberately broken way: `ack-before-write`
    /// acknowledges a write before making it (kills must then lose acknowledged writes, and
    /// the run must fail), `in-place` overwrites the state file in place, `no-dir-sync` renames
    /// the new state into place without syncing the directory (power cuts must catch it),
    /// `ignore-failures`
    /// reports a write a failed disk refused as made (the disk fault must catch it).
    #[arg(long, value_name = "HOW", value_parser = broken_write_parser())]
    pub broken_write: Option<String>,
    /// Run the servers' nodes with a deliberately broken behaviour (`skip-fsync`: never sync;
    /// power cuts must then lose acknowledged writes); may be given more than once.
    #[arg(long = "mutation", value_name = "NAME", value_parser = crate::run_spec::mutation_parser())]
    pub mutations: Vec<node::Mutation>,
    /// How the servers reach each other: `namespaces` (each server a host in a network
    /// namespace of its own, its links cut by packet filters that drop packets silently; needs
    /// root, `ip` and `nft`), `proxies` (a TCP proxy on every link: a cut closes connections),
    /// or `auto`: namespaces where they can be made, else proxies, saying why.
    #[arg(long, value_name = "HOW", default_value = "auto", value_parser = parse_network)]
    pub network: NetworkChoice,
    /// Print the result as one JSON object on standard output.
    #[arg(long)]
    pub json: bool,
}

/// `--system`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemChoice {
    /// This project's server.
    Interleave,
    /// etcd, reading as said.
    Etcd(lab::system::EtcdReads),
}

impl SystemChoice {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SystemChoice::Interleave => "interleave",
            SystemChoice::Etcd(lab::system::EtcdReads::Linearizable) => "etcd",
            SystemChoice::Etcd(lab::system::EtcdReads::Serializable) => "etcd-serializable",
        }
    }
}

fn parse_system(text: &str) -> Result<SystemChoice, BadValue> {
    use lab::system::EtcdReads;
    match text {
        "interleave" => Ok(SystemChoice::Interleave),
        "etcd" => Ok(SystemChoice::Etcd(EtcdReads::Linearizable)),
        "etcd-serializable" => Ok(SystemChoice::Etcd(EtcdReads::Serializable)),
        other => Err(BadValue::UnknownSystem(other.to_string())),
    }
}

/// `--network`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkChoice {
    /// Namespaces where this machine can make them, else proxies.
    Auto,
    /// This network.
    Exactly(lab::Network),
}

fn parse_network(text: &str) -> Result<NetworkChoice, BadValue> {
    match text {
        "auto" => Ok(NetworkChoice::Auto),
        "namespaces" => Ok(NetworkChoice::Exactly(lab::Network::Namespaces)),
        "proxies" => Ok(NetworkChoice::Exactly(lab::Network::Proxies)),
        other => Err(BadValue::UnknownNetwork(other.to_string())),
    }
}

/// `--faults`: the kinds of fault a run injects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultList {
    /// The kinds, in order, each once.
    pub kinds: Vec<FaultKind>,
    /// Whether `all` was asked for (rather than only names): then the kinds this machine
    /// cannot inject are left out with a note instead of refused.
    pub all: bool,
}

impl std::fmt::Display for FaultList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.kinds.is_empty() {
            return f.write_str("none");
        }
        let names: Vec<&str> = self.kinds.iter().map(|kind| kind.name()).collect();
        f.write_str(&names.join(","))
    }
}

fn parse_faults(text: &str) -> Result<FaultList, BadValue> {
    let mut kinds = Vec::new();
    let mut all = false;
    for name in text.split(',').map(str::trim) {
        match name {
            "all" => {
                all = true;
                kinds.extend(FaultKind::ALL.into_iter().filter(|kind| kind.in_all()));
            }
            "none" => {}
            "" => return Err(BadValue::EmptyFaultName(text.to_string())),
            name => kinds.push(name.parse::<FaultKind>().map_err(BadValue::UnknownFault)?),
        }
    }
    kinds.sort();
    kinds.dedup();
    Ok(FaultList { kinds, all })
}

fn faults_help() -> String {
    let mut help = String::from(
        "The faults, separated by commas: `all` (every kind below but clock-beyond and forged), `none`, or \
         names:",
    );
    for kind in FaultKind::ALL {
        help.push_str(&format!("\n  {:<13}{}", kind.name(), kind.describe()));
    }
    help
}
