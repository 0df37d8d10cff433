//! The key-value workload: concurrent clerks against a replicated store while the harness
//! partitions the leader into a minority (keeping some clients on its side), heals, crashes and
//! restarts nodes, drops messages and lets the nodes' clocks drift apart; every operation is recorded with its simulated call and
//! return time and the history is checked for linearizability, key by key: online while the
//! run goes (`kv_online`, which stops the workload at the first violation) and whole at the end.

use crate::cluster::{Cluster, ClusterConfig};
use crate::events::Events;
use crate::kv_online::{FoundOnline, Recorder, UntilViolation};
use crate::leader_faults::LeaderFaults;
use crate::network::ClientPort;
use crate::runner::Sim;
use crate::schedule::{Event, Schedule, ScheduleRecorder};
use crate::skew::{ClockSkew, SkewDraws};
use crate::timeline::{execute, Following, Snapshot, Timeline};
use crate::txn_client::TxnClient;
use models::{
    check_partitions, partition_by_key, Budget, CheckOptions, History, KeyValue, KvInput, KvOutput,
    OnlineFigures, Report,
};
use node::kv::{
    Clerk, ClerkConfig, ClerkError, KvOp, KvReply, KvRequest, KvResult, KvServerConfig,
    KvTransport, ReadMode, SessionPolicy,
};
use node::{MutationSet, NodeId, TransportError};
use runspec::{FaultMix, RunFigures, RunSpec, SimStorage};
use std::path::{Path, PathBuf};
use std::time::Duration;
use threadsim::clock::spawn;
use threadsim::sync::{Arc, Mutex};
use threadsim::DetRng;
use threadsim::Instant;

/// The shape of one key-value run.
#[derive(Clone, Debug)]
pub struct KvWorkloadConfig {
    /// Servers.
    pub nodes: usize,
    /// Concurrent clerks, one operation in flight each.
    pub clients: usize,
    /// Keys the operations touch (few, so operations on a key overlap).
    pub keys: usize,
    /// How gets are served.
    pub read_mode: ReadMode,
    /// Deliberately broken behaviours of the node and the service.
    pub mutations: MutationSet,
    /// Simulated time the clients run for.
    pub duration: Duration,
    /// Whether messages are dropped (10% of requests and of replies).
    pub unreliable: bool,
    /// A clerk gives up on an operation after this long (its outcome is then unknown).
    pub op_deadline: Duration,
    /// Clients kept on the old leader's side of each partition.
    pub clients_with_old_leader: usize,
    /// Clients that only read (the first ones): a client whose write hangs at a cut-off leader
    /// waits for its deadline, while a reader keeps asking, so the readers are what sees a
    /// stale read late in a partition.
    pub read_only_clients: usize,
    /// Capacity of each node's apply channel; `None` draws it from the seed
    /// ([`crate::cluster::drawn_apply_capacity`]), so some runs have a service that falls
    /// behind and fills it (backpressure on the node's applier).
    pub apply_capacity: Option<usize>,
    /// The faults, in the vocabulary every workload shares ([`FaultMix`], as
    /// [`crate::ChaosConfig::faults`]). The key-value timeline draws its own shapes (the leader
    /// cut off with some clients, paused, two followers cut off) whatever `partitions`,
    /// `one_way` and `pauses` say, and takes from the mix: `crashes` (now and then a node
    /// crashed and restarted), `skew` (new rates at every isolation of the leader),
    /// `fault_points` (armed from the seed), `power_loss` (a crash loses what was not synced),
    /// `read_errors` (a restart refused once, tried again), and `membership` (the
    /// configuration changing under the clients: the cluster starts with three voters and the
    /// rest outside, and at every step of the timeline, one time in two, a node joins, is
    /// promoted, demoted or removed, or the leadership is handed over; the clerks know every
    /// server and find the leader as it moves). Liveness mode and the copies disk's own faults
    /// are the raft workload's.
    pub faults: FaultMix,
    /// Where each node keeps its state.
    pub storage: SimStorage,
    /// The drift bound the nodes assume (their `max_clock_drift_ppm`), which
    /// [`ClockSkew::WithinBound`] keeps to: wider than a real deployment's, so that the margin a
    /// lease needs is wide and a lease without it is caught.
    pub max_clock_drift_ppm: u64,
    /// The nodes' election timeout range (shortest, longest).
    pub election_timeout: (Duration, Duration),
    /// The quiet spell between two faults (shortest, longest).
    pub quiet_between_faults: (Duration, Duration),
    /// Every server hands its node a snapshot once the log takes more than this many bytes
    /// (`None`: never).
    pub snapshot_threshold: Option<usize>,
    /// When the servers expire client sessions.
    pub sessions: SessionPolicy,
    /// Whether the clients run list-append transactions (`txn_client`) instead of single
    /// operations: the run's history is then [`KvRun::transactions`], checked for strict
    /// serializability.
    pub transactions: bool,
}

impl KvWorkloadConfig {
    /// The workload shaped to hunt lease bugs with lease reads: clocks drifting within the
    /// bound, a reliable network, and election timeouts of 1-1.05 s. A lease without the drift
    /// margin outlives the followers' refusal by a share of the election timeout (at 25% drift,
    /// 1/0.75 - 1/1.25 of it), while an election and the first writes on the new side take a
    /// roughly fixed 0.1-0.3 s: with 0.3-0.6 s timeouts the new side is rarely ready before the
    /// stale lease ends, with 1 s it mostly is.
    pub fn lease_hunt() -> KvWorkloadConfig {
        KvWorkloadConfig {
            read_mode: ReadMode::Lease,
            unreliable: false,
            faults: FaultMix {
                skew: ClockSkew::WithinBound,
                fault_points: false,
                power_loss: false,
                ..FaultMix::DEFAULT
            },
            election_timeout: (Duration::from_millis(1000), Duration::from_millis(1050)),
            duration: Duration::from_secs(30),
            clients: 20,
            read_only_clients: 8,
            keys: 30,
            quiet_between_faults: (Duration::from_millis(500), Duration::from_millis(1000)),
            ..KvWorkloadConfig::default()
        }
    }
}

impl KvWorkloadConfig {
    /// The key-value run `spec` says (its seed is the simulation's): its cluster size, read
    /// mode, broken variants, length, message loss, crashes, clock skew, snapshots and session
    /// churn; the rest as [`KvWorkloadConfig::default`].
    pub fn from_spec(spec: &RunSpec) -> KvWorkloadConfig {
        let defaults = KvWorkloadConfig::default();
        KvWorkloadConfig {
            nodes: spec.nodes as usize,
            read_mode: spec.read_mode,
            mutations: spec.mutations.iter().copied().collect(),
            duration: spec.duration.unwrap_or(defaults.duration),
            unreliable: !spec.reliable,
            faults: spec.faults,
            storage: spec.storage,
            snapshot_threshold: spec.snapshot_threshold.map(crate::chaos::threshold_bytes),
            sessions: if spec.faults.session_churn {
                SESSION_CHURN
            } else {
                defaults.sessions
            },
            transactions: spec.workload == runspec::Workload::ListAppend,
            keys: if spec.workload == runspec::Workload::ListAppend {
                KvWorkloadConfig::list_append().keys
            } else {
                defaults.keys
            },
            ..defaults
        }
    }

    /// The workload with its clients running list-append transactions on
    /// [`LIST_APPEND_KEYS`] keys at once.
    pub fn list_append() -> KvWorkloadConfig {
        KvWorkloadConfig {
            transactions: true,
            keys: LIST_APPEND_KEYS,
            ..KvWorkloadConfig::default()
        }
    }

    /// The workload with sessions that expire all the time ([`SESSION_CHURN`]).
    pub fn session_churn() -> KvWorkloadConfig {
        KvWorkloadConfig {
            sessions: SESSION_CHURN,
            ..KvWorkloadConfig::default()
        }
    }
}

/// Keys in use at once by the list-append workload's transactions: few, so that concurrent
/// transactions read and append to the same lists.
pub const LIST_APPEND_KEYS: usize = 5;

/// Sessions that expire all the time (`--session-churn`): at most 20 for the workload's 30
/// clients, and 2 s of the log's clock unused. Every registration expires another client's
/// session, so retries keep meeting sessions that are gone.
pub const SESSION_CHURN: SessionPolicy = SessionPolicy {
    timeout: Duration::from_secs(2),
    max_sessions: 20,
};

impl Default for KvWorkloadConfig {
    fn default() -> Self {
        KvWorkloadConfig {
            nodes: 5,
            clients: 30,
            keys: 10,
            read_mode: ReadMode::Log,
            mutations: MutationSet::default(),
            duration: Duration::from_secs(27),
            unreliable: true,
            op_deadline: Duration::from_millis(1000),
            clients_with_old_leader: 6,
            read_only_clients: 10,
            apply_capacity: None,
            faults: FaultMix::DEFAULT,
            storage: SimStorage::Copies,
            max_clock_drift_ppm: 250_000,
            election_timeout: (Duration::from_millis(300), Duration::from_millis(600)),
            quiet_between_faults: (Duration::from_millis(1000), Duration::from_millis(3000)),
            snapshot_threshold: None,
            sessions: SessionPolicy::default(),
            transactions: false,
        }
    }
}

/// What one run did.
#[derive(Clone, Debug)]
pub struct KvRun {
    /// Every operation, in the order they were called.
    pub history: History<KvInput, KvOutput>,
    /// What the run did (`operations_checked` is the history's length).
    pub figures: RunFigures,
    /// What the online checker did.
    pub online: OnlineFigures,
    /// The violation the online checker found, at which the workload stopped.
    pub found_online: Option<FoundOnline>,
    /// The list-append transactions, in the order they ended (empty unless the workload ran
    /// transactions, [`KvWorkloadConfig::transactions`]).
    pub transactions: Vec<models::Txn>,
}

/// Clerk `index` on `cluster`'s network (endpoint `n{1000 + index}`).
pub fn new_clerk(cluster: &Arc<Cluster>, index: usize, config: ClerkConfig) -> Clerk {
    let transport = Arc::new(SimKvTransport {
        port: cluster.add_client(client_endpoint(index)),
        cluster: cluster.clone(),
    });
    Clerk::new(cluster.ids(), transport, cluster.clock().clone(), config)
}

/// The network id of client `index` (nodes are 0..nodes).
/// The network endpoints of a workload's `clients` clerks (`n1000` ...).
pub fn client_endpoints(clients: usize) -> Vec<NodeId> {
    (0..clients).map(client_endpoint).collect()
}

fn client_endpoint(index: usize) -> NodeId {
    NodeId(1000 + index as u32)
}

/// A clerk's transport: the simulated network to whichever server runs on the target node.
struct SimKvTransport {
    port: ClientPort,
    cluster: Arc<Cluster>,
}

impl KvTransport for SimKvTransport {
    fn call(
        &self,
        server: NodeId,
        request: KvRequest,
        timeout: Duration,
    ) -> Result<KvReply, TransportError> {
        let cluster = &self.cluster;
        self.port.call(server, timeout, || {
            cluster.kv_server(server)?.handle(request)
        })
    }
}

const WORKLOAD_STREAM: u64 = 10;

/// Runs the workload on a fresh cluster and returns its history (unchecked). Panics (failing
/// the simulation) on a continuous-invariant violation.
pub fn run_kv_workload(sim: &Sim, config: &KvWorkloadConfig) -> KvRun {
    run_kv_workload_with(sim, config, None, &ScheduleRecorder::default())
}

/// [`run_kv_workload`] with its faults following `schedule` if given (else generated), recording
/// them in `recorder`.
pub fn run_kv_workload_with(
    sim: &Sim,
    config: &KvWorkloadConfig,
    schedule: Option<&Schedule>,
    recorder: &ScheduleRecorder,
) -> KvRun {
    assert!(
        config.clients > config.clients_with_old_leader,
        "some clients must stay with the majority"
    );
    if config.faults.fault_points {
        sim.arm_fault_points();
    }
    let mut cluster_config = ClusterConfig::new(config.nodes);
    cluster_config.net.unreliable = config.unreliable;
    cluster_config.node.mutations = config.mutations.clone();
    cluster_config.power_loss_on_crash = config.faults.power_loss;
    cluster_config.read_error_after_crash = config.faults.read_errors;
    cluster_config.storage = config.storage;
    cluster_config.node.max_clock_drift_ppm = config.max_clock_drift_ppm;
    let (min, max) = config.election_timeout;
    cluster_config.node.set_election_timeouts(min, max);
    cluster_config.apply_capacity = config
        .apply_capacity
        .unwrap_or_else(|| crate::cluster::drawn_apply_capacity(sim));
    cluster_config.snapshot_threshold = config.snapshot_threshold;
    if config.faults.membership {
        cluster_config.membership = Some(crate::membership_changes::bootstrap(config.nodes));
    }
    cluster_config.kv = Some(KvServerConfig {
        read_mode: config.read_mode,
        mutations: config.mutations.clone(),
        sessions: config.sessions,
        ..KvServerConfig::default()
    });
    let cluster = Arc::new(Cluster::new(sim, cluster_config));
    let clock = cluster.clock().clone();
    let started = clock.now();
    let end = started + config.duration;
    let history_recorder = Recorder::new(Events::new(clock.clone(), sim.trace().clone()));
    let sessions_expired: Arc<Mutex<usize>> = Arc::default();
    let transactions: Arc<Mutex<Vec<models::Txn>>> = Arc::default();
    let rng = sim.rng(WORKLOAD_STREAM);
    let clients = client_endpoints(config.clients);
    let threads: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(index, _)| {
            let mut clerk = new_clerk(&cluster, index, ClerkConfig::default());
            if config.transactions {
                let client = TxnClient {
                    index,
                    rng: rng.split(index as u64),
                    keys: config.keys,
                    op_deadline: config.op_deadline,
                    clock: clock.clone(),
                    started,
                    history: transactions.clone(),
                };
                return spawn(&clock, format!("client-{index}"), move || {
                    client.run(&mut clerk, end)
                });
            }
            let client = Client {
                index,
                rng: rng.split(index as u64),
                keys: config.keys,
                read_only: index < config.read_only_clients,
                op_deadline: config.op_deadline,
                clock: clock.clone(),
                recorder: history_recorder.clone(),
                sessions_expired: sessions_expired.clone(),
            };
            spawn(&clock, format!("client-{index}"), move || {
                client.run(&mut clerk, end)
            })
        })
        .collect();
    let mut on_leader = LeaderFaults::default();
    let counts = match schedule {
        Some(schedule) => execute(
            &cluster,
            &mut UntilViolation {
                inner: &mut Following::new(schedule),
                recorder: history_recorder.clone(),
            },
            recorder,
            &mut on_leader,
        ),
        None => execute(
            &cluster,
            &mut UntilViolation {
                inner: &mut Isolations {
                    clients,
                    clients_with_old_leader: config.clients_with_old_leader,
                    crashes: config.faults.crashes,
                    read_errors: config.faults.read_errors,
                    skew: config.faults.skew,
                    quiet: (
                        config.quiet_between_faults.0.as_millis() as u64,
                        config.quiet_between_faults.1.as_millis() as u64,
                    ),
                    end: config.duration,
                    phase: Phase::Quiet,
                    membership: config.faults.membership,
                },
                recorder: history_recorder.clone(),
            },
            recorder,
            &mut on_leader,
        ),
    };
    cluster.heal();
    cluster.resume_every_paused_node();
    for thread in threads {
        thread.join();
    }
    cluster.check_invariants();
    cluster.check_snapshot_policy(config.snapshot_threshold);
    let no_probes = runspec::FaultWindows::default();
    let figures = crate::run_end::finish_run(&cluster, started, &on_leader, &no_probes, counts);
    let (history, online, found_online) = history_recorder.finish();
    let transactions = std::mem::take(&mut *transactions.lock());
    let (checked, unknown) = if config.transactions {
        let unknown = transactions.iter().filter(|txn| txn.ret.is_none()).count();
        (transactions.len(), unknown)
    } else {
        let unknown = history.iter().filter(|op| op.ret.is_none()).count();
        (history.len(), unknown)
    };
    let figures = RunFigures {
        operations_checked: checked as u64,
        operations_unknown: unknown as u64,
        sessions_expired: *sessions_expired.lock() as u64,
        ..figures
    };
    KvRun {
        history,
        figures,
        online,
        found_online,
        transactions,
    }
}

/// The key-value workload's faults, until `end`: a quiet spell of 1-3 s, then one of: the leader
/// (any node while none leads) cut off with one follower and some clients on its side for
/// 1.5-3 s (half the time); the same after the leader was paused, and resumed 0.6-1.5 s later
/// still cut off (a third of the time); two followers cut off for 1-2 s. Then a heal, and now and then a crash and, 0.2-1 s later, a restart. With
/// clock skew on, the clocks take new rates as the leader is cut off or paused.
struct Isolations {
    clients: Vec<NodeId>,
    /// Whether a change of the configuration may come with each quiet spell's fault.
    membership: bool,
    clients_with_old_leader: usize,
    crashes: bool,
    /// Whether a restart after a crash is refused once (a latent read error) and so tried twice.
    read_errors: bool,
    skew: ClockSkew,
    /// The quiet spell between faults, shortest and longest, in milliseconds.
    quiet: (u64, u64),
    end: Duration,
    phase: Phase,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Quiet,
    Isolated,
    /// The leader has just been paused (a long garbage-collection pause, a SIGSTOP); the
    /// answers to what it sent before still arrive, to be handled when it resumes.
    Pausing(NodeId),
    /// The paused leader is cut off with one follower and some clients.
    Paused(NodeId),
    /// Two followers are cut off from everyone else.
    FollowersCut,
    Crashed(NodeId),
    Over,
}

impl Isolations {
    /// After a heal: now and then a crash.
    fn maybe_crash(&mut self, cluster: &Cluster, events: &mut Vec<Event>) {
        self.phase = Phase::Quiet;
        if self.crashes && cluster.random(3) == 0 {
            let ids = cluster.ids();
            let victim = ids[cluster.random(ids.len())];
            events.push(Event::Crash(victim));
            self.phase = Phase::Crashed(victim);
        }
    }

    /// Two followers of `leader` cut off from everyone else (clients stay with the majority):
    /// harmless with pre-vote; without it they come back with higher terms and depose the
    /// leader without an election (`no-pre-vote`).
    fn cut_off_followers(&self, cluster: &Cluster, leader: NodeId) -> Event {
        let mut followers = cluster.others(leader);
        let first = followers.remove(cluster.random(followers.len()));
        let second = followers.remove(cluster.random(followers.len()));
        let mut rest: Vec<NodeId> = cluster
            .ids()
            .into_iter()
            .filter(|id| *id != first && *id != second)
            .collect();
        rest.extend_from_slice(&self.clients);
        Event::partition(vec![vec![first, second], rest])
    }

    /// `leader` and one companion, with some clients, cut off from the rest; the clocks take
    /// new rates as it happens.
    fn isolate(&self, cluster: &Cluster, leader: NodeId) -> Vec<Event> {
        let others = cluster.others(leader);
        let companion = others[cluster.random(others.len())];
        let mut shuffled = self.clients.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, cluster.random(i + 1));
        }
        let (with_leader, with_majority) = shuffled.split_at(self.clients_with_old_leader);
        let mut minority = vec![leader, companion];
        minority.extend_from_slice(with_leader);
        let mut majority: Vec<NodeId> = cluster
            .ids()
            .into_iter()
            .filter(|id| *id != leader && *id != companion)
            .collect();
        let mut events = self.skew.at_isolation(cluster, leader, &majority);
        majority.extend_from_slice(with_majority);
        events.push(Event::partition(vec![minority, majority]));
        events
    }
}

impl Timeline for Isolations {
    fn wait(&mut self, cluster: &Cluster, elapsed: Duration) -> Option<Duration> {
        let (low, high) = match self.phase {
            Phase::Over => return None,
            Phase::Quiet => self.quiet,
            Phase::Isolated => (1500, 3000),
            Phase::Pausing(_) => (20, 50),
            Phase::Paused(_) => (600, 1500),
            Phase::FollowersCut => (1000, 2000),
            Phase::Crashed(_) => (200, 1000),
        };
        let ms = Duration::from_millis;
        let pause = cluster.random_duration(ms(low), ms(high));
        Some(pause.min(self.end.saturating_sub(elapsed)))
    }

    fn decide(&mut self, cluster: &Cluster, snapshot: &Snapshot, elapsed: Duration) -> Vec<Event> {
        let mut events = Vec::new();
        // Drawn only with membership changes on, so every other run draws as before.
        if self.membership && self.phase != Phase::Over && cluster.random(2) == 0 {
            events.extend(crate::membership_changes::choose(cluster, snapshot));
        }
        match self.phase {
            Phase::Quiet if elapsed >= self.end => self.phase = Phase::Over,
            Phase::Quiet => {
                // Every wake-up acts, so a run that follows these events wakes when this one did.
                let ids = cluster.ids();
                let leader = snapshot
                    .leader
                    .unwrap_or_else(|| ids[cluster.random(ids.len())]);
                match cluster.random(6) {
                    0..=2 => {
                        events.extend(self.isolate(cluster, leader));
                        self.phase = Phase::Isolated;
                    }
                    3 | 4 => {
                        events.push(Event::Pause(leader));
                        self.phase = Phase::Pausing(leader);
                    }
                    _ => {
                        events.push(self.cut_off_followers(cluster, leader));
                        self.phase = Phase::FollowersCut;
                    }
                }
            }
            Phase::Pausing(leader) => {
                events.extend(self.isolate(cluster, leader));
                self.phase = Phase::Paused(leader);
            }
            Phase::Paused(leader) => {
                // It resumes still cut off: what it hears first is what arrived while paused.
                events.push(Event::Resume(leader));
                self.phase = Phase::Isolated;
            }
            Phase::Isolated | Phase::FollowersCut => {
                events.push(Event::Heal);
                self.phase = Phase::Quiet;
                if elapsed < self.end {
                    self.maybe_crash(cluster, &mut events);
                }
            }
            Phase::Crashed(victim) => {
                events.push(Event::Restart(victim));
                if self.read_errors {
                    // The first is refused: the disk failed its read. The second reads it.
                    events.push(Event::Restart(victim));
                }
                self.phase = Phase::Quiet;
            }
            Phase::Over => {}
        }
        // The end comes with the last events, not in a group of its own at the same instant.
        if self.phase == Phase::Quiet && elapsed >= self.end {
            self.phase = Phase::Over;
        }
        if self.phase == Phase::Over {
            events.push(Event::End);
        }
        events
    }
}

/// One client thread: operations back to back until `end`.
struct Client {
    read_only: bool,
    index: usize,
    rng: DetRng,
    keys: usize,
    op_deadline: Duration,
    clock: threadsim::ClockRef,
    recorder: Recorder,
    sessions_expired: Arc<Mutex<usize>>,
}

impl Client {
    fn run(mut self, clerk: &mut Clerk, end: Instant) {
        let mut counter = 0u64;
        while self.clock.now() < end {
            counter += 1;
            let key = format!("k{}", self.rng.index(self.keys));
            let value = format!("{}.{counter} ", self.index);
            let draw = self.rng.index(10);
            let (op, input) = match if self.read_only { 0 } else { draw } {
                0..=4 => (KvOp::Get(key.clone()), KvInput::Get(key)),
                5..=7 => (
                    KvOp::Put(key.clone(), value.clone()),
                    KvInput::Put(key, value),
                ),
                _ => (
                    KvOp::Append(key.clone(), value.clone()),
                    KvInput::Append(key, value),
                ),
            };
            let Some(called) = self.recorder.call(self.index as u64, input) else {
                return;
            };
            let call = self.clock.now();
            let outcome = clerk.execute(op, Some(call + self.op_deadline));
            let output = match outcome {
                Ok(KvResult::Value(value)) => Some(KvOutput::Value(value)),
                Ok(KvResult::Done) => Some(KvOutput::Done),
                Ok(KvResult::Reads(reads)) => unreachable!("a single operation read {reads:?}"),
                Err(error) => {
                    if let ClerkError::SessionExpired(_) = error {
                        *self.sessions_expired.lock() += 1;
                    }
                    None
                }
            };
            self.recorder.ended(called, output);
        }
    }
}

/// Runs [`run_kv_workload`] in a fresh simulation with `seed` (under the watchdog) and returns
/// the run, to be checked outside the simulation.
pub fn simulate_kv(seed: u64, config: &KvWorkloadConfig) -> Result<KvRun, crate::SimFailure> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let config = config.clone();
    crate::simulate(seed, move |sim| {
        let run = run_kv_workload(sim, &config);
        sender.send(run).expect("the caller waits for the run");
    })?;
    Ok(receiver
        .recv()
        .expect("a run that ended without failure sent its history"))
}

/// The checker's time budget per history: a check that needs longer says "unknown" (and the
/// caller treats that as a failure to look at, never as a pass).
pub const CHECK_TIME_LIMIT: Duration = Duration::from_secs(120);

/// Checks a key-value history key by key.
pub fn check_kv_history(history: &History<KvInput, KvOutput>) -> Report {
    check_kv_history_within(history, CHECK_TIME_LIMIT)
}

/// [`check_kv_history`] with its own time budget per history (a test that only needs most
/// seeds rejected can give up sooner on a hard one: "unknown" then counts as not rejected).
pub fn check_kv_history_within(history: &History<KvInput, KvOutput>, limit: Duration) -> Report {
    let options = CheckOptions {
        budget: Budget::new(Budget::default().max_states, Some(limit)),
        ..CheckOptions::default()
    };
    check_partitions(&KeyValue, partition_by_key(history), &options)
}

/// Writes a failed run's history (native JSON-lines format) and, for the first illegal key, an
/// HTML page of the counterexample into `dir`; returns the history file.
pub fn write_failure(
    dir: &Path,
    name: &str,
    history: &History<KvInput, KvOutput>,
    report: &Report,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let file = dir.join(format!("{name}.jsonl"));
    userfiles::write_whole(&file, models::formats::json::write_kv(history))?;
    if let Some((partition, counterexample)) = report.counterexample() {
        let page = models::html::render(name, &partition.name, counterexample);
        userfiles::write_whole(&dir.join(format!("{name}.html")), page)?;
    }
    Ok(file)
}

/// The command that re-checks a history file written by [`write_failure`].
pub fn recheck_command(file: &Path) -> String {
    format!(
        "cargo run --release -p interleave -- check --model kv --format json {} --html {}",
        file.display(),
        file.parent()
            .map_or_else(|| ".".into(), |dir| dir.display().to_string())
    )
}
