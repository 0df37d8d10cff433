//! The key-value workload: concurrent clerks against a replicated store while the harness
//! partitions the leader into a minority (keeping some clients on its side), heals, crashes and
//! restarts nodes, drops messages and lets the nodes' clocks drift apart; every operation is
//! recorded with its simulated call and return time and the history is checked for
//! linearizability, key by key: online while the run goes (`kv_online`, which stops the
//! workload at the first violation) and whole at the end.

mod check;
mod clients;
mod config;
mod isolations;

use clients::Client;
use isolations::Isolations;

pub use check::{
    check_kv_history, check_kv_history_within, recheck_command, write_failure, CHECK_TIME_LIMIT,
};
pub use clients::{client_endpoints, new_clerk};
pub use config::{KvWorkloadConfig, LIST_APPEND_KEYS, SESSION_CHURN};

use crate::cluster::Cluster;
use crate::events::Events;
use crate::kv_online::{FoundOnline, Recorder, UntilViolation};
use crate::leader_faults::LeaderFaults;
use crate::run_end::{commit_after_healing, finish_run, heal_everything, probe_the_end};
use crate::runner::Sim;
use crate::schedule::{Schedule, ScheduleRecorder};
use crate::timeline::{execute, Following, Timeline};
use crate::txn_client::TxnClient;
use models::{History, KvInput, KvOutput, OnlineFigures};
use node::kv::{ClerkConfig, KvCommand};
use runspec::RunFigures;
use threadsim::clock::{spawn, ClockJoinHandle};
use threadsim::sync::{Arc, Mutex};
use threadsim::Instant;

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
    let cluster = Arc::new(Cluster::new(sim, config.cluster_config(sim)));
    let clock = cluster.clock().clone();
    let started = clock.now();
    let histories = Histories::new(Recorder::new(Events::new(
        clock.clone(),
        sim.trace().clone(),
    )));
    let threads = spawn_clients(sim, &cluster, config, &histories, started);
    let mut on_leader = LeaderFaults::default();
    let mut following;
    let mut isolations;
    let faults: &mut dyn Timeline = match schedule {
        Some(schedule) => {
            following = Following::new(schedule);
            &mut following
        }
        None => {
            isolations = Isolations::new(config, client_endpoints(config.clients));
            &mut isolations
        }
    };
    let mut until_violation = UntilViolation {
        inner: faults,
        recorder: histories.recorder.clone(),
    };
    let mut counts = execute(&cluster, &mut until_violation, recorder, &mut on_leader);
    cluster.heal();
    cluster.resume_every_paused_node();
    for thread in threads {
        thread.join();
    }
    cluster.check_invariants();
    // The clients have stopped and their histories are whole: the end every workload shares,
    // unless the online checker already stopped the run at a violation (the history is the
    // finding; a probe of what the violation left would only hide it).
    let faults = config.cluster.faults;
    let mut probed = runspec::FaultWindows::default();
    if !histories.recorder.stopped() {
        heal_everything(&cluster, faults, &[], &mut counts);
        let nodes = config.cluster.nodes;
        commit_after_healing(&cluster, faults, nodes, KvCommand::Noop.encode());
    }
    cluster.check_snapshot_policy(config.cluster.snapshot_threshold);
    if !histories.recorder.stopped() {
        probed = probe_the_end(sim, &cluster, faults);
    }
    let figures = finish_run(&cluster, started, &on_leader, &probed, counts);
    histories.finish(config.transactions, figures)
}

/// What the clients record as they run: single operations (checked online as they end) or
/// transactions, and the sessions that expired under them.
struct Histories {
    recorder: Recorder,
    sessions_expired: Arc<Mutex<usize>>,
    transactions: Arc<Mutex<Vec<models::Txn>>>,
}

impl Histories {
    fn new(recorder: Recorder) -> Histories {
        Histories {
            recorder,
            sessions_expired: Arc::default(),
            transactions: Arc::default(),
        }
    }

    /// The run, once every client has stopped: its history and the figures of the operations
    /// (or transactions) checked and of those whose outcome is unknown.
    fn finish(self, transactions_ran: bool, figures: RunFigures) -> KvRun {
        let (history, online, found_online) = self.recorder.finish();
        let transactions = std::mem::take(&mut *self.transactions.lock());
        let (checked, unknown) = if transactions_ran {
            let unknown = transactions.iter().filter(|txn| txn.ret.is_none()).count();
            (transactions.len(), unknown)
        } else {
            assert!(
                transactions.is_empty(),
                "transactions without the workload's clients"
            );
            let unknown = history.iter().filter(|op| op.ret.is_none()).count();
            (history.len(), unknown)
        };
        let figures = RunFigures {
            operations_checked: checked as u64,
            operations_unknown: unknown as u64,
            sessions_expired: *self.sessions_expired.lock() as u64,
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
}

/// Starts `config`'s clients on `cluster`, each a thread that runs until the workload's duration
/// after `started` has passed.
fn spawn_clients(
    sim: &Sim,
    cluster: &Arc<Cluster>,
    config: &KvWorkloadConfig,
    histories: &Histories,
    started: Instant,
) -> Vec<ClockJoinHandle<()>> {
    let clock = cluster.clock().clone();
    let end = started + config.duration;
    let rng = sim.rng(WORKLOAD_STREAM);
    (0..config.clients)
        .map(|index| {
            let mut clerk = new_clerk(cluster, index, ClerkConfig::default());
            if config.transactions {
                let client = TxnClient {
                    index,
                    rng: rng.split(index as u64),
                    keys: config.keys,
                    op_deadline: config.op_deadline,
                    clock: clock.clone(),
                    started,
                    history: histories.transactions.clone(),
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
                recorder: histories.recorder.clone(),
                sessions_expired: histories.sessions_expired.clone(),
            };
            spawn(&clock, format!("client-{index}"), move || {
                client.run(&mut clerk, end)
            })
        })
        .collect()
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
