//! The links between a [`crate::LocalCluster`]'s servers, made one of three ways
//! ([`Network`]): straight over localhost, through a [`LinkProxy`] on every directed link, or
//! between hosts in network namespaces with a packet filter in each ([`crate::netns`]).

use crate::link_fault::LinkFault;
use crate::netns::Hosts;
use crate::proxy::LinkProxy;
use node::NodeId;
use std::collections::BTreeMap;
use std::fmt;
use std::io;

/// How a local cluster's servers reach each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Network {
    /// Straight over localhost: no link can be cut.
    Direct,
    /// A TCP proxy on every directed link (no root needed): a cut closes connections and
    /// refuses new ones; a link can be delayed, not made to lose packets.
    Proxies,
    /// Each server a host of its own, in a network namespace with its own address (root,
    /// `ip` and `nft` needed): a cut drops packets silently; links can lose or duplicate a share
    /// of their packets, and hold them (delay, jitter, reorder: `iptables` too).
    Namespaces,
}

impl Network {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Network::Direct => "direct",
            Network::Proxies => "proxies",
            Network::Namespaces => "namespaces",
        }
    }

    /// Whether links of this network can be made to do `fault`.
    pub fn can(self, fault: LinkFault) -> bool {
        match self {
            Network::Direct => fault == LinkFault::Healthy,
            Network::Proxies => !fault.is_per_packet(),
            Network::Namespaces => true,
        }
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A running cluster's links.
pub(crate) enum Links {
    Direct,
    /// The proxy of each link, by its sending and receiving node.
    Proxies(BTreeMap<(NodeId, NodeId), LinkProxy>),
    Hosts(Hosts),
}

impl Links {
    /// Which kind of network these are.
    pub(crate) fn network(&self) -> Network {
        match self {
            Links::Direct => Network::Direct,
            Links::Proxies(_) => Network::Proxies,
            Links::Hosts(_) => Network::Namespaces,
        }
    }

    /// Makes each listed link (from, to) do its fault. Fails, changing nothing, if this
    /// network cannot make one of them.
    pub(crate) fn set(&mut self, changes: &[(NodeId, NodeId, LinkFault)]) -> io::Result<()> {
        let network = self.network();
        if let Some(&(_, _, fault)) = changes.iter().find(|(_, _, fault)| !network.can(*fault)) {
            return Err(io::Error::other(format!(
                "links through {network} cannot be made {fault}"
            )));
        }
        match self {
            Links::Direct => Ok(()),
            Links::Proxies(proxies) => {
                for (from, to, fault) in changes {
                    proxies[&(*from, *to)].set(*fault);
                }
                Ok(())
            }
            Links::Hosts(hosts) => hosts.set_links(changes),
        }
    }

    /// Makes every link healthy.
    pub(crate) fn heal(&mut self) -> io::Result<()> {
        match self {
            Links::Direct => Ok(()),
            Links::Proxies(proxies) => {
                for proxy in proxies.values() {
                    proxy.set(LinkFault::Healthy);
                }
                Ok(())
            }
            Links::Hosts(hosts) => hosts.heal(),
        }
    }

    /// Every link that is not healthy, with what it does.
    pub(crate) fn faulty(&self) -> Vec<((NodeId, NodeId), LinkFault)> {
        match self {
            Links::Direct => Vec::new(),
            Links::Proxies(proxies) => proxies
                .iter()
                .map(|(&link, proxy)| (link, proxy.fault()))
                .filter(|(_, fault)| *fault != LinkFault::Healthy)
                .collect(),
            Links::Hosts(hosts) => hosts.faulty_links(),
        }
    }
}
