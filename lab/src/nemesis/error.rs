//! What can go wrong for the nemesis itself, apart from what the servers do wrong: a fault that
//! could not be made or undone ([`NemesisError`]), and what healing a fault found
//! ([`Finding`]).

use std::fmt;

/// Why the nemesis could not make or undo a fault: its own means failed, or the cluster was not
/// in a state the fault can be made in. A fault not injected is recorded as such and the run
/// goes on.
#[derive(Debug, thiserror::Error)]
pub enum NemesisError {
    /// A link, signal, process, file or thread of this machine failed.
    #[error("{doing}: {source}")]
    Io {
        /// What the nemesis was doing ("kill -9 n1").
        doing: String,
        /// The operating system's answer.
        #[source]
        source: std::io::Error,
    },
    /// A server refused, or did not answer, a request the nemesis sent it.
    #[error("{doing}: {why}")]
    Server {
        /// What the nemesis asked ("the clock of n2").
        doing: String,
        /// The server's answer, or why there was none.
        why: String,
    },
    /// The system under test does not make this fault itself.
    #[error("the system does not make clock or disk faults, or change its membership, itself")]
    NotCooperating,
    /// The cluster is not in a state this fault can be made in now.
    #[error("{0}")]
    NotNow(String),
}

impl NemesisError {
    /// An operating-system error while `doing` something.
    pub fn io(doing: impl Into<String>) -> impl FnOnce(std::io::Error) -> NemesisError {
        let doing = doing.into();
        move |source| NemesisError::Io { doing, source }
    }

    /// A server's refusal (or silence) when asked `doing`.
    pub fn server<E: fmt::Display>(doing: impl Into<String>) -> impl FnOnce(E) -> NemesisError {
        let doing = doing.into();
        move |why| NemesisError::Server {
            doing,
            why: why.to_string(),
        }
    }
}

/// Why a nemesis run could not be made at all (what the servers did wrong during a run is its
/// findings, not this).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The servers, their network or their disks could not be started.
    #[error("cannot start the cluster: {0}")]
    Cluster(#[source] std::io::Error),
    /// No server said it led within the bound after they started.
    #[error(
        "no leader within {bound:?} of starting the servers{exited} (their logs are in {logs})"
    )]
    NoLeader {
        /// How long the servers had.
        bound: std::time::Duration,
        /// The servers that exited meanwhile, and how, as a parenthesis (empty if none).
        exited: String,
        /// Where the servers' logs are.
        logs: std::path::PathBuf,
    },
    /// The clients' threads or connections could not be started.
    #[error("cannot start the clients: {0}")]
    Clients(#[source] std::io::Error),
}

/// What healing a fault found wrong: the servers' behaviour (a node that went on after its disk
/// failed, forged messages taken), or a fault the nemesis could not undo. Each is a finding of
/// the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding(pub String);

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<NemesisError> for Finding {
    fn from(error: NemesisError) -> Finding {
        Finding(error.to_string())
    }
}
