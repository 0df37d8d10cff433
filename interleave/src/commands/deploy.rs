//! `interleave deploy`: a real cluster under a nemesis (see [`deploy::nemesis`]), its history
//! checked for linearizability, and a folder that shows what happened.

use crate::cli::{DeployArgs, FaultList, NetworkChoice};
use crate::interrupt::{interrupted, interrupted_exit, stop_on_ctrl_c};
use deploy::nemesis::{self, FaultKind, FaultRecord, NemesisConfig, NemesisRun, Workload};
use deploy::{Network, ServerProgram};
use models::{check_partitions, partition_by_key, CheckOptions, KeyValue, Report, Verdict};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use userfiles::write_whole;

/// What a run's folder holds besides its lock; a new run removes these first.
const RUN_FILES: [&str; 5] = [
    "cluster",
    "history.jsonl",
    "history.html",
    "faults.txt",
    "summary.txt",
];

/// Runs `interleave deploy`.
pub fn deploy(args: &DeployArgs) -> ExitCode {
    let seed = args.seed.resolve();
    let mut claimed = match claim(&args.out) {
        Ok(claim) => claim,
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    let server = match &args.server {
        Some(program) => ServerProgram {
            program: program.clone(),
            leading_args: Vec::new(),
        },
        None => match std::env::current_exe() {
            Ok(program) => ServerProgram {
                program,
                leading_args: vec!["server".into()],
            },
            Err(error) => {
                eprintln!("interleave: cannot find this program to run its servers: {error}");
                return ExitCode::from(2);
            }
        },
    };
    let mut server_args = vec![
        "--read-mode".to_string(),
        args.read_mode.name().to_string(),
        "--storage".to_string(),
        args.storage.name().to_string(),
    ];
    if let Some(bytes) = args.snapshot_threshold {
        server_args.extend(["--snapshot-threshold".to_string(), bytes.to_string()]);
    }
    if let Some(broken) = &args.broken_write {
        server_args.extend(["--broken-write".to_string(), broken.clone()]);
    }
    for mutation in &args.mutations {
        server_args.extend(["--mutation".to_string(), mutation.name().to_string()]);
    }
    let network = match network(args.network) {
        Ok(network) => network,
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    let faults = match injectable(&args.faults, network) {
        Ok(kinds) => FaultList { kinds, all: false },
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    let config = NemesisConfig {
        nodes: args.nodes,
        server,
        server_args,
        root: args.out.join(PARTIAL_CLUSTER),
        plan: nemesis::plan(seed, &faults.kinds, args.nodes, args.duration),
        duration: args.duration,
        seed,
        workload: Workload::default(),
        network,
    };
    eprintln!(
        "interleave deploy: {} servers on {network}, read mode {}, faults {} ({} planned), {:?}, \
         seed {seed}; folder {}",
        args.nodes,
        args.read_mode.name(),
        faults,
        config.plan.len(),
        args.duration,
        args.out.display()
    );
    stop_on_ctrl_c();
    let run = match nemesis::run(&config, &interrupted, &mut |line| eprintln!("{line}")) {
        Ok(run) => run,
        Err(message) => {
            eprintln!("interleave: {message}");
            eprintln!(
                "interleave: the last run's files in {} are kept",
                args.out.display()
            );
            return ExitCode::from(2);
        }
    };
    if let Err(message) = replace_last_run(&args.out, &mut claimed) {
        eprintln!("interleave: {message}");
        return ExitCode::from(2);
    }
    let report = check_partitions(
        &KeyValue,
        partition_by_key(&run.history),
        &CheckOptions::default(),
    );
    let summary = Summary::of(args, network, &faults, seed, &run, &report);
    // The verdict first, on standard output, so a folder that cannot be written (a full disk)
    // loses the files and not the verdict.
    if args.json {
        println!("{}", summary.json());
    } else {
        print!("{}", summary.text());
    }
    if let Err(error) = write_folder(&args.out, &run, &report, &summary) {
        eprintln!(
            "interleave: cannot write the run's folder {}: {error}",
            args.out.display()
        );
        return ExitCode::from(2);
    }
    ExitCode::from(summary.exit_code())
}

/// The network `choice` comes to on this machine: `auto` takes network namespaces where they
/// can be made and says why not where they cannot.
fn network(choice: NetworkChoice) -> Result<Network, String> {
    let available = deploy::netns::available();
    match (choice, available) {
        (NetworkChoice::Exactly(Network::Namespaces), Err(why)) => {
            Err(format!("--network namespaces cannot be made here: {why}"))
        }
        (NetworkChoice::Exactly(network), _) => Ok(network),
        (NetworkChoice::Auto, Ok(())) => Ok(Network::Namespaces),
        (NetworkChoice::Auto, Err(why)) => {
            eprintln!("interleave: links through proxies, not network namespaces: {why}");
            Ok(Network::Proxies)
        }
    }
}

/// The kinds of `faults` this machine and `network` can inject: those that need lossy disks
/// (FUSE, root) or another network are left out of `all` with a note where they cannot be
/// made, and refused when named.
fn injectable(faults: &FaultList, network: Network) -> Result<Vec<FaultKind>, String> {
    let (elsewhere, kinds): (Vec<FaultKind>, Vec<FaultKind>) = faults
        .kinds
        .iter()
        .partition(|kind| !kind.works_on(network));
    if !elsewhere.is_empty() {
        let names: Vec<&str> = elsewhere.iter().map(|kind| kind.name()).collect();
        let other = match network {
            Network::Namespaces => "--network proxies",
            _ => "--network namespaces",
        };
        if !faults.all {
            return Err(format!(
                "{} cannot be made through {network} (it takes {other})",
                names.join(" and ")
            ));
        }
        eprintln!(
            "interleave: {} left out of all: not made through {network} (it takes {other})",
            names.join(" and ")
        );
    }
    let (lossy, mut kinds): (Vec<FaultKind>, Vec<FaultKind>) =
        kinds.into_iter().partition(|kind| kind.needs_lossy_disks());
    if lossy.is_empty() {
        return Ok(kinds);
    }
    let names: Vec<&str> = lossy.iter().map(|kind| kind.name()).collect();
    match deploy::lossy_fs::available() {
        Ok(()) => {
            kinds.extend(lossy);
            kinds.sort();
            Ok(kinds)
        }
        Err(why) if faults.all => {
            eprintln!("interleave: {} left out of all: {why}", names.join(" and "));
            Ok(kinds)
        }
        Err(why) => Err(format!(
            "{} needs the lossy file system, and {why}",
            names.join(" and ")
        )),
    }
}

/// Where a run's servers keep their files until the run has a result: only then does it
/// replace the last run's `cluster` (a run that cannot start leaves the last run's files as they
/// were, and its own servers' logs here).
const PARTIAL_CLUSTER: &str = "cluster.partial";

/// Creates `out`, takes its lock, and removes what a run that never ended left there.
fn claim(out: &Path) -> Result<crate::out_dir::Claim, String> {
    let mut claim = crate::out_dir::claim(out, |name| {
        RUN_FILES.contains(&name) || name == PARTIAL_CLUSTER
    })?;
    // A run killed with its disks mounted left them behind, and nothing can remove them.
    for left in [PARTIAL_CLUSTER, "cluster"] {
        deploy::lossy_fs::unmount_stale_below(&out.join(left));
    }
    claim.clear(|name| name == PARTIAL_CLUSTER)?;
    Ok(claim)
}

/// Puts the run's files in place of the last run's.
fn replace_last_run(out: &Path, claim: &mut crate::out_dir::Claim) -> Result<(), String> {
    claim.clear(|_| true)?;
    let (from, to) = (out.join(PARTIAL_CLUSTER), out.join("cluster"));
    std::fs::rename(&from, &to).map_err(|error| {
        format!(
            "cannot move {} to {}: {error}",
            from.display(),
            to.display()
        )
    })
}

fn write_folder(
    out: &Path,
    run: &NemesisRun,
    report: &Report,
    summary: &Summary,
) -> std::io::Result<()> {
    // Smallest and most telling first; each file whole or not at all.
    write_whole(&out.join("summary.txt"), summary.text())?;
    write_whole(&out.join("faults.txt"), faults_text(&run.faults))?;
    sim::kv_workload::write_failure(out, "history", &run.history, report)?;
    Ok(())
}

fn faults_text(faults: &[FaultRecord]) -> String {
    let mut text = String::from("# start (s)  end (s)  fault: what came of it\n");
    for fault in faults {
        let new_leader = match (fault.hit_leader, fault.new_leader_after) {
            (true, Some(after)) => format!(" (a new leader after {} ms)", after / 1000),
            (true, None) => " (no new leader while it held)".to_string(),
            (false, _) => String::new(),
        };
        text.push_str(&format!(
            "{:>11.3}  {:>7.3}  {}: {}{new_leader}\n",
            fault.start as f64 / 1e6,
            fault.end as f64 / 1e6,
            fault.what,
            fault.outcome
        ));
    }
    text
}

/// The result of a run, as printed and saved.
struct Summary {
    verdict: Verdict,
    seed: u64,
    rerun: String,
    operations: usize,
    returned: usize,
    unknown: usize,
    faults: usize,
    recovery: Option<std::time::Duration>,
    network: Network,
    new_leader: NewLeaders,
    findings: Vec<String>,
    interrupted: bool,
    counterexample: Option<PathBuf>,
    folder: PathBuf,
}

impl Summary {
    fn of(
        args: &DeployArgs,
        network: Network,
        faults: &FaultList,
        seed: u64,
        run: &NemesisRun,
        report: &Report,
    ) -> Summary {
        let unknown = run.history.iter().filter(|op| op.ret.is_none()).count();
        let mut rerun = format!(
            "interleave deploy --seed {seed} --nodes {} --network {network} --read-mode {} --faults \
             {} --duration {}",
            args.nodes,
            args.read_mode.name(),
            faults,
            args.duration.as_secs_f64()
        );
        if let Some(bytes) = args.snapshot_threshold {
            rerun.push_str(&format!(" --snapshot-threshold {bytes}"));
        }
        if args.storage != deploy::StorageKind::default() {
            rerun.push_str(&format!(" --storage {}", args.storage.name()));
        }
        if let Some(broken) = &args.broken_write {
            rerun.push_str(&format!(" --broken-write {broken}"));
        }
        for mutation in &args.mutations {
            rerun.push_str(&format!(" --mutation {mutation}"));
        }
        Summary {
            verdict: report.verdict,
            seed,
            rerun,
            operations: run.history.len(),
            returned: run.history.len() - unknown,
            unknown,
            faults: run.faults.len(),
            recovery: run.recovery,
            network,
            new_leader: NewLeaders::of(&run.faults),
            findings: run.findings.clone(),
            interrupted: run.interrupted,
            counterexample: report
                .counterexample()
                .map(|_| args.out.join("history.html")),
            folder: args.out.clone(),
        }
    }

    fn exit_code(&self) -> u8 {
        if self.interrupted {
            interrupted_exit()
        } else if self.verdict == Verdict::NotLinearizable || !self.findings.is_empty() {
            1
        } else if self.verdict == Verdict::Linearizable {
            0
        } else {
            3
        }
    }

    fn verdict_words(&self) -> &'static str {
        match self.verdict {
            Verdict::Linearizable => "linearizable",
            Verdict::NotLinearizable => "NOT linearizable",
            _ => "undecided (the checker's budget ran out)",
        }
    }

    fn text(&self) -> String {
        let mut text = format!(
            "history: {} ({} operations: {} returned, {} of unknown outcome)\nfaults injected: \
             {} (links through {})\nrecovery after healing: {}\n{}",
            self.verdict_words(),
            self.operations,
            self.returned,
            self.unknown,
            self.faults,
            self.network,
            match self.recovery {
                Some(recovery) => format!("{recovery:.1?}"),
                None => "none within the bound".to_string(),
            },
            self.new_leader.text(),
        );
        if self.interrupted {
            text.push_str(&format!(
                "stopped early by {}: the history is of the part that ran\n",
                crate::interrupt::interruption()
            ));
        }
        for finding in &self.findings {
            text.push_str(&format!("server misbehaved: {finding}\n"));
        }
        if let Some(page) = &self.counterexample {
            text.push_str(&format!("counterexample: {}\n", page.display()));
        }
        text.push_str(&format!(
            "folder: {} (history.jsonl, faults.txt, cluster/n*.log)\nrerun the same faults: {} \
             (the same plan and clients' choices; real time decides the rest)\n",
            self.folder.display(),
            self.rerun
        ));
        text
    }

    fn json(&self) -> String {
        serde_json::json!({
            "version": crate::JSON_VERSION,
            "verdict": format!("{:?}", self.verdict),
            "seed": self.seed,
            "operations": self.operations,
            "returned": self.returned,
            "unknown": self.unknown,
            "faults": self.faults,
            "recovery_ms": self.recovery.map(|recovery| recovery.as_millis() as u64),
            "network": self.network.name(),
            "leader_hit": self.new_leader.hits,
            "new_leader_ms": self.new_leader.after_ms,
            "no_new_leader": self.new_leader.none,
            "findings": self.findings,
            "interrupted": self.interrupted,
            "exit": self.exit_code(),
            "folder": self.folder.display().to_string(),
            "rerun": self.rerun,
        })
        .to_string()
    }
}

/// How soon another node led after each fault that hit the leader.
struct NewLeaders {
    /// Faults that hit the leader.
    hits: usize,
    /// For each of them after which another node led, how long that took, sorted.
    after_ms: Vec<u64>,
    /// Those after which no other node led while the fault held.
    none: usize,
}

impl NewLeaders {
    fn of(faults: &[FaultRecord]) -> NewLeaders {
        let hit: Vec<&FaultRecord> = faults.iter().filter(|fault| fault.hit_leader).collect();
        let mut after_ms: Vec<u64> = hit
            .iter()
            .filter_map(|fault| fault.new_leader_after)
            .map(|micros| micros / 1000)
            .collect();
        after_ms.sort_unstable();
        NewLeaders {
            hits: hit.len(),
            none: hit.len() - after_ms.len(),
            after_ms,
        }
    }

    /// A line for the summary (empty if no fault hit the leader).
    fn text(&self) -> String {
        if self.hits == 0 {
            return String::new();
        }
        let mut text = format!("faults on the leader: {}", self.hits);
        if let (Some(first), Some(last)) = (self.after_ms.first(), self.after_ms.last()) {
            text.push_str(&format!(
                "; a new leader after {} ms (median; {first}-{last} ms)",
                self.after_ms[self.after_ms.len() / 2]
            ));
        }
        if self.none > 0 {
            text.push_str(&format!("; {} with no new leader while it held", self.none));
        }
        text.push('\n');
        text
    }
}
