//! One nemesis run: start the cluster, start the clients, inject the plan's faults one after
//! another, heal everything, check that the cluster recovers, stop it cleanly, and hand back the
//! history with what the servers did wrong on the way. Checking the history is the caller's.

use super::clients::{micros_since, Clients, Workload};
use super::fault::FaultKind;
use super::inject::{Injected, Nemesis};
use super::plan::Step;
use super::recovery::{check_recovery, RECOVERY_BOUND};
use crate::system::{System, Unreachable};
use crate::{LocalCluster, LocalClusterSpec, Network};
use models::{History, KvInput, KvOutput};
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
) -> Result<NemesisRun, String> {
    let mut cluster = LocalCluster::start(LocalClusterSpec {
        nodes: config.nodes,
        system: config.system.clone(),
        root: config.root.clone(),
        network: config.network,
        lossy_disks: config
            .plan
            .iter()
            .any(|step| step.fault.kind().needs_lossy_disks()),
        seed: config.seed,
    })
    .map_err(|error| format!("cannot start the cluster: {error}"))?;
    if let Some(hosts) = cluster.hosts() {
        progress(&format!(
            "hosts: network namespaces {} to {} at {} to {} (slot {})",
            hosts.namespace(NodeId(0)),
            hosts.namespace(NodeId(config.nodes - 1)),
            hosts.address(NodeId(0)),
            hosts.address(NodeId(config.nodes - 1)),
            hosts.slot()
        ));
    }
    let connection = config.system.connect(cluster.clients());
    let writers_cut = Unreachable::default();
    let mut result = NemesisRun::default();
    let mut nemesis = Nemesis {
        cluster: &mut cluster,
        connection: &*connection,
        writers_cut: &writers_cut,
        rng: DetRng::new(config.seed).split(2),
        hit_leader: None,
        reconfigured: Default::default(),
    };
    let waiting_since = now();
    while nemesis.leader().is_none() {
        if interrupted() {
            // Stopped before anything ran: an empty history, the servers stopped cleanly.
            result.interrupted = true;
            cluster.stop_all(config.system.stop_bound());
            return Ok(result);
        }
        if now() >= waiting_since + FIRST_LEADER_BOUND {
            let exited = exited_servers(nemesis.cluster);
            return Err(format!(
                "no leader within {FIRST_LEADER_BOUND:?} of starting the servers{exited} (their \
                 logs are in {})",
                config.root.display()
            ));
        }
        sleep_until(now() + Duration::from_millis(50));
    }
    let epoch = now();
    let clients = Clients::start(
        config.workload,
        &*connection,
        config.system.appends(),
        &writers_cut,
        config.seed,
        epoch,
    )
    .map_err(|error| format!("cannot start the clients: {error}"))?;
    let mut down: BTreeSet<NodeId> = BTreeSet::new();
    // A clock fault lasts through the fault after it: skew is a condition the other faults
    // meet (a leader with a slow clock cut off, say), not a fault of its own moment.
    let mut skew: Option<Active> = None;
    for step in &config.plan {
        let waited = wait_until(
            epoch + step.start,
            interrupted,
            &mut nemesis,
            &down,
            &mut result,
            None,
        );
        if !waited {
            break;
        }
        let start = micros_since(epoch);
        let (what, injected) = match nemesis.inject(&step.fault) {
            Ok(done) => done,
            Err(why) => {
                progress(&format!("{:>6.1} s  not injected: {why}", seconds(start)));
                result.faults.push(FaultRecord {
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
                continue;
            }
        };
        let in_place = micros_since(epoch);
        progress(&format!("{:>6.1} s  {what}", seconds(start)));
        let end_of_hold = epoch + step.start + step.hold;
        let mut active = Active {
            kind: step.fault.kind(),
            start,
            in_place,
            what,
            injected,
            new_leader: nemesis.hit_leader.map(|old| LeaderWatch {
                old,
                since: now(),
                after: None,
            }),
        };
        if matches!(active.injected, Injected::Clocks(_)) {
            if let Some(earlier) = skew.replace(active) {
                heal(
                    &mut nemesis,
                    earlier,
                    end_of_hold,
                    epoch,
                    &mut result,
                    progress,
                );
            }
            if !wait_until(
                end_of_hold,
                interrupted,
                &mut nemesis,
                &down,
                &mut result,
                None,
            ) {
                break;
            }
            continue;
        }
        down = match &active.injected {
            Injected::Killed(nodes) => nodes.iter().copied().collect(),
            Injected::Disk(node, _) | Injected::Corrupted(node, _) => [*node].into(),
            _ => BTreeSet::new(),
        };
        // A node whose disk failed is healed (restarted) as soon as it has stopped, so there is
        // no hold in which to wait for a new leader.
        if matches!(active.injected, Injected::Disk(..)) {
            active.new_leader = None;
        }
        let held = matches!(active.injected, Injected::Disk(..))
            || wait_until(
                end_of_hold,
                interrupted,
                &mut nemesis,
                &down,
                &mut result,
                active.new_leader.as_mut(),
            );
        heal(
            &mut nemesis,
            active,
            end_of_hold,
            epoch,
            &mut result,
            progress,
        );
        down.clear();
        if let Some(skew) = skew.take() {
            heal(
                &mut nemesis,
                skew,
                end_of_hold,
                epoch,
                &mut result,
                progress,
            );
        }
        if !held {
            break;
        }
    }
    if let Some(skew) = skew.take() {
        heal(&mut nemesis, skew, now(), epoch, &mut result, progress);
    }
    result.faults.sort_by_key(|fault| fault.start);
    result.interrupted = !wait_until(
        epoch + config.duration,
        interrupted,
        &mut nemesis,
        &down,
        &mut result,
        None,
    );
    result.findings.extend(nemesis.heal_everything());
    progress(&format!(
        "{:>6.1} s  every fault healed",
        seconds(micros_since(epoch))
    ));
    let (recovery, reads) = check_recovery(&*connection, config, epoch);
    result.recovery = recovery;
    if recovery.is_none() {
        result.findings.push(format!(
            "the cluster did not answer a read of every key within {RECOVERY_BOUND:?} of every \
             fault being healed"
        ));
    }
    result.history = clients.stop();
    result.history.extend(reads);
    result.history.sort_by_key(|operation| operation.call);
    connection.close();
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
    Ok(result)
}

/// A fault injected and not yet healed.
struct Active {
    kind: FaultKind,
    start: u64,
    in_place: u64,
    what: String,
    injected: Injected,
    /// With a fault that hit the leader: when another took over.
    new_leader: Option<LeaderWatch>,
}

/// Heals `active` (a node whose disk failed has until `limit` to stop) and records it.
fn heal(
    nemesis: &mut Nemesis<'_>,
    active: Active,
    limit: Instant,
    epoch: Instant,
    result: &mut NemesisRun,
    progress: &mut dyn FnMut(&str),
) {
    let outcome = match nemesis.heal(active.injected, limit) {
        Ok(outcome) => outcome,
        Err(finding) => {
            result.findings.push(finding.clone());
            finding
        }
    };
    let end = micros_since(epoch);
    progress(&format!("{:>6.1} s    {outcome}", seconds(end)));
    result.faults.push(FaultRecord {
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

/// Waits until `deadline`, watching for servers that exit on their own (those in `down` are
/// meant to be down), which are findings and are started again, and (with `new_leader`) for
/// a node other than the deposed leader to say it leads. Returns false if interrupted.
fn wait_until(
    deadline: Instant,
    interrupted: &dyn Fn() -> bool,
    nemesis: &mut Nemesis<'_>,
    down: &BTreeSet<NodeId>,
    result: &mut NemesisRun,
    mut new_leader: Option<&mut LeaderWatch>,
) -> bool {
    loop {
        if interrupted() {
            return false;
        }
        if let Some(watch) = new_leader.as_deref_mut() {
            if watch.after.is_none() && nemesis.led_by_other_than(watch.old) {
                watch.after = Some(now().saturating_duration_since(watch.since));
            }
        }
        for node in nemesis.cluster.ids() {
            if down.contains(&node) {
                continue;
            }
            if let Ok(Some(status)) = nemesis.cluster.exited(node) {
                result
                    .findings
                    .push(format!("{node} exited on its own with {status}"));
                if let Err(error) = nemesis.cluster.start_node(node) {
                    result.findings.push(format!("restarting {node}: {error}"));
                }
            }
        }
        if now() >= deadline {
            return true;
        }
        sleep_until((now() + Duration::from_millis(20)).min(deadline));
    }
}
