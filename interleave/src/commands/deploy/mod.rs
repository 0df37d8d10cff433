//! `interleave deploy`: a real cluster under a nemesis (see [`lab::nemesis`]), its history
//! checked for linearizability, and a folder that shows what happened.

mod choices;
mod refused;
mod summary;

use crate::cli::{DeployArgs, FaultList};
use crate::command_error::CommandError;
use crate::interrupt::{interrupted, stop_on_ctrl_c};
use lab::nemesis::{self, writes_stopped_for, FaultRecord, NemesisConfig, NemesisRun, Workload};
use models::{
    check_partitions, partition_by_key, CheckOptions, History, KeyValue, KvInput, KvOutput, Report,
};
use std::path::Path;
use std::process::ExitCode;
use summary::Summary;
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
    let choices = choices::system(args).and_then(|system| {
        let network = choices::network(args.network, &*system)?;
        let kinds = choices::injectable(&args.faults, network, &*system)?;
        Ok((system, network, kinds))
    });
    let (system, network, faults) = match choices {
        Ok((system, network, kinds)) => (system, network, FaultList { kinds, all: false }),
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    let config = NemesisConfig {
        nodes: args.nodes,
        system: system.clone(),
        root: args.out.join(PARTIAL_CLUSTER),
        plan: nemesis::plan(seed, &faults.kinds, args.nodes, args.duration),
        duration: args.duration,
        seed,
        workload: Workload::default(),
        network,
    };
    let reads = match args.system {
        crate::cli::SystemChoice::Interleave => format!(", read mode {}", args.read_mode.name()),
        _ => String::new(),
    };
    eprintln!(
        "interleave deploy: {} {} servers on {network}{reads}, faults {} ({} planned), {:?}, \
         seed {seed}; folder {}",
        args.nodes,
        system.name(),
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
    let summary = Summary::of(args, &*system, network, &faults, seed, &run, &report);
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

/// Where a run's servers keep their files until the run has a result: only then does it
/// replace the last run's `cluster` (a run that cannot start leaves the last run's files as they
/// were, and its own servers' logs here).
const PARTIAL_CLUSTER: &str = "cluster.partial";

/// Creates `out`, takes its lock, and removes what a run that never ended left there.
fn claim(out: &Path) -> Result<crate::out_dir::Claim, CommandError> {
    let mut claim = crate::out_dir::claim(out, |name| {
        RUN_FILES.contains(&name) || name == PARTIAL_CLUSTER
    })?;
    // A run killed with its disks mounted left them behind, and nothing can remove them.
    for left in [PARTIAL_CLUSTER, "cluster"] {
        lab::lossy_fs::unmount_stale_below(&out.join(left));
    }
    claim.clear(|name| name == PARTIAL_CLUSTER)?;
    Ok(claim)
}

/// Puts the run's files in place of the last run's.
fn replace_last_run(out: &Path, claim: &mut crate::out_dir::Claim) -> Result<(), CommandError> {
    claim.clear(|_| true)?;
    let (from, to) = (out.join(PARTIAL_CLUSTER), out.join("cluster"));
    std::fs::rename(&from, &to).map_err(|source| CommandError::Move { from, to, source })
}

fn write_folder(
    out: &Path,
    run: &NemesisRun,
    report: &Report,
    summary: &Summary,
) -> std::io::Result<()> {
    // Smallest and most telling first; each file whole or not at all.
    write_whole(&out.join("summary.txt"), summary.text())?;
    write_whole(
        &out.join("faults.txt"),
        faults_text(&run.faults, &run.history),
    )?;
    sim::kv_workload::write_failure(out, "history", &run.history, report)?;
    Ok(())
}

fn faults_text(faults: &[FaultRecord], history: &History<KvInput, KvOutput>) -> String {
    let mut text = String::from("# start (s)  end (s)  fault: what came of it\n");
    for fault in faults {
        let mut new_leader = match (fault.hit_leader, fault.new_leader_after) {
            (true, Some(after)) => format!(" (a new leader after {} ms)", after / 1000),
            (true, None) => " (no new leader while it held)".to_string(),
            (false, _) => String::new(),
        };
        if fault.injected {
            new_leader.push_str(&match writes_stopped_for(history, fault.in_place) {
                Some(after) => format!(" (writes acknowledged again after {} ms)", after / 1000),
                None => " (no write acknowledged again before the end)".to_string(),
            });
        }
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
