//! One nemesis run: start the cluster, start the clients, inject the plan's faults one after
//! another, heal everything, check that the cluster recovers, stop it cleanly, and hand back the
//! history with what the servers did wrong on the way. Checking the history is the caller's.

use super::clients::{micros_since, Clients, Workload};
use super::error::{Finding, RunError};
use super::fault::{FaultKind, Injected};
use super::inject::Nemesis;
use super::plan::Step;
use super::recovery::{check_recovery, RECOVERY_BOUND};
use crate::links::Network;
use crate::local_cluster::{LocalCluster, LocalClusterSpec};
use crate::system::{Connection, System, Unreachable};
use models::{History, KvInput, KvOutput, Operation};
use node::NodeId;
use server::real_time::{now, sleep_until};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use threadsim::DetRng;

/// How long the cluster has to elect its first leader.
const FIRST_LEADER_BOUND: Duration = Duration::from_secs(10);

/// What a run needs.
#[derive(Clone, Debug)]
pub struct NemesisConfig {
    /// How many servers.
    pub nodes: u32,
    /// The system to run. Clock and disk faults need one that cooperates (this project's
    /// server started with `--allow-faults`).
    pub system: Arc<dyn System>,
    /// Where the servers' data directories and logs go.
    pub root: PathBuf,
    /// The faults.
    pub plan: Vec<Step>,
    /// How long the clients run before everything is healed.
    pub duration: Duration,
    /// The seed of the clients and of the nemesis's choices at run time.
    pub seed: u64,
    /// The clients.
    pub workload: Workload,
    /// How the servers reach each other: proxies, or hosts in network namespaces.
    pub network: Network,
}

/// A fault as it was injected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultRecord {
    /// Its kind.
    pub kind: FaultKind,
    /// When its injection began, in microseconds from the start of the clients.
    pub start: u64,
    /// When its injection was done and the fault in place (rules written, signals sent).
    pub in_place: u64,
    /// When it was healed.
    pub end: u64,
    /// What was done, naming the nodes it hit.
    pub what: String,
    /// What came of it ("healed", "restarted", ...), or why it could not be injected.
    pub outcome: String,
    /// Whether it was injected at all.
    pub injected: bool,
    /// Whether it was aimed at the leader and one led when it came.
    pub hit_leader: bool,
    /// With `hit_leader`: how long, in microseconds from the injection, until another node
    /// said it led (`None`: none did while the fault held).
    pub new_leader_after: Option<u64>,
}

/// Watching for a new leader after a fault hit the old one.
struct LeaderWatch {
    old: NodeId,
    since: Instant,
    after: Option<Duration>,
}

/// What a run produced.
#[derive(Debug, Default)]
pub struct NemesisRun {
    /// Every client operation, by call time (the reads that checked recovery included).
    pub history: History<KvInput, KvOutput>,
    /// The faults as injected.
    pub faults: Vec<FaultRecord>,
    /// What the servers did wrong besides what the history shows: a node that went on with a
    /// failed disk, exited on its own, did not recover, did not stop cleanly.
    pub findings: Vec<String>,
    /// How long the cluster took to answer a read of every key once everything was healed
    /// (`None`: it did not within [`RECOVERY_BOUND`]).
    pub recovery: Option<Duration>,
    /// Whether the run was cut short (by Ctrl-C).
    pub interrupted: bool,
}

/// Runs `config`; `interrupted` is asked often and cuts the run short when it says so;
/// `progress` hears of every fault as it comes and goes. An error means the run could not be
/// made (the cluster or the clients did not start); what the servers did wrong is in the
/// result's findings.
pub fn run(
    config: &NemesisConfig,
    interrupted: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<NemesisRun, RunError> {
    let mut cluster = start_cluster(config, progress)?;
    let connection = config.system.connect(cluster.clients());
    let writers_cut = Unreachable::default();
    let mut run = Run {
        nemesis: Nemesis {
            cluster: &mut cluster,
            connection: &*connection,
            writers_cut: &writers_cut,
            rng: DetRng::new(config.seed).split(2),
            hit_leader: None,
            reconfigured: Default::default(),
        },
        interrupted,
        progress,
        result: NemesisRun::default(),
        epoch: now(),
        down: BTreeSet::new(),
        skew: None,
    };
    if !run.wait_for_a_leader(config)? {
        // Stopped before anything ran: an empty history, the servers stopped cleanly.
        run.result.interrupted = true;
        run.nemesis.cluster.stop_all(config.system.stop_bound());
        return Ok(run.result);
    }
    run.epoch = now();
    let clients = Clients::start(
        config.workload,
        &*connection,
        config.system.appends(),
        &writers_cut,
        config.seed,
        run.epoch,
    )
    .map_err(RunError::Clients)?;
    run.follow(&config.plan);
    let reads = run.heal_and_recover(config, &*connection);
    let Run { mut result, .. } = run;
    result.history = clients.stop();
    result.history.extend(reads);
    result.history.sort_by_key(|operation| operation.call);
    connection.close();
    stop_cleanly(&mut cluster, config, &mut result);
    Ok(result)
}

/// Starts the servers of `config`, and says where they are.
fn start_cluster(
    config: &NemesisConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<LocalCluster, RunError> {
    let lossy_disks = (config.plan.iter()).any(|step| step.fault.kind().needs_lossy_disks());
    let cluster = LocalCluster::start(LocalClusterSpec {
        nodes: config.nodes,
        system: config.system.clone(),
        root: config.root.clone(),
        network: config.network,
        lossy_disks,
        seed: config.seed,
    })
    .map_err(RunError::Cluster)?;
    assert_eq!(
        cluster.ids().len(),
        config.nodes as usize,
        "every server started"
    );
    if let Some(hosts) = cluster.hosts() {
        let last = NodeId(config.nodes - 1);
        progress(&format!(
            "hosts: network namespaces {} to {} at {} to {} (slot {})",
            hosts.namespace(NodeId(0)),
            hosts.namespace(last),
            hosts.address(NodeId(0)),
            hosts.address(last),
            hosts.slot()
        ));
    }
    Ok(cluster)
}

/// Stops every server with SIGTERM: one that does not stop cleanly, or logged a violated
/// invariant or a panic, is a finding.
fn stop_cleanly(cluster: &mut LocalCluster, config: &NemesisConfig, result: &mut NemesisRun) {
    let stop_bound = config.system.stop_bound();
    for (node, status) in cluster.stop_all(stop_bound) {
        match status {
            Some(status) if config.system.stopped_cleanly(status) => {}
            Some(status) => result
                .findings
                .push(format!("{node} exited with {status} on SIGTERM")),
            None => result.findings.push(format!(
                "{node} did not stop within {stop_bound:?} of SIGTERM and was killed"
            )),
        }
    }
    for node in cluster.ids() {
        let log = cluster.log(node);
        if let Some(line) = log
            .lines()
            .find(|line| line.contains("invariant violated") || line.contains("panicked"))
        {
            result.findings.push(format!("{node} logged: {line}"));
        }
    }
}

/// A run under way: the nemesis, what it has found, and the faults it holds.
struct Run<'a, 'n> {
    nemesis: Nemesis<'n>,
    interrupted: &'a dyn Fn() -> bool,
    progress: &'a mut dyn FnMut(&str),
    result: NemesisRun,
    /// When the clients started.
    epoch: Instant,
    /// The nodes the fault in place keeps down on purpose.
    down: BTreeSet<NodeId>,
    /// A fault that lasts through the one after it (clock skew), held.
    skew: Option<Active>,
}

/// A fault injected and not yet healed.
struct Active {
    kind: FaultKind,
    start: u64,
    in_place: u64,
    what: String,
    injected: Box<dyn Injected>,
    /// With a fault that hit the leader: when another took over.
    new_leader: Option<LeaderWatch>,
}

impl Run<'_, '_> {
    /// Waits for the servers to elect their first leader: false if interrupted first.
    fn wait_for_a_leader(&mut self, config: &NemesisConfig) -> Result<bool, RunError> {
        let waiting_since = now();
        while self.nemesis.leader().is_none() {
            if (self.interrupted)() {
                return Ok(false);
            }
            if now() >= waiting_since + FIRST_LEADER_BOUND {
                let exited = exited_servers(self.nemesis.cluster);
                return Err(RunError::NoLeader {
                    bound: FIRST_LEADER_BOUND,
                    exited,
                    logs: config.root.clone(),
                });
            }
            sleep_until(now() + Duration::from_millis(50));
        }
        Ok(true)
    }

    /// Injects the plan's faults one after another, each held and healed; stops early if
    /// interrupted.
    fn follow(&mut self, plan: &[Step]) {
        for step in plan {
            if !self.wait_until(self.epoch + step.start, None) || !self.take(step) {
                break;
            }
        }
        if let Some(skew) = self.skew.take() {
            self.heal(skew, now());
        }
        self.result.faults.sort_by_key(|fault| fault.start);
    }

    /// Injects `step`'s fault, holds it and heals it: false if interrupted.
    fn take(&mut self, step: &Step) -> bool {
        let Some(mut active) = self.inject(step) else {
            return true;
        };
        let end_of_hold = self.epoch + step.start + step.hold;
        if active.injected.lasts_through_next_fault() {
            if let Some(earlier) = self.skew.replace(active) {
                self.heal(earlier, end_of_hold);
            }
            return self.wait_until(end_of_hold, None);
        }
        self.down = active.injected.down().into_iter().collect();
        // A node whose disk failed is healed (restarted) as soon as it has stopped, so there is
        // no hold in which to wait for a new leader.
        let held = if active.injected.healed_once_stopped() {
            active.new_leader = None;
            true
        } else {
            let mut watch = active.new_leader.take();
            let held = self.wait_until_ticking(end_of_hold, &mut active, watch.as_mut());
            active.new_leader = watch;
            held
        };
        self.heal(active, end_of_hold);
        self.down.clear();
        if let Some(skew) = self.skew.take() {
            self.heal(skew, end_of_hold);
        }
        held
    }

    /// Injects `step`'s fault; `None` (recorded as not injected) if it could not be.
    fn inject(&mut self, step: &Step) -> Option<Active> {
        let start = micros_since(self.epoch);
        self.nemesis.hit_leader = None;
        let injection = match step.fault.inject(&mut self.nemesis) {
            Ok(injection) => injection,
            Err(why) => {
                (self.progress)(&format!("{:>6.1} s  not injected: {why}", seconds(start)));
                self.result.faults.push(FaultRecord {
                    kind: step.fault.kind(),
                    start,
                    in_place: start,
                    end: start,
                    what: step.fault.to_string(),
                    outcome: format!("not injected: {why}"),
                    injected: false,
                    hit_leader: false,
                    new_leader_after: None,
                });
                return None;
            }
        };
        let in_place = micros_since(self.epoch);
        assert!(in_place >= start, "a fault is in place after it began");
        (self.progress)(&format!("{:>6.1} s  {}", seconds(start), injection.what));
        Some(Active {
            kind: step.fault.kind(),
            start,
            in_place,
            what: injection.what,
            injected: injection.injected,
            new_leader: self.nemesis.hit_leader.map(|old| LeaderWatch {
                old,
                since: now(),
                after: None,
            }),
        })
    }

    /// Heals `active` (a node whose disk failed has until `limit` to stop) and records it.
    fn heal(&mut self, active: Active, limit: Instant) {
        let outcome = match active.injected.heal(&mut self.nemesis, limit) {
            Ok(outcome) => outcome,
            Err(finding) => {
                self.result.findings.push(finding.to_string());
                finding.to_string()
            }
        };
        let end = micros_since(self.epoch);
        assert!(
            end >= active.in_place,
            "a fault heals after it was in place"
        );
        (self.progress)(&format!("{:>6.1} s    {outcome}", seconds(end)));
        self.result.faults.push(FaultRecord {
            kind: active.kind,
            start: active.start,
            in_place: active.in_place,
            end,
            what: active.what,
            outcome,
            injected: true,
            hit_leader: active.new_leader.is_some(),
            new_leader_after: active
                .new_leader
                .and_then(|watch| watch.after)
                .map(|after| after.as_micros() as u64),
        });
    }

    /// The end of the run: waits out its duration, heals everything, and checks that the
    /// cluster answers a read of every key; the reads that checked it.
    fn heal_and_recover(
        &mut self,
        config: &NemesisConfig,
        connection: &dyn Connection,
    ) -> Vec<Operation<KvInput, KvOutput>> {
        self.result.interrupted = !self.wait_until(self.epoch + config.duration, None);
        let mut problems = self.nemesis.heal_everything();
        problems.extend(self.nemesis.restore_voters());
        (self.result.findings).extend(problems.iter().map(Finding::to_string));
        (self.progress)(&format!(
            "{:>6.1} s  every fault healed",
            seconds(micros_since(self.epoch))
        ));
        let (recovery, reads) = check_recovery(connection, config, self.epoch);
        self.result.recovery = recovery;
        if recovery.is_none() {
            self.result.findings.push(format!(
                "the cluster did not answer a read of every key within {RECOVERY_BOUND:?} of \
                 every fault being healed"
            ));
        }
        reads
    }

    /// [`Run::wait_until`] with `active` ticked as it holds (and the skew it meets).
    fn wait_until_ticking(
        &mut self,
        deadline: Instant,
        active: &mut Active,
        new_leader: Option<&mut LeaderWatch>,
    ) -> bool {
        self.wait_with(deadline, Some(active), new_leader)
    }

    /// Waits until `deadline`, watching for servers that exit on their own (those in `down`
    /// are meant to be down), which are findings and are started again, and (with
    /// `new_leader`) for a node other than the deposed leader to say it leads. Returns false
    /// if interrupted.
    fn wait_until(&mut self, deadline: Instant, new_leader: Option<&mut LeaderWatch>) -> bool {
        self.wait_with(deadline, None, new_leader)
    }

    fn wait_with(
        &mut self,
        deadline: Instant,
        mut active: Option<&mut Active>,
        mut new_leader: Option<&mut LeaderWatch>,
    ) -> bool {
        loop {
            if (self.interrupted)() {
                return false;
            }
            if let Some(watch) = new_leader.as_deref_mut() {
                if watch.after.is_none() && self.nemesis.led_by_other_than(watch.old) {
                    watch.after = Some(now().saturating_duration_since(watch.since));
                }
            }
            self.tick(active.as_deref_mut());
            self.restart_exited();
            if now() >= deadline {
                return true;
            }
            sleep_until((now() + Duration::from_millis(20)).min(deadline));
        }
    }

    /// Lets the faults in place act (a strobe flips its clock): an error is a finding.
    fn tick(&mut self, active: Option<&mut Active>) {
        let held = active.into_iter().chain(self.skew.as_mut());
        for active in held {
            if let Err(finding) = active.injected.tick(&mut self.nemesis) {
                self.result.findings.push(finding.to_string());
            }
        }
    }

    /// Starts again every server that exited on its own (not one kept down on purpose): each
    /// is a finding.
    fn restart_exited(&mut self) {
        for node in self.nemesis.cluster.ids() {
            if self.down.contains(&node) {
                continue;
            }
            if let Ok(Some(status)) = self.nemesis.cluster.exited(node) {
                (self.result.findings).push(format!("{node} exited on its own with {status}"));
                if let Err(error) = self.nemesis.cluster.start_node(node) {
                    (self.result.findings).push(format!("restarting {node}: {error}"));
                }
            }
        }
    }
}

fn seconds(micros: u64) -> f64 {
    micros as f64 / 1e6
}

/// The servers that have exited, and how, as a parenthesis for a message (empty if none).
fn exited_servers(cluster: &mut LocalCluster) -> String {
    let mut exited = Vec::new();
    for node in cluster.ids() {
        if let Ok(Some(status)) = cluster.exited(node) {
            exited.push(format!("{node} exited with {status}"));
        }
    }
    if exited.is_empty() {
        String::new()
    } else {
        format!(" ({})", exited.join(", "))
    }
}
