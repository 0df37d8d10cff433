//! [`local_configs`]: the configurations of a cluster of servers run in one process on this
//! machine (the benchmark examples), each with its own ports and data directory.

use crate::server::ServerConfig;
use node::kv::ReadMode;
use node::NodeId;
use std::collections::BTreeMap;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::atomic::{AtomicU16, Ordering};

/// `nodes` servers on localhost: two ports each (node-to-node and clients, free a moment ago),
/// a data directory each under `root` (`root/0`, `root/1`, ...), gets served in `read_mode`,
/// snapshots once the log passes `snapshot_threshold` bytes (if any), no faults allowed; one
/// cluster key, and one administrators' key.
pub fn local_configs(
    nodes: u32,
    root: &Path,
    read_mode: ReadMode,
    snapshot_threshold: Option<usize>,
) -> io::Result<Vec<ServerConfig>> {
    let addresses = free_addresses(2 * nodes as usize)?;
    let members: BTreeMap<NodeId, SocketAddr> = (0..nodes)
        .map(|i| (NodeId(i), addresses[i as usize]))
        .collect();
    // One cluster, one key: the members authenticate each other as a deployment's do.
    let cluster_key = crate::tcp::ClusterKey::generate().map_err(io::Error::other)?;
    let admin_key = crate::tcp::ClusterKey::generate().map_err(io::Error::other)?;
    Ok((0..nodes)
        .map(|i| ServerConfig {
            id: NodeId(i),
            members: members.clone(),
            client_address: addresses[(nodes + i) as usize],
            voters: None,
            data_dir: root.join(i.to_string()),
            cluster_key: Some(cluster_key.clone()),
            admin_key: Some(admin_key.clone()),
            read_mode,
            allow_faults: false,
            check_quorum_after: None,
            snapshot_threshold,
            storage: storage::StorageKind::default(),
            #[cfg(feature = "mutations")]
            broken_write: None,
            #[cfg(feature = "mutations")]
            mutations: node::MutationSet::default(),
        })
        .collect())
}

/// Where each server of `configs` listens for clients.
pub fn client_addresses(configs: &[ServerConfig]) -> BTreeMap<NodeId, SocketAddr> {
    configs
        .iter()
        .map(|config| (config.id, config.client_address))
        .collect()
}

/// `count` addresses on localhost that were free a moment ago, below the range the system
/// draws outgoing connections' ports from (20000-31999): a port of that range, free when
/// checked, can be taken by any connection before the server binds it.
pub fn free_addresses(count: usize) -> io::Result<Vec<SocketAddr>> {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    // Each process starts at its own place in the range.
    let base = (std::process::id() % 600) as u16 * 20;
    let mut addresses = Vec::new();
    for _ in 0..12_000 {
        if addresses.len() == count {
            break;
        }
        let port = 20_000 + (base + NEXT.fetch_add(1, Ordering::SeqCst) % 12_000) % 12_000;
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", port)) {
            addresses.push(listener.local_addr()?);
        }
    }
    if addresses.len() < count {
        return Err(io::Error::new(
            io::ErrorKind::AddrNotAvailable,
            format!("fewer than {count} free ports in 20000-31999"),
        ));
    }
    Ok(addresses)
}
