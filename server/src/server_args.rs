//! The server's command line: which node it is, where every member is, where it keeps its
//! state and how it reads.

use crate::server::ServerConfig;
use clap::Parser;
use node::kv::ReadMode;
use node::NodeId;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

/// One node of Interleave's replicated key-value store, on real disks and TCP.
#[derive(Debug, Parser)]
#[command(
    name = "interleave-server",
    after_help = "Example (three nodes on one machine; run each with its own --id, data directory and client address):\n  interleave-server --id 0 --members 0=127.0.0.1:7000,1=127.0.0.1:7001,2=127.0.0.1:7002 \\\n    --client-address 127.0.0.1:7100 --data-dir /var/lib/interleave/0\n\nOff this machine, every member needs the cluster's key (--cluster-key FILE); `interleave-server --new-cluster-key FILE` writes one.\n\nSIGTERM or Ctrl-C stops it cleanly; its state survives kill -9."
)]
pub struct ServerArgs {
    /// This node's id, one of the ids in --members.
    #[arg(long)]
    pub id: u32,
    /// Every member of the cluster, this node included, as ID=HOST:PORT separated by commas:
    /// where the nodes reach each other.
    #[arg(long, required = true, value_delimiter = ',', value_parser = parse_member)]
    pub members: Vec<(NodeId, SocketAddr)>,
    /// The members that vote when the cluster starts, as ids separated by commas (default:
    /// every member). The others start outside the configuration, and an administrator adds
    /// them (`interleave admin`). Give every server the same list.
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub voters: Option<Vec<u32>>,
    /// Where this node listens for clients (HOST:PORT).
    #[arg(long, value_parser = parse_address)]
    pub client_address: SocketAddr,
    /// The directory of this node's state (created if missing; one server at a time).
    #[arg(long)]
    pub data_dir: PathBuf,
    /// How gets are served: log, read-index, lease, or unsafe-local (deliberately broken).
    #[arg(long, default_value = "log", value_name = "MODE", value_parser = node::kv::parse_read_mode)]
    pub read_mode: ReadMode,
    /// Compact the log into a snapshot of the key-value state once it takes more than this many
    /// bytes, or `off` (the log then grows with every write, and so does a restart).
    #[arg(long, value_name = "BYTES|off", default_value = "1048576", value_parser = parse_snapshot_threshold)]
    pub snapshot_threshold: SnapshotThreshold,
    /// How the state is stored: wal (an append-only log, fsyncs shared by concurrent writes) or
    /// file (the whole state rewritten into one file per save, as before the log).
    #[arg(long, value_name = "KIND", default_value = "wal", value_parser = storage::StorageKind::parse)]
    pub storage: storage::StorageKind,
    /// Check-quorum: a leader that has heard from no majority for this many milliseconds steps
    /// down (default: the longest election timeout, 600). At least 600 and at most 600000; a
    /// longer window rides out replies delayed longer, and holds the cluster longer behind a
    /// leader that cannot hear.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(600..=600_000))]
    pub check_quorum_ms: Option<u64>,
    /// The cluster's key file: only a process holding the same key may speak on the node port,
    /// and this node proves it holds it to its peers. Required when a member's address is not a
    /// loopback address. `interleave-server --new-cluster-key FILE` writes a new one (readable
    /// by its owner only); give every member a copy.
    #[arg(long, value_name = "FILE")]
    pub cluster_key: Option<PathBuf>,
    /// The administrators' key file: only a client connection that proves it holds this key
    /// may send the administrator's requests (`interleave admin`) or, with --allow-faults, a
    /// nemesis's faults. Without it no one may. Written like a cluster key
    /// (`interleave-server --new-cluster-key FILE`), and a different one.
    #[arg(long, value_name = "FILE")]
    pub admin_key: Option<PathBuf>,
    /// Lets an administrator inject faults: change this node's clock rate, make it jump forward, make
    /// its disk fail every write (a nemesis's faults, for a test cluster only).
    #[arg(long)]
    pub allow_faults: bool,
    /// A deliberately broken way of writing the state file: in-place, ack-before-write,
    /// ignore-failures or no-dir-sync (implies --storage file; a build with the `mutations` feature only, for
    /// the tests that must catch it).
    #[cfg(feature = "mutations")]
    #[arg(long, hide = true, value_parser = parse_broken_write)]
    pub broken_write: Option<storage::BrokenWrite>,
    /// A deliberately broken behaviour of the node, by name (`skip-fsync`, ...); may be given
    /// more than once (a build with the `mutations` feature only, for the tests that must
    /// catch it).
    #[cfg(feature = "mutations")]
    #[arg(long = "mutation", hide = true, value_name = "NAME")]
    pub mutations: Vec<node::Mutation>,
}

/// `--snapshot-threshold`: a number of bytes, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotThreshold(pub Option<u64>);

/// What is wrong with one argument's value.
#[derive(Debug, thiserror::Error)]
pub enum BadValue {
    /// `--snapshot-threshold` neither a number nor `off`.
    #[error("{0:?} is neither a number of bytes nor off")]
    NotBytesNorOff(String),
    /// `--snapshot-threshold` outside its bounds.
    #[error("{bytes} is outside {}..={} bytes", .bounds.start(), .bounds.end())]
    OutOfBounds {
        /// The number given.
        bytes: u64,
        /// The bounds.
        bounds: std::ops::RangeInclusive<u64>,
    },
    /// A broken write this build does not know.
    #[error(
        "{0:?}: known broken writes are in-place, ack-before-write, ignore-failures, no-dir-sync"
    )]
    UnknownBrokenWrite(String),
    /// Not `HOST:PORT`.
    #[error("{text:?} is not HOST:PORT ({source})")]
    NotHostPort {
        /// The text.
        text: String,
        /// Why it does not resolve.
        source: std::io::Error,
    },
    /// A name that resolves to nothing.
    #[error("{0:?} resolves to no address")]
    NoAddress(String),
    /// Not `ID=HOST:PORT`.
    #[error("{0:?} is not ID=HOST:PORT")]
    NotMember(String),
    /// Not a node's id.
    #[error("{text:?} is not a node id ({source})")]
    NotNodeId {
        /// The text.
        text: String,
        /// Why.
        source: std::num::ParseIntError,
    },
}

/// What is wrong with the arguments together.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    /// A member given twice.
    #[error("--members names {0} twice")]
    MemberTwice(NodeId),
    /// One address for two members.
    #[error("--members gives {0} to two nodes")]
    AddressTwice(SocketAddr),
    /// This node's id is not a member's.
    #[error("--id {0} is not one of the ids in --members")]
    NotAMember(u32),
    /// A voter that is not a member.
    #[error("--voters names {0}, which is not in --members")]
    VoterNotAMember(NodeId),
    /// No voter at all.
    #[error("--voters names no node")]
    NoVoters,
    /// The client address is a member's.
    #[error("--client-address {0} is also a member's address")]
    ClientAddressTaken(SocketAddr),
    /// A key file that cannot be read.
    #[error("{flag}: {source}")]
    Key {
        /// The flag that named it.
        flag: &'static str,
        /// Why.
        source: crate::tcp::auth::KeyError,
    },
}

fn parse_snapshot_threshold(text: &str) -> Result<SnapshotThreshold, BadValue> {
    if text == "off" {
        return Ok(SnapshotThreshold(None));
    }
    let bytes: u64 = text
        .parse()
        .map_err(|_| BadValue::NotBytesNorOff(text.to_string()))?;
    let bounds = runspec::bounds::SNAPSHOT_THRESHOLD;
    if !bounds.contains(&bytes) {
        return Err(BadValue::OutOfBounds { bytes, bounds });
    }
    Ok(SnapshotThreshold(Some(bytes)))
}

#[cfg(feature = "mutations")]
fn parse_broken_write(text: &str) -> Result<storage::BrokenWrite, BadValue> {
    match text {
        "in-place" => Ok(storage::BrokenWrite::InPlace),
        "ack-before-write" => Ok(storage::BrokenWrite::AckBeforeWrite),
        "ignore-failures" => Ok(storage::BrokenWrite::IgnoreFailures),
        "no-dir-sync" => Ok(storage::BrokenWrite::NoDirSync),
        _ => Err(BadValue::UnknownBrokenWrite(text.to_string())),
    }
}

impl ServerArgs {
    /// The server's configuration, or what is wrong with the arguments.
    pub fn config(&self) -> Result<ServerConfig, ArgsError> {
        let mut members = BTreeMap::new();
        for &(id, address) in &self.members {
            if members.insert(id, address).is_some() {
                return Err(ArgsError::MemberTwice(id));
            }
        }
        let mut addresses: Vec<SocketAddr> = members.values().copied().collect();
        addresses.sort();
        if let Some(pair) = addresses.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(ArgsError::AddressTwice(pair[0]));
        }
        let id = NodeId(self.id);
        if !members.contains_key(&id) {
            return Err(ArgsError::NotAMember(self.id));
        }
        let voters = match &self.voters {
            None => None,
            Some(ids) => {
                let voters: BTreeSet<NodeId> = ids.iter().copied().map(NodeId).collect();
                if let Some(stray) = voters.iter().find(|id| !members.contains_key(id)) {
                    return Err(ArgsError::VoterNotAMember(*stray));
                }
                if voters.is_empty() {
                    return Err(ArgsError::NoVoters);
                }
                Some(voters)
            }
        };
        if addresses.contains(&self.client_address) {
            return Err(ArgsError::ClientAddressTaken(self.client_address));
        }
        Ok(ServerConfig {
            id,
            members,
            client_address: self.client_address,
            voters,
            data_dir: self.data_dir.clone(),
            cluster_key: read_key("--cluster-key", self.cluster_key.as_deref())?,
            admin_key: read_key("--admin-key", self.admin_key.as_deref())?,
            read_mode: self.read_mode,
            allow_faults: self.allow_faults,
            check_quorum_after: self.check_quorum_ms.map(std::time::Duration::from_millis),
            snapshot_threshold: self.snapshot_threshold.0.map(|bytes| bytes as usize),
            storage: self.storage,
            #[cfg(feature = "mutations")]
            broken_write: self.broken_write,
            #[cfg(feature = "mutations")]
            mutations: self.mutations.iter().copied().collect(),
        })
    }
}

/// The key in the file `flag` names, if it names one.
fn read_key(
    flag: &'static str,
    path: Option<&std::path::Path>,
) -> Result<Option<crate::tcp::ClusterKey>, ArgsError> {
    path.map(crate::tcp::ClusterKey::read)
        .transpose()
        .map_err(|source| ArgsError::Key { flag, source })
}

/// `HOST:PORT`, the host a name or an address.
pub fn parse_address(text: &str) -> Result<SocketAddr, BadValue> {
    text.to_socket_addrs()
        .map_err(|source| BadValue::NotHostPort {
            text: text.to_string(),
            source,
        })?
        .next()
        .ok_or_else(|| BadValue::NoAddress(text.to_string()))
}

/// `ID=HOST:PORT`.
fn parse_member(text: &str) -> Result<(NodeId, SocketAddr), BadValue> {
    let (id, address) = text
        .split_once('=')
        .ok_or_else(|| BadValue::NotMember(text.to_string()))?;
    let id = id
        .trim()
        .parse::<u32>()
        .map_err(|source| BadValue::NotNodeId {
            text: id.to_string(),
            source,
        })?;
    Ok((NodeId(id), parse_address(address.trim())?))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<ServerConfig, String> {
        let args =
            ServerArgs::try_parse_from(line.split_whitespace()).map_err(|e| e.to_string())?;
        args.config().map_err(|e| e.to_string())
    }

    const MEMBERS: &str = "--members 0=127.0.0.1:7000,1=127.0.0.1:7001,2=localhost:7002";

    #[test]
    fn a_whole_command_line_gives_its_configuration() {
        let config = parse(&format!(
            "s --id 1 {MEMBERS} --client-address 127.0.0.1:7101 --data-dir /d --read-mode lease"
        ))
        .unwrap();
        assert_eq!(config.id, NodeId(1));
        assert_eq!(config.members.len(), 3);
        assert_eq!(config.members[&NodeId(2)].port(), 7002);
        assert_eq!(config.read_mode, ReadMode::Lease);
        assert_eq!(config.voters, None, "every member votes");
        let some = parse(&format!(
            "s --id 2 {MEMBERS} --client-address 127.0.0.1:7101 --data-dir /d --voters 0,1"
        ))
        .unwrap();
        assert_eq!(some.voters, Some(BTreeSet::from([NodeId(0), NodeId(1)])));
    }

    #[test]
    fn each_mistake_is_named() {
        let cases = [
            (
                "--id 5 --client-address 127.0.0.1:7100",
                "--id 5 is not one of the ids",
            ),
            (
                "--id 0 --client-address 127.0.0.1:7100 --read-mode fast",
                "unknown read mode",
            ),
            (
                "--id 0 --client-address 127.0.0.1:7001",
                "also a member's address",
            ),
            ("--id 0 --client-address nowhere", "is not HOST:PORT"),
            (
                "--id 0 --client-address 127.0.0.1:7100 --voters 0,7",
                "--voters names n7, which is not in --members",
            ),
            (
                "--id 0 --client-address 127.0.0.1:7100 --voters 0,x",
                "invalid value 'x'",
            ),
        ];
        for (args, expected) in cases {
            let line = format!("s {MEMBERS} --data-dir /d {args}");
            let error = parse(&line).expect_err(args);
            assert!(error.contains(expected), "{args}: {error}");
        }
        let twice = "s --id 0 --members 0=127.0.0.1:1,0=127.0.0.1:2 --client-address 127.0.0.1:3 --data-dir /d";
        assert!(parse(twice).unwrap_err().contains("names n0 twice"));
        let shared = "s --id 0 --members 0=127.0.0.1:1,1=127.0.0.1:1 --client-address 127.0.0.1:3 --data-dir /d";
        assert!(parse(shared).unwrap_err().contains("to two nodes"));
        let bad = "s --id 0 --members 0:127.0.0.1:1 --client-address 127.0.0.1:3 --data-dir /d";
        assert!(parse(bad).unwrap_err().contains("is not ID=HOST:PORT"));
    }
}
