//! [`LocalCluster`]: a cluster of real server processes on this machine, each with its own
//! ports, data directory and log file, and links that can be cut or slowed one direction at a
//! time: a [`LinkProxy`] on every directed link, or each server a host in a network namespace
//! of its own behind a packet filter ([`Network`]). What a nemesis and the process tests do to
//! a cluster goes through here: start, `kill -9`, SIGSTOP and SIGCONT, SIGTERM, cut, delay,
//! drop or duplicate packets, heal, and (with lossy disks) a power cut.

use crate::link_fault::LinkFault;
use crate::links::{Links, Network};
use crate::lossy_fs::{Corruption, LossMode, LossReport, LossyMount};
use crate::netns::Hosts;
use crate::proxy::LinkProxy;
use crate::system::{NodeStart, System};
use node::NodeId;
use server::real_time::{now, sleep_until};
use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use threadsim::DetRng;

/// The most nodes a local cluster runs (each takes two ports and, with proxies, a proxy per
/// directed link).
pub const MAX_LOCAL_NODES: u32 = 9;

/// The port every host listens for the other nodes on, with [`Network::Namespaces`].
pub const HOST_RPC_PORT: u16 = 7000;

/// The port every host listens for clients on, with [`Network::Namespaces`].
pub const HOST_CLIENT_PORT: u16 = 7100;

/// How long a sync takes on a lossy disk: about a datacenter SSD's `fsync`, so that a power cut
/// can come while one is under way.
pub const LOSSY_SYNC_LATENCY: Duration = Duration::from_millis(1);

/// What [`LocalCluster::start`] starts.
#[derive(Clone, Debug)]
pub struct LocalClusterSpec {
    /// How many nodes (1 to [`MAX_LOCAL_NODES`]).
    pub nodes: u32,
    /// The system to run: this project's server ([`crate::system::InterleaveServer`]), etcd,
    /// ...
    pub system: Arc<dyn System>,
    /// Where the data directories (`n0`, `n1`, ...) and logs (`n0.log`, ...) go; created if
    /// missing.
    pub root: PathBuf,
    /// How the nodes reach each other.
    pub network: Network,
    /// Whether each node's data directory is a [`LossyMount`] of its own, so that a power cut
    /// can take what a node wrote and did not sync ([`LocalCluster::power_loss`]).
    pub lossy_disks: bool,
    /// The seed of the links' own draws (how long each held packet waits).
    pub seed: u64,
}

/// A running cluster (see the module's documentation). Dropping it kills every server with
/// SIGKILL; [`LocalCluster::stop_all`] stops them cleanly first.
pub struct LocalCluster {
    spec: LocalClusterSpec,
    /// For each node: its own address, and where it reaches each other node.
    members: BTreeMap<NodeId, BTreeMap<NodeId, SocketAddr>>,
    clients: BTreeMap<NodeId, SocketAddr>,
    /// Where each node listens for the other nodes.
    rpc_addresses: BTreeMap<NodeId, SocketAddr>,
    /// What the links between nodes are made of.
    links: Links,
    children: BTreeMap<NodeId, Child>,
    /// With lossy disks: each node's data directory. Dropped after the servers are killed.
    disks: BTreeMap<NodeId, LossyMount>,
}

impl LocalCluster {
    /// Picks ports, starts the proxies and then every server.
    pub fn start(spec: LocalClusterSpec) -> io::Result<LocalCluster> {
        if !(1..=MAX_LOCAL_NODES).contains(&spec.nodes) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} nodes: a local cluster has 1 to {MAX_LOCAL_NODES}",
                    spec.nodes
                ),
            ));
        }
        std::fs::create_dir_all(&spec.root)?;
        let ids: Vec<NodeId> = (0..spec.nodes).map(NodeId).collect();
        let (links, rpc_addresses, clients) = make_links(&ids, spec.network, spec.seed)?;
        let members = ids
            .iter()
            .map(|&me| {
                let reached = ids
                    .iter()
                    .map(|&other| {
                        let address = match &links {
                            Links::Proxies(proxies) if other != me => {
                                proxies[&(me, other)].address()
                            }
                            _ => rpc_addresses[&other],
                        };
                        (other, address)
                    })
                    .collect();
                (me, reached)
            })
            .collect();
        let mut disks = BTreeMap::new();
        if spec.lossy_disks {
            for &id in &ids {
                let dir = spec.root.join(id.to_string());
                let disk = LossyMount::mount(&dir).map_err(io::Error::other)?;
                disk.set_sync_latency(LOSSY_SYNC_LATENCY);
                disks.insert(id, disk);
            }
        }
        let mut cluster = LocalCluster {
            spec,
            members,
            clients,
            rpc_addresses,
            links,
            children: BTreeMap::new(),
            disks,
        };
        for id in ids {
            cluster.start_node(id)?;
        }
        Ok(cluster)
    }

    /// The system its nodes run.
    pub fn system(&self) -> &Arc<dyn System> {
        &self.spec.system
    }

    /// Every node's id.
    pub fn ids(&self) -> Vec<NodeId> {
        self.clients.keys().copied().collect()
    }

    /// Where each node listens for clients.
    pub fn clients(&self) -> &BTreeMap<NodeId, SocketAddr> {
        &self.clients
    }

    /// `id`'s data directory.
    pub fn data_dir(&self, id: NodeId) -> PathBuf {
        self.spec.root.join(id.to_string())
    }

    /// `id`'s log file (every run of the node appends to it).
    pub fn log_path(&self, id: NodeId) -> PathBuf {
        self.spec.root.join(format!("{id}.log"))
    }

    /// What `id` has logged so far (empty if nothing).
    pub fn log(&self, id: NodeId) -> String {
        std::fs::read_to_string(self.log_path(id)).unwrap_or_default()
    }

    /// Starts `id`'s server (again), appending to its log. The server is a process group of its
    /// own, so a Ctrl-C at the terminal reaches only the program that runs the cluster, which
    /// then stops the servers in order; on Linux it is killed if that program dies.
    pub fn start_node(&mut self, id: NodeId) -> io::Result<()> {
        assert!(!self.children.contains_key(&id), "{id} is already running");
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.log_path(id))?;
        let data_dir = self.data_dir(id);
        let mut command = self.spec.system.command(&NodeStart {
            id,
            members: &self.members[&id],
            listen: self.rpc_addresses[&id],
            client: self.clients[&id],
            data_dir: &data_dir,
        });
        command
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .process_group(0);
        // A host's server runs in its namespace: the descriptor is open until the spawn below
        // has returned.
        let namespace = match &self.links {
            Links::Hosts(hosts) => Some(hosts.namespace_file(id)?),
            _ => None,
        };
        let namespace_fd = namespace.as_ref().map(AsRawFd::as_raw_fd);
        // SAFETY: between fork and exec the child only calls prctl and setns, which are
        // async-signal-safe.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if let Some(fd) = namespace_fd {
                    if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = command.spawn().map_err(|error| {
            io::Error::new(
                error.kind(),
                format!(
                    "cannot start {}: {error}",
                    command.get_program().to_string_lossy()
                ),
            )
        })?;
        self.children.insert(id, child);
        Ok(())
    }

    /// Where `id` listens for the other nodes (what a peer, or a stranger, connects to).
    pub fn rpc_address(&self, id: NodeId) -> SocketAddr {
        self.rpc_addresses[&id]
    }

    /// `id`'s process id, while it runs.
    pub fn pid(&self, id: NodeId) -> Option<u32> {
        self.children.get(&id).map(Child::id)
    }

    /// Whether `id`'s process has been started and not yet seen to exit.
    pub fn is_running(&self, id: NodeId) -> bool {
        self.children.contains_key(&id)
    }

    /// Kills `id` with SIGKILL (resuming it first would not matter: SIGKILL ends a stopped
    /// process too) and waits for it.
    pub fn kill_9(&mut self, id: NodeId) -> io::Result<ExitStatus> {
        let mut child = self
            .children
            .remove(&id)
            .ok_or_else(|| io::Error::other(format!("{id} is not running")))?;
        child.kill()?;
        child.wait()
    }

    /// Cuts the power of `nodes` at one instant: their disks stop (no sync under way
    /// finishes), they are killed with SIGKILL, and each disk loses what was written and not
    /// synced, as `mode` says. Fails if the cluster has no lossy disks.
    pub fn power_loss(
        &mut self,
        nodes: &[NodeId],
        mode: LossMode,
        rng: &mut DetRng,
    ) -> io::Result<Vec<LossReport>> {
        if let Some(id) = nodes.iter().find(|id| !self.disks.contains_key(id)) {
            return Err(io::Error::other(format!("{id} has no lossy disk")));
        }
        for id in nodes {
            self.disks[id].power_off();
        }
        for &id in nodes {
            if self.is_running(id) {
                self.kill_9(id)?;
            }
        }
        Ok(nodes
            .iter()
            .map(|id| self.disks[id].power_loss(mode, rng))
            .collect())
    }

    /// Damages one file of `id`'s lossy disk (see [`LossyMount::corrupt`]); `id` should be
    /// stopped. Fails if the cluster has no lossy disks.
    pub fn corrupt(
        &self,
        id: NodeId,
        rng: &mut DetRng,
        zero_sector: bool,
    ) -> io::Result<Option<Corruption>> {
        Ok(self.disk(id)?.corrupt(rng, zero_sector))
    }

    /// Undoes [`LocalCluster::corrupt`].
    pub fn repair(&self, id: NodeId, corruption: &Corruption) -> io::Result<()> {
        self.disk(id)?.repair(corruption);
        Ok(())
    }

    fn disk(&self, id: NodeId) -> io::Result<&LossyMount> {
        self.disks
            .get(&id)
            .ok_or_else(|| io::Error::other(format!("{id} has no lossy disk")))
    }

    /// Whether the nodes' data directories are lossy disks.
    pub fn has_lossy_disks(&self) -> bool {
        !self.disks.is_empty()
    }

    /// Makes `id`'s lossy disk fail every write with ENOSPC (`true`), or work again. Fails if
    /// the cluster has no lossy disks.
    pub fn set_disk_full(&self, id: NodeId, full: bool) -> io::Result<()> {
        self.disk(id)?.set_full(full);
        Ok(())
    }

    /// Sends `signal` to `id`'s process (SIGSTOP and SIGCONT pause and resume it).
    pub fn signal(&self, id: NodeId, signal: libc::c_int) -> io::Result<()> {
        let child = self
            .children
            .get(&id)
            .ok_or_else(|| io::Error::other(format!("{id} is not running")))?;
        let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
        // SAFETY: signals a child this cluster started and has not yet waited for, so the pid
        // is still its.
        if unsafe { libc::kill(pid, signal) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// `id`'s exit status if it has exited (it is then no longer running).
    pub fn exited(&mut self, id: NodeId) -> io::Result<Option<ExitStatus>> {
        let Some(child) = self.children.get_mut(&id) else {
            return Ok(None);
        };
        let status = child.try_wait()?;
        if status.is_some() {
            self.children.remove(&id);
        }
        Ok(status)
    }

    /// Waits up to `limit` for `id` to exit; `None` if it is still running then.
    pub fn wait_for_exit(&mut self, id: NodeId, limit: Duration) -> io::Result<Option<ExitStatus>> {
        let deadline = now() + limit;
        loop {
            if let Some(status) = self.exited(id)? {
                return Ok(Some(status));
            }
            if now() >= deadline || !self.is_running(id) {
                return Ok(None);
            }
            sleep_until(now() + Duration::from_millis(10));
        }
    }

    /// How the nodes reach each other.
    pub fn network(&self) -> Network {
        self.links.network()
    }

    /// With [`Network::Namespaces`]: the hosts the nodes run on.
    pub fn hosts(&self) -> Option<&Hosts> {
        match &self.links {
            Links::Hosts(hosts) => Some(hosts),
            _ => None,
        }
    }

    /// Makes the link from `from` to `to` do `fault`; fails if this network cannot.
    pub fn set_link(&mut self, from: NodeId, to: NodeId, fault: LinkFault) -> io::Result<()> {
        self.links.set(&[(from, to, fault)])
    }

    /// Makes each listed link (from, to) do its fault, at once; fails, changing nothing, if this
    /// network cannot make one of them.
    pub fn set_links(&mut self, changes: &[(NodeId, NodeId, LinkFault)]) -> io::Result<()> {
        self.links.set(changes)
    }

    /// Makes every link into and out of `node` do `fault`.
    pub fn isolate(&mut self, node: NodeId, fault: LinkFault) -> io::Result<()> {
        let changes: Vec<(NodeId, NodeId, LinkFault)> = self
            .ids()
            .into_iter()
            .filter(|&other| other != node)
            .flat_map(|other| [(node, other, fault), (other, node, fault)])
            .collect();
        self.links.set(&changes)
    }

    /// Makes every link healthy.
    pub fn heal_links(&mut self) -> io::Result<()> {
        self.links.heal()
    }

    /// Every link that is not healthy, with what it does.
    pub fn faulty_links(&self) -> Vec<((NodeId, NodeId), LinkFault)> {
        self.links.faulty()
    }

    /// Stops every running server: SIGCONT (a paused one must be able to stop) and SIGTERM,
    /// then SIGKILL for any still running after `limit`. Returns each one's exit status, and
    /// `None` for one that had to be killed.
    pub fn stop_all(&mut self, limit: Duration) -> BTreeMap<NodeId, Option<ExitStatus>> {
        for id in self.children.keys().copied().collect::<Vec<_>>() {
            let _ = self.signal(id, libc::SIGCONT);
            let _ = self.signal(id, libc::SIGTERM);
        }
        let deadline = now() + limit;
        let mut statuses = BTreeMap::new();
        for id in self.children.keys().copied().collect::<Vec<_>>() {
            let left = deadline.saturating_duration_since(now());
            let status = self.wait_for_exit(id, left).ok().flatten();
            if status.is_none() {
                let _ = self.kill_9(id);
            }
            statuses.insert(id, status);
        }
        statuses
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        for child in self.children.values_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
        // The servers are gone: what their lossy disks held stays behind to be looked at.
        for (id, disk) in std::mem::take(&mut self.disks) {
            if let Err(error) = disk.unmount_keeping_files() {
                tracing::warn!("cannot keep {id}'s files after the run: {error}");
            }
        }
    }
}

/// The links of `ids` over `network`, with where each node listens for the other nodes and
/// for clients.
#[allow(clippy::type_complexity)]
fn make_links(
    ids: &[NodeId],
    network: Network,
    seed: u64,
) -> io::Result<(
    Links,
    BTreeMap<NodeId, SocketAddr>,
    BTreeMap<NodeId, SocketAddr>,
)> {
    if network == Network::Namespaces {
        let hosts = Hosts::create(ids.len() as u32, seed)?;
        let at = |port| {
            ids.iter()
                .map(|&id| (id, SocketAddr::from((hosts.address(id), port))))
                .collect()
        };
        let (rpc, clients) = (at(HOST_RPC_PORT), at(HOST_CLIENT_PORT));
        return Ok((Links::Hosts(hosts), rpc, clients));
    }
    let addresses = server::free_addresses(2 * ids.len())?;
    let rpc: BTreeMap<NodeId, SocketAddr> = ids
        .iter()
        .map(|&id| (id, addresses[id.0 as usize]))
        .collect();
    let clients = ids
        .iter()
        .map(|&id| (id, addresses[ids.len() + id.0 as usize]))
        .collect();
    let links = match network {
        Network::Proxies => {
            let mut proxies = BTreeMap::new();
            for &from in ids {
                for &to in ids.iter().filter(|&&to| to != from) {
                    proxies.insert((from, to), LinkProxy::start(rpc[&to])?);
                }
            }
            Links::Proxies(proxies)
        }
        _ => Links::Direct,
    };
    Ok((links, rpc, clients))
}
