//! `interleave shrink FOLDER`: shrinks a saved failure's schedule later.

use crate::cli::ShrinkArgs;
use crate::engines::Watchdog;
use crate::shrink::{read_schedule, replay_schedule_line, shrink_failure, spec_of};
use std::process::ExitCode;
use std::time::Duration;

/// Reads `FOLDER/schedule.full.txt` (or the schedule file given), shrinks it on the engine its
/// notes name, and writes `schedule.shrunk.txt` beside it. Exit 0 when the shrunk schedule was
/// verified, 1 when the full one does not fail (any more), 2 on bad input, 130 when Ctrl-C cut
/// it short (what it had is written and verified all the same).
pub fn shrink(args: &ShrinkArgs) -> ExitCode {
    let file = if args.folder.is_dir() {
        let file = args.folder.join("schedule.full.txt");
        if !file.exists() {
            eprintln!(
                "interleave: {} is not a failure folder: it has no schedule.full.txt (chaos writes \
                 one for every failing seed)",
                args.folder.display()
            );
            return ExitCode::from(2);
        }
        file
    } else {
        args.folder.clone()
    };
    let full = match read_schedule(&file) {
        Ok(schedule) => schedule,
        Err(message) => {
            eprintln!("interleave: {message}");
            return ExitCode::from(2);
        }
    };
    let spec = match spec_of(&full) {
        Ok(found) => found,
        Err(message) => {
            eprintln!("interleave: {}: {message}", file.display());
            return ExitCode::from(2);
        }
    };
    if !spec.scheduler.deterministic() {
        eprintln!("interleave: a schedule recorded on OS threads cannot be shrunk: its runs do not repeat");
        return ExitCode::from(2);
    }
    let first = crate::engines::run_seed_following(&spec, Watchdog::default(), Some(&full));
    let Some(failure) = first.failure else {
        println!(
            "{}: the schedule does not fail: nothing to shrink",
            file.display()
        );
        return ExitCode::from(1);
    };
    crate::interrupt::stop_on_ctrl_c();
    println!(
        "shrinking seed {}'s failure ({}) for at most {} s (Ctrl-C stops it and keeps the smallest so far) ...",
        spec.seed,
        sim::shrink::violation_kind(&failure),
        args.shrink_time
    );
    let report = shrink_failure(
        &spec,
        Watchdog::default(),
        &full,
        &failure,
        Duration::from_secs(args.shrink_time),
    );
    print!("{}", report.describe());
    let out = file.with_file_name("schedule.shrunk.txt");
    if let Err(error) = userfiles::write_whole(&out, report.shrunk.schedule.to_string()) {
        eprintln!("interleave: {error}");
        return ExitCode::from(2);
    }
    println!("replay: {}", replay_schedule_line(&out, &spec));
    if crate::interrupt::interrupted() {
        ExitCode::from(crate::interrupt::interrupted_exit())
    } else if report.verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
