//! [`DeployRefused`]: why a `deploy` run cannot be made as asked on this machine: a network,
//! a fault or a system it cannot have, with what it would take.

use lab::{Network, Unavailable};

/// Why a `deploy` run cannot be made as asked (see the module's documentation). `names` are
/// fault kinds' names, joined with "and".
#[derive(Debug, thiserror::Error)]
pub enum DeployRefused {
    /// Proxies asked for a system whose members share one list of addresses.
    #[error(
        "--network proxies: {system} gives every member one address for all its peers, so it \
         cannot be given a proxy per link"
    )]
    NoProxyPerLink {
        /// The system.
        system: String,
    },
    /// The same, with no namespaces here either.
    #[error(
        "{system} gives every member one address for all its peers, so it cannot be given a proxy \
         per link, and network namespaces cannot be made here: {why}"
    )]
    NeitherNetwork {
        /// The system.
        system: String,
        /// What namespaces lack.
        why: Unavailable,
    },
    /// Namespaces asked for, and they cannot be made here.
    #[error("--network namespaces cannot be made here: {0}")]
    NoNamespaces(Unavailable),
    /// Faults the system does not make itself or take through the administrator's requests.
    #[error("{names} cannot be made: {why}")]
    NotCooperating {
        /// The kinds.
        names: String,
        /// What the system does not do.
        why: String,
    },
    /// Faults made only through the other network.
    #[error("{names} cannot be made through {network} (it takes {other})")]
    OtherNetwork {
        /// The kinds.
        names: String,
        /// The network asked for.
        network: Network,
        /// The flag that gives the one they take.
        other: &'static str,
    },
    /// Faults that hold packets, which this machine cannot.
    #[error("{names} cannot be made: {why}")]
    CannotHoldPackets {
        /// The kinds.
        names: String,
        /// What is missing.
        why: Unavailable,
    },
    /// Faults of lossy disks, which this machine or system cannot have.
    #[error("{names} needs the lossy file system, and {why}")]
    NoLossyDisks {
        /// The kinds.
        names: String,
        /// Why not.
        why: String,
    },
    /// An option of this project's server given to etcd.
    #[error(
        "{0} is an option of this project's server, not of etcd (whose reads are chosen by \
         --system etcd or etcd-serializable)"
    )]
    NotAnEtcdOption(&'static str),
    /// etcd cannot run.
    #[error(transparent)]
    NoEtcd(Unavailable),
    /// This program cannot find itself to run as the servers.
    #[error("cannot find this program to run its servers: {0}")]
    NoProgram(std::io::Error),
    /// The administrators' key cannot be made.
    #[error("the administrators' key: {0}")]
    AdminKey(server::tcp::auth::KeyError),
}
