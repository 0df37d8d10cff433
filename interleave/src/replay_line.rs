//! The command line that reruns one seed with the settings of the run that found it.

use runspec::RunSpec;

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

/// `interleave replay` for `spec`, with every setting that differs from the defaults, as it
/// would be typed; on a deterministic engine with the trace digest the replay must reproduce
/// (`--expect`).
pub fn replay_line(spec: &RunSpec, trace_digest: threadsim::Digest) -> String {
    let expect = if spec.scheduler.deterministic() {
        format!(" --expect {trace_digest}")
    } else {
        String::new()
    };
    format!(
        "{} replay --seed {} {}{expect}",
        replay_prefix(spec.asks_for_broken()),
        spec.seed,
        spec.flags()
    )
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
