//! [`LinkFault`]: what one directed link between two servers does to its traffic, whether the
//! link is a TCP proxy (byte streams: cut or delayed) or a packet filter between network
//! namespaces (packets: dropped, some dropped, some duplicated).

use std::fmt;
use std::time::Duration;

/// What a link does to its traffic now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkFault {
    /// Carries everything at once.
    Healthy,
    /// Carries nothing. A proxy closes every connection and accepts none; a packet filter drops
    /// every packet silently, so connections hang until their peers time out.
    Cut,
    /// Holds every chunk of bytes this long before forwarding it (proxies only).
    Delayed(Duration),
    /// Drops this share of the packets, each drawn at random by the kernel (packet filters
    /// only).
    Lossy {
        /// How many packets in a hundred are dropped (1 to 99).
        percent: u8,
    },
    /// Sends this share of the packets twice (packet filters only).
    Duplicated {
        /// How many packets in a hundred are sent twice (1 to 100).
        percent: u8,
    },
}

impl LinkFault {
    /// Whether it acts on packets, which only a packet filter can do.
    pub fn is_per_packet(self) -> bool {
        matches!(self, LinkFault::Lossy { .. } | LinkFault::Duplicated { .. })
    }
}

impl fmt::Display for LinkFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkFault::Healthy => f.write_str("healthy"),
            LinkFault::Cut => f.write_str("cut"),
            LinkFault::Delayed(by) => write!(f, "delayed {by:?}"),
            LinkFault::Lossy { percent } => write!(f, "{percent}% of packets dropped"),
            LinkFault::Duplicated { percent } => write!(f, "{percent}% of packets duplicated"),
        }
    }
}
