//! The command line that reruns one seed with the settings of the run that found it.

use crate::cli::{EngineArgs, WorkloadArgs, WorkloadKind};
use crate::engines::SchedulerKind;

/// How the replay command starts.
pub const REPLAY_PREFIX: &str = "cargo run --release -p interleave --";

/// `interleave replay` for `seed`, with every workload and engine flag that differs from the
/// defaults, as it would be typed; on a deterministic engine with the trace digest the replay
/// must reproduce (`--expect`).
pub fn replay_line(
    seed: u64,
    workload: &WorkloadArgs,
    engine: &EngineArgs,
    trace_digest: threadsim::Digest,
) -> String {
    let expect = if engine.scheduler.deterministic() {
        format!(" --expect {trace_digest}")
    } else {
        String::new()
    };
    format!(
        "{REPLAY_PREFIX} replay --seed {seed}{}{expect}",
        flags(workload, engine)
    )
}

/// The workload and engine flags that differ from the defaults.
pub fn flags(workload: &WorkloadArgs, engine: &EngineArgs) -> String {
    let mut line = format!(" --nodes {} --rounds {}", workload.nodes, workload.rounds);
    if workload.reliable {
        line.push_str(" --reliable");
    }
    for mutation in &workload.mutations {
        line.push_str(&format!(" --mutation {mutation}"));
    }
    if workload.workload == WorkloadKind::Kv {
        line.push_str(&format!(
            " --workload kv --read-mode {}",
            workload.read_mode
        ));
    }
    if let Some(duration) = workload.duration {
        line.push_str(&format!(" --duration {}", duration.as_secs_f64()));
    }
    for (off, flag) in [
        (workload.no_crashes, " --no-crashes"),
        (workload.no_partitions, " --no-partitions"),
        (workload.no_one_way, " --no-one-way"),
    ] {
        if off {
            line.push_str(flag);
        }
    }
    if engine.scheduler != SchedulerKind::Random {
        line.push_str(&format!(" --scheduler {}", engine.scheduler.name()));
    }
    if engine.scheduler == SchedulerKind::Pct {
        line.push_str(&format!(" --pct-depth {}", engine.pct_depth));
    }
    line
}
