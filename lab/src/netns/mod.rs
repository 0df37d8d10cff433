//! Hosts as network namespaces: each server of a [`crate::LocalCluster`] in a network namespace
//! of its own, with its own address on a bridge, so that a test cluster looks like machines on
//! a network and faults come from outside the servers, as packet filters (nftables) in each
//! host: a cut link drops its packets silently (connections hang, half open, until a timeout),
//! a lossy link drops a share of them, a duplicating link sends a share twice; a link that
//! holds packets (delayed, with jitter, reordered) queues them to a `delayer.rs` thread of the
//! nemesis, which lets each go when due. The clients and the nemesis stay in the root namespace
//! and reach every host through the bridge.
//!
//! A run's names and addresses are its slot's (`slot.rs`): `ilv<slot>n<node>` for namespaces,
//! `ilv<slot>br` for the bridge, `10.213.<slot>.0/24` for addresses. Dropping [`Hosts`] removes
//! all of them, and the rules with the namespaces; what a killed run left is removed by the next
//! run ([`remove_leftovers`]).
//!
//! Needs root, `ip` (iproute2) and `nft` (nftables); [`available`] says which is missing. Links
//! that hold packets also need `iptables-restore` and the kernel's nfnetlink_queue
//! ([`can_hold_packets`]).

mod command;
mod delayer;
mod filter;
mod nfqueue;
mod reach;
mod slot;
#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;

use crate::link_fault::LinkFault;
use crate::unavailable::Unavailable;
use command::{exists, run, run_in};
use delayer::Delayer;
use node::NodeId;
use slot::Slot;
use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use threadsim::DetRng;

/// Whether hosts can be made here: `Err` says what is missing.
pub fn available() -> Result<(), Unavailable> {
    // SAFETY: a plain call without arguments.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Unavailable::NotRoot {
            what: "network namespaces and packet filters",
        });
    }
    if !exists("ip", "-V") {
        return Err(Unavailable::NotInstalled {
            program: "ip",
            hint: " (Debian: apt-get install iproute2)",
        });
    }
    if !exists("nft", "--version") {
        return Err(Unavailable::NotInstalled {
            program: "nft",
            hint: " (Debian: apt-get install nftables)",
        });
    }
    Ok(())
}

/// Whether links here can hold packets (delays, jitter, reordering): `Err` says what is
/// missing. The kernel's queue itself is found out when a delayer first binds to it.
pub fn can_hold_packets() -> Result<(), Unavailable> {
    available()?;
    if !exists("iptables-restore", "--version") {
        return Err(Unavailable::NotInstalled {
            program: "iptables-restore",
            hint: " (Debian: apt-get install iptables)",
        });
    }
    Ok(())
}

/// Removes what killed runs left in every slot no run holds now. Returns how many names it
/// removed.
pub fn remove_leftovers() -> io::Result<usize> {
    Slot::remove_leftovers_of_free_slots()
}

/// The names of every slot's namespaces and links on this machine (for tests: what is left).
pub fn names_on_this_machine() -> io::Result<Vec<String>> {
    slot::any_left()
}

/// A run's hosts (see the module's documentation). Dropping it removes them.
pub struct Hosts {
    slot: Slot,
    nodes: u32,
    /// What every directed link does; a link not here is healthy.
    faults: BTreeMap<(NodeId, NodeId), LinkFault>,
    /// The delayer of each host that has had a link holding packets, started then.
    delayers: BTreeMap<NodeId, Delayer>,
    /// Where each delayer's draws come from (split by host).
    rng: DetRng,
}

impl Hosts {
    /// Makes `nodes` hosts on a bridge of their own and checks that each reaches every other
    /// and the root namespace reaches each. Delays drawn for packets come from `seed`.
    pub fn create(nodes: u32, seed: u64) -> io::Result<Hosts> {
        let hosts = Hosts {
            slot: Slot::claim()?,
            nodes,
            faults: BTreeMap::new(),
            delayers: BTreeMap::new(),
            rng: DetRng::new(seed).split(0x6465_6c61_7965_7273),
        };
        // `hosts` is made first so that a failure below removes what was made.
        let bridge = hosts.slot.bridge();
        run("ip", &["link", "add", &bridge, "type", "bridge"], None)?;
        let bridge_address = format!("{}/24", hosts.slot.bridge_address());
        run(
            "ip",
            &["addr", "add", &bridge_address, "dev", &bridge],
            None,
        )?;
        run("ip", &["link", "set", &bridge, "up"], None)?;
        for node in 0..nodes {
            hosts.create_host(node)?;
        }
        reach::check(&hosts)?;
        Ok(hosts)
    }

    fn create_host(&self, node: u32) -> io::Result<()> {
        let namespace = self.slot.namespace(node);
        let link = self.slot.host_link(node);
        let address = format!("{}/24", self.slot.address(node));
        run("ip", &["netns", "add", &namespace], None)?;
        run(
            "ip",
            &[
                "link", "add", &link, "type", "veth", "peer", "name", "eth0", "netns", &namespace,
            ],
            None,
        )?;
        run(
            "ip",
            &["link", "set", &link, "master", &self.slot.bridge(), "up"],
            None,
        )?;
        let inside = |args: &[&str]| {
            let mut all = vec!["-n", &namespace];
            all.extend_from_slice(args);
            run("ip", &all, None).map(|_| ())
        };
        inside(&["addr", "add", &address, "dev", "eth0"])?;
        inside(&["link", "set", "eth0", "up"])?;
        inside(&["link", "set", "lo", "up"])
    }

    /// The slot these hosts are in (their names and addresses say it).
    pub fn slot(&self) -> u8 {
        self.slot.number()
    }

    /// How many hosts.
    pub fn len(&self) -> u32 {
        self.nodes
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.nodes == 0
    }

    /// `node`'s address.
    pub fn address(&self, node: NodeId) -> Ipv4Addr {
        assert!(node.0 < self.nodes, "{node} is not a host here");
        self.slot.address(node.0)
    }

    /// `node`'s namespace's name.
    pub fn namespace(&self, node: NodeId) -> String {
        assert!(node.0 < self.nodes, "{node} is not a host here");
        self.slot.namespace(node.0)
    }

    /// `node`'s namespace, to enter with `setns(2)` (a process started in it, say).
    pub fn namespace_file(&self, node: NodeId) -> io::Result<File> {
        File::open(format!("/run/netns/{}", self.namespace(node)))
    }

    /// Makes each listed link do what it says, changing each sending host's filter once.
    pub fn set_links(&mut self, changes: &[(NodeId, NodeId, LinkFault)]) -> io::Result<()> {
        let mut senders = Vec::new();
        for &(from, to, fault) in changes {
            assert!(from != to, "a link from {from} to itself");
            if fault == LinkFault::Healthy {
                self.faults.remove(&(from, to));
            } else {
                self.faults.insert((from, to), fault);
            }
            if !senders.contains(&from) {
                senders.push(from);
            }
        }
        for from in senders {
            self.write_filter(from)?;
        }
        Ok(())
    }

    /// What the link from `from` to `to` does now.
    pub fn link(&self, from: NodeId, to: NodeId) -> LinkFault {
        self.faults
            .get(&(from, to))
            .copied()
            .unwrap_or(LinkFault::Healthy)
    }

    /// Every link that is not healthy, with what it does.
    pub fn faulty_links(&self) -> Vec<((NodeId, NodeId), LinkFault)> {
        self.faults
            .iter()
            .map(|(&link, &fault)| (link, fault))
            .collect()
    }

    /// Makes every link healthy: every host's rules removed.
    pub fn heal(&mut self) -> io::Result<()> {
        let senders: Vec<NodeId> = self.faults.keys().map(|&(from, _)| from).collect();
        self.faults.clear();
        for from in senders {
            self.write_filter(from)?;
        }
        Ok(())
    }

    /// Replaces `from`'s packet filter with what its links do now: its delayer told first (and
    /// started if this is its first link that holds packets), then its rules.
    fn write_filter(&mut self, from: NodeId) -> io::Result<()> {
        let outgoing: Vec<(Ipv4Addr, NodeId, LinkFault)> = (0..self.nodes)
            .map(NodeId)
            .filter(|&to| to != from)
            .map(|to| (self.address(to), to, self.link(from, to)))
            .collect();
        let holds = outgoing.iter().any(|&(_, _, fault)| fault.holds_packets());
        if holds && !self.delayers.contains_key(&from) {
            can_hold_packets().map_err(io::Error::other)?;
            let rng = self.rng.split(u64::from(from.0));
            let delayer = Delayer::start(&self.namespace_file(from)?, self.nodes, rng)?;
            self.delayers.insert(from, delayer);
        }
        if let Some(delayer) = self.delayers.get(&from) {
            for &(_, to, fault) in &outgoing {
                delayer.set(to, fault)?;
            }
            let queues = filter::queue_script(&outgoing);
            run_in(
                &self.namespace(from),
                "iptables-restore",
                &[],
                Some(&queues),
            )?;
        }
        let script = filter::script(&outgoing);
        run_in(&self.namespace(from), "nft", &["-f", "-"], Some(&script)).map(|_| ())
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        // The delayers let their packets go before the namespaces they queue in are removed.
        self.delayers.clear();
        if let Err(error) = self.slot.remove_names() {
            tracing::warn!("cannot remove the hosts of slot {}: {error}", self.slot());
        }
    }
}
