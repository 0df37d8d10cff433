//! [`local_configs`]: the configurations of a cluster of servers run in one process on this
//! machine (the benchmark examples), each with its own ports and data directory.

use crate::{free_addresses, ServerConfig};
use node::kv::ReadMode;
use node::NodeId;
use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::path::Path;

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
            storage: crate::StorageKind::default(),
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
