//! [`LinkFault`]: what one directed link between two servers does to its traffic, whether the
//! link is a TCP proxy (byte streams: cut or delayed) or a packet filter between network
//! namespaces (packets: dropped, some dropped, some duplicated, held back and reordered).

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
    /// Holds everything this long: a proxy each chunk of bytes, a packet filter each packet.
    Delayed(Duration),
    /// Holds each packet `by` give or take up to `jitter`, drawn for each, so that packets
    /// overtake one another (packet filters only).
    Jittery {
        /// The delay in the middle.
        by: Duration,
        /// How far a packet's delay may be from `by` either way (at most `by`).
        jitter: Duration,
    },
    /// Holds this share of the packets `by` and lets the rest go at once, so that later packets
    /// overtake the held ones (packet filters only).
    Reordered {
        /// How many packets in a hundred are held (1 to 99).
        percent: u8,
        /// How long a held packet is held.
        by: Duration,
    },
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
        matches!(
            self,
            LinkFault::Lossy { .. }
                | LinkFault::Duplicated { .. }
                | LinkFault::Jittery { .. }
                | LinkFault::Reordered { .. }
        )
    }

    /// Whether it holds packets back, which a packet filter does through a queue that the
    /// nemesis's delayer reads.
    pub fn holds_packets(self) -> bool {
        matches!(
            self,
            LinkFault::Delayed(_) | LinkFault::Jittery { .. } | LinkFault::Reordered { .. }
        )
    }
}

impl fmt::Display for LinkFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkFault::Healthy => f.write_str("healthy"),
            LinkFault::Cut => f.write_str("cut"),
            LinkFault::Delayed(by) => write!(f, "delayed {by:?}"),
            LinkFault::Jittery { by, jitter } => write!(f, "delayed {by:?} ± {jitter:?}"),
            LinkFault::Reordered { percent, by } => {
                write!(
                    f,
                    "{percent}% of packets held {by:?}, the rest overtaking them"
                )
            }
            LinkFault::Lossy { percent } => write!(f, "{percent}% of packets dropped"),
            LinkFault::Duplicated { percent } => write!(f, "{percent}% of packets duplicated"),
        }
    }
}
