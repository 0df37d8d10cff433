//! [`Unavailable`]: what this machine lacks for a part of the lab (root, a program, a device),
//! and how to get it.

use std::path::PathBuf;

/// What the machine lacks for one part of the lab.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    /// The process is not root.
    #[error("{what} need root")]
    NotRoot {
        /// What needs it, in the plural.
        what: &'static str,
    },
    /// A program is not installed.
    #[error("`{program}` is not installed{hint}")]
    NotInstalled {
        /// Its name.
        program: &'static str,
        /// How to install it (empty, or starting with a space).
        hint: &'static str,
    },
    /// A program cannot be run.
    #[error("cannot run {}: {source} (Debian: apt-get install {package})", .program.display())]
    CannotRun {
        /// The program.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
        /// The Debian package that has it.
        package: &'static str,
    },
    /// A program runs and says it does not work.
    #[error("{} --version failed ({status})", .program.display())]
    VersionFailed {
        /// The program.
        program: PathBuf,
        /// How it exited.
        status: std::process::ExitStatus,
    },
    /// A device cannot be opened.
    #[error("cannot open {device}: {source}")]
    NoDevice {
        /// The device.
        device: &'static str,
        /// Why.
        source: std::io::Error,
    },
}
