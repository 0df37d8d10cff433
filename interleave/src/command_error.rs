//! [`CommandError`]: what stops a command before it runs (arguments that cannot run together,
//! a folder or report it cannot write, a schedule it cannot read) or while it runs (a thread it
//! cannot start). Each comes from the typed error of the part that found it; the command prints
//! it as `interleave: <error>` and exits with status 2.

use crate::junit::ReportError;
use crate::out_dir::OutDirError;
use crate::run_spec::RunRefused;
use crate::seeds::SeedsError;
use crate::shrink::ScheduleFileError;

/// What stops a command (see the module's documentation).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The seeds asked for.
    #[error(transparent)]
    Seeds(#[from] SeedsError),
    /// The run asked for.
    #[error(transparent)]
    Refused(#[from] RunRefused),
    /// A report's path.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// The output folder.
    #[error(transparent)]
    OutDir(#[from] OutDirError),
    /// A schedule file.
    #[error(transparent)]
    Schedule(#[from] ScheduleFileError),
    /// A file the command reads.
    #[error(transparent)]
    Read(#[from] userfiles::ReadError),
    /// A file the command writes.
    #[error(transparent)]
    Write(#[from] userfiles::WriteError),
    /// A schedule file named on the command line.
    #[error("{}: {source}", .path.display())]
    InScheduleFile {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        source: ScheduleFileError,
    },
    /// A seed other than the one a schedule file was recorded with.
    #[error("{} was recorded with seed {seed}: drop --seed or give that one", .path.display())]
    OtherSeed {
        /// The file.
        path: std::path::PathBuf,
        /// Its seed.
        seed: u64,
    },
    /// `mutants` in a build without broken variants.
    #[error(
        "mutants runs the broken variants; {}",
        crate::run_spec::WITHOUT_BROKEN_VARIANTS
    )]
    MutantsNeedBrokenVariants,
    /// A plan with nothing in it.
    #[error("nothing to run: {0}")]
    NothingToRun(&'static str),
    /// A folder cannot be moved into place.
    #[error("cannot move {} to {}: {source}", .from.display(), .to.display())]
    Move {
        /// Where it is.
        from: std::path::PathBuf,
        /// Where it goes.
        to: std::path::PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// Writing what the command made.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A thread the command needs cannot start.
    #[error("cannot start {what}: {source}")]
    Thread {
        /// Which thread.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
}
