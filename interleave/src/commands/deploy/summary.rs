//! What `interleave deploy` says of a run: the verdict, the figures, the rerun line, as text
//! and as JSON.

use crate::cli::{DeployArgs, FaultList, SystemChoice};
use crate::interrupt::interrupted_exit;
use lab::nemesis::{bound_on_leader, FaultRecord, NemesisRun, WritesStopped};
use lab::system::System;
use lab::Network;
use models::{Report, Verdict};
use std::path::PathBuf;

/// The result of a run, as printed and saved.
pub(super) struct Summary {
    verdict: Verdict,
    seed: u64,
    rerun: String,
    operations: usize,
    returned: usize,
    unknown: usize,
    faults: usize,
    recovery: Option<std::time::Duration>,
    system: String,
    network: Network,
    new_leader: NewLeaders,
    writes_stopped: WritesStopped,
    /// Interleave's own server with its default timing, of this many nodes: the bounds of
    /// [`bound_on_leader`] apply (not to another system or a server program of the user's).
    bounded: Option<usize>,
    findings: Vec<String>,
    interrupted: bool,
    counterexample: Option<PathBuf>,
    folder: PathBuf,
}

impl Summary {
    pub(super) fn of(
        args: &DeployArgs,
        system: &dyn System,
        network: Network,
        faults: &FaultList,
        seed: u64,
        run: &NemesisRun,
        report: &Report,
    ) -> Summary {
        let unknown = run.history.iter().filter(|op| op.ret.is_none()).count();
        let how_it_reads = match args.system {
            SystemChoice::Interleave => format!("--read-mode {}", args.read_mode.name()),
            other => format!("--system {}", other.name()),
        };
        let mut rerun = format!(
            "interleave deploy --seed {seed} --nodes {} --network {network} {how_it_reads} \
             --faults {} --duration {}",
            args.nodes,
            faults,
            args.duration.as_secs_f64()
        );
        if let Some(program) = &args.server {
            rerun.push_str(&format!(" --server {}", program.display()));
        }
        if let Some(bytes) = args.snapshot_threshold {
            rerun.push_str(&format!(" --snapshot-threshold {bytes}"));
        }
        if args.storage != storage::StorageKind::default() {
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
            system: system.name(),
            network,
            new_leader: NewLeaders::of(&run.faults),
            writes_stopped: WritesStopped::of(&run.history, &run.faults),
            bounded: (args.system == SystemChoice::Interleave && args.server.is_none())
                .then_some(args.nodes as usize),
            findings: run.findings.clone(),
            interrupted: run.interrupted,
            counterexample: report
                .counterexample()
                .map(|_| args.out.join("history.html")),
            folder: args.out.clone(),
        }
    }

    pub(super) fn exit_code(&self) -> u8 {
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

    pub(super) fn verdict_words(&self) -> &'static str {
        match self.verdict {
            Verdict::Linearizable => "linearizable",
            Verdict::NotLinearizable => "NOT linearizable",
            _ => "undecided (the checker's budget ran out)",
        }
    }

    pub(super) fn text(&self) -> String {
        let mut text = format!(
            "history: {} ({} operations: {} returned, {} of unknown outcome)\nfaults injected: \
             {} ({} on {})\nrecovery after healing: {}\n{}{}",
            self.verdict_words(),
            self.operations,
            self.returned,
            self.unknown,
            self.faults,
            self.system,
            self.network,
            match self.recovery {
                Some(recovery) => format!("{recovery:.1?}"),
                None => "none within the bound".to_string(),
            },
            self.new_leader.text(),
            writes_stopped_text(&self.writes_stopped, self.bounded),
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

    pub(super) fn json(&self) -> String {
        serde_json::json!({
            "version": crate::JSON_VERSION,
            "verdict": format!("{:?}", self.verdict),
            "seed": self.seed,
            "operations": self.operations,
            "returned": self.returned,
            "unknown": self.unknown,
            "faults": self.faults,
            "recovery_ms": self.recovery.map(|recovery| recovery.as_millis() as u64),
            "system": self.system,
            "network": self.network.name(),
            "leader_hit": self.new_leader.hits,
            "new_leader_ms": self.new_leader.after_ms,
            "no_new_leader": self.new_leader.none,
            "writes_stopped_ms": self.writes_stopped.by_group.iter()
                .map(|(group, (windows, _))| {
                    let millis: Vec<u64> = windows.iter().map(|micros| micros / 1000).collect();
                    (group.name(), serde_json::json!(millis))
                })
                .collect::<serde_json::Map<String, serde_json::Value>>(),
            "writes_never_resumed": self.writes_stopped.by_group.values()
                .map(|(_, never)| never)
                .sum::<usize>(),
            "writes_stopped_bound_ms": self.bounded.map(|nodes| self.writes_stopped.by_group.keys()
                .filter(|group| group.hit_leader)
                .filter_map(|group| {
                    let bound = bound_on_leader(group.kind, nodes)?;
                    Some((group.name(), serde_json::json!(bound.as_millis() as u64)))
                })
                .collect::<serde_json::Map<String, serde_json::Value>>()),
            "writes_stopped_past_bound": self.bounded.map(|nodes| self.writes_stopped
                .past_bound(|kind| bound_on_leader(kind, nodes))
                .values()
                .sum::<usize>()),
            "findings": self.findings,
            "interrupted": self.interrupted,
            "exit": self.exit_code(),
            "folder": self.folder.display().to_string(),
            "rerun": self.rerun,
        })
        .to_string()
    }
}

/// A line for the summary: per group of faults (kind, and whether they hit the leader), how
/// long they stopped the writes (median and worst), and how many stopped them until the end
/// (empty when no fault was injected).
fn writes_stopped_text(stopped: &WritesStopped, bounded: Option<usize>) -> String {
    if stopped.by_group.is_empty() {
        return String::new();
    }
    let past = bounded.map(|nodes| stopped.past_bound(|kind| bound_on_leader(kind, nodes)));
    let kinds: Vec<String> = stopped
        .by_group
        .iter()
        .map(|(group, (windows, never))| {
            let name = group.name();
            let mut text = match (windows.get(windows.len() / 2), windows.last()) {
                (Some(median), Some(worst)) => format!(
                    "{name} {} ms ({} ms, {} of {})",
                    median / 1000,
                    worst / 1000,
                    windows.len(),
                    windows.len() + never
                ),
                _ => name,
            };
            if *never > 0 {
                text.push_str(&format!(" and {never} stopped until the end"));
            }
            let bound = bounded.and_then(|nodes| bound_on_leader(group.kind, nodes));
            let past = past.as_ref().and_then(|past| past.get(group)).copied();
            if let (Some(bound), Some(past)) = (bound, past) {
                text.push_str(&format!(", bound {} ms", bound.as_millis()));
                if past > 0 {
                    text.push_str(&format!(", {past} PAST IT"));
                }
            }
            text
        })
        .collect();
    format!(
        "writes acknowledged again once a fault was in place, median (worst): {}\n",
        kinds.join("; ")
    )
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
    pub(super) fn of(faults: &[FaultRecord]) -> NewLeaders {
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
    pub(super) fn text(&self) -> String {
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
