//! The command line that reruns one seed with the settings of the run that found it.

use crate::run_spec::{EngineArgs, SchedulerKind, WorkloadArgs, WorkloadKind};

/// How the replay command starts when this binary runs under `cargo run`.
pub const CARGO_RUN_PREFIX: &str = "cargo run --release -p interleave --";
/// The same for a run with a broken variant, which only a build with them can replay.
pub const CARGO_RUN_BROKEN_PREFIX: &str =
    "cargo run --release -p interleave --features mutations --";

/// How a command that reruns something starts: the way this process was started. Under
/// `cargo run` (cargo sets `CARGO` and the package name), `cargo run --release -p interleave --`;
/// otherwise the program as it was typed (`interleave` from `PATH` after `cargo install`, or
/// the path given), quoted for a shell if it needs it.
/// Under `cargo run`, a rerun of a `broken` run (a mutation, the unsafe-local read mode) asks
/// for the build with broken variants.
pub fn replay_prefix(broken: bool) -> String {
    let under_cargo = std::env::var_os("CARGO").is_some()
        && std::env::var("CARGO_PKG_NAME").as_deref() == Ok("interleave");
    prefix_for(under_cargo, std::env::args_os().next(), broken)
}

fn prefix_for(under_cargo: bool, program: Option<std::ffi::OsString>, broken: bool) -> String {
    let program = program.map(|p| p.to_string_lossy().into_owned());
    match program {
        Some(program) if !under_cargo && !program.is_empty() => shell_word(&program),
        _ if broken => CARGO_RUN_BROKEN_PREFIX.to_string(),
        _ => CARGO_RUN_PREFIX.to_string(),
    }
}

/// `word` as one shell word: as is when it holds only characters no shell treats specially,
/// else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./-+=:,@%".contains(c);
    if word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

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
        "{} replay --seed {seed}{}{expect}",
        replay_prefix(crate::run_spec::asks_for_broken(workload)),
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
    if workload.clock_skew != sim::ClockSkew::WithinBound {
        line.push_str(&format!(" --clock-skew {}", workload.clock_skew));
    }
    if let Some(bytes) = workload.snapshot_threshold {
        line.push_str(&format!(" --snapshot-threshold {bytes}"));
    }
    if engine.scheduler != SchedulerKind::Random {
        line.push_str(&format!(" --scheduler {}", engine.scheduler.name()));
    }
    if engine.scheduler == SchedulerKind::Pct {
        line.push_str(&format!(" --pct-depth {}", engine.pct_depth));
    }
    line
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn the_replay_line_starts_the_way_the_binary_was_started() {
        let prefix = |cargo, program: &str| prefix_for(cargo, Some(program.into()), false);
        assert_eq!(prefix(true, "target/release/interleave"), CARGO_RUN_PREFIX);
        assert_eq!(
            prefix_for(true, Some("target/release/interleave".into()), true),
            CARGO_RUN_BROKEN_PREFIX
        );
        assert_eq!(
            prefix_for(false, Some("interleave".into()), true),
            "interleave",
            "a binary run as itself replays with itself"
        );
        assert_eq!(prefix(false, "interleave"), "interleave");
        assert_eq!(
            prefix(false, "/opt/tools/bin/interleave"),
            "/opt/tools/bin/interleave"
        );
        assert_eq!(prefix(false, "/my tools/it's"), "'/my tools/it'\\''s'");
        assert_eq!(prefix_for(false, None, false), CARGO_RUN_PREFIX);
    }
}
