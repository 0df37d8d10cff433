//! The delayer of one host: a thread that holds the packets its host's `NFQUEUE` rules queue
//! (one queue per link, numbered by the receiving node) and lets each go when its link says:
//! after a fixed delay, after a delay with jitter (so packets overtake each other), or, for a
//! share of them, after a delay while the rest go at once (reordered). Each draw comes from the
//! run's seed. A packet's delay is drawn when it arrives: a link healed later still lets the
//! packets it holds go at their time, as a real network drains its queues.

use super::nfqueue::{QueueSocket, QueuedPacket};
use super::reach::in_namespace;
use crate::link_fault::LinkFault;
use node::NodeId;
use server::real_time::now;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use threadsim::DetRng;

/// The longest the thread waits before it looks whether it should stop.
const STOP_CHECK: Duration = Duration::from_millis(50);

/// One host's delayer (see the module's documentation). Dropping it lets every held packet go
/// and joins its thread.
pub(super) struct Delayer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    /// What each link out of the host does now, by its queue (the receiving node's number).
    links: Mutex<Links>,
    stop: AtomicBool,
    /// Why the thread stopped on its own, if it did: the link then holds packets forever.
    failure: Mutex<Option<String>>,
}

struct Links {
    faults: BTreeMap<u16, LinkFault>,
    rng: DetRng,
}

impl Delayer {
    /// Starts the delayer of the host whose namespace `namespace` is, for links to `nodes`
    /// hosts, drawing from `rng`.
    pub fn start(namespace: &File, nodes: u32, rng: DetRng) -> io::Result<Delayer> {
        let queues: Vec<u16> = (0..nodes).map(|node| queue_of(NodeId(node))).collect();
        let socket = in_namespace(namespace, || QueueSocket::open(&queues))?;
        let shared = Arc::new(Shared {
            links: Mutex::new(Links {
                faults: BTreeMap::new(),
                rng,
            }),
            stop: AtomicBool::new(false),
            failure: Mutex::new(None),
        });
        let thread = std::thread::Builder::new()
            .name("packet-delayer".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || hold_and_release(socket, &shared)
            })?;
        Ok(Delayer {
            shared,
            thread: Some(thread),
        })
    }

    /// Makes the link to `to` delay what it queues as `fault` says (healthy: at once); fails
    /// with why if the thread has stopped, since nothing lets the queued packets go then.
    pub fn set(&self, to: NodeId, fault: LinkFault) -> io::Result<()> {
        if let Some(why) = self.shared.failure.lock().expect("not poisoned").clone() {
            return Err(io::Error::other(format!(
                "the packet delayer stopped: {why}"
            )));
        }
        let mut links = self.shared.links.lock().expect("not poisoned");
        links.faults.insert(queue_of(to), fault);
        Ok(())
    }
}

impl Drop for Delayer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The queue the rules of a link to `to` send its packets to.
pub(super) fn queue_of(to: NodeId) -> u16 {
    u16::try_from(to.0).expect("fewer than 65,536 hosts")
}

/// How long a packet on a link doing `fault` is held, drawn from `rng`.
fn hold_for(fault: LinkFault, rng: &mut DetRng) -> Duration {
    match fault {
        LinkFault::Delayed(by) => by,
        LinkFault::Jittery { by, jitter } => {
            assert!(jitter <= by, "a jitter of {jitter:?} around {by:?}");
            rng.duration_ms(by - jitter, by + jitter)
        }
        LinkFault::Reordered { percent, by } => {
            if rng.index(100) < percent as usize {
                by
            } else {
                Duration::ZERO
            }
        }
        LinkFault::Healthy
        | LinkFault::Cut
        | LinkFault::Lossy { .. }
        | LinkFault::Duplicated { .. } => Duration::ZERO,
    }
}

/// The thread: reads what the kernel queues, holds it, lets it go when due; on stop lets
/// everything go.
fn hold_and_release(mut socket: QueueSocket, shared: &Shared) {
    // Due time, then arrival order, so that equal delays keep packets in order.
    let mut held: BinaryHeap<Reverse<(Instant, u64, u16, u32)>> = BinaryHeap::new();
    let mut arrivals = 0u64;
    while !shared.stop.load(Ordering::SeqCst) {
        let wait = held
            .peek()
            .map(|Reverse((due, ..))| due.saturating_duration_since(now()))
            .unwrap_or(STOP_CHECK)
            .min(STOP_CHECK);
        let packets = match socket.receive(wait) {
            Ok(packets) => packets,
            Err(error) => {
                let why = format!("cannot read its queue: {error}");
                tracing::warn!("the packet delayer {why}");
                *shared.failure.lock().expect("not poisoned") = Some(why);
                break;
            }
        };
        let arrived = now();
        {
            let mut links = shared.links.lock().expect("not poisoned");
            let Links { faults, rng } = &mut *links;
            for packet in packets {
                let fault = faults
                    .get(&packet.queue)
                    .copied()
                    .unwrap_or(LinkFault::Healthy);
                arrivals += 1;
                held.push(Reverse((
                    arrived + hold_for(fault, rng),
                    arrivals,
                    packet.queue,
                    packet.id,
                )));
            }
        }
        let time = now();
        while held.peek().is_some_and(|Reverse((due, ..))| *due <= time) {
            let Reverse((_, _, queue, id)) = held.pop().expect("peeked");
            release(&mut socket, QueuedPacket { queue, id });
        }
    }
    for Reverse((_, _, queue, id)) in held.into_sorted_vec().into_iter().rev() {
        release(&mut socket, QueuedPacket { queue, id });
    }
}

fn release(socket: &mut QueueSocket, packet: QueuedPacket) {
    if let Err(error) = socket.accept(packet) {
        tracing::warn!("the packet delayer cannot let a packet go: {error}");
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn each_fault_holds_packets_as_it_says() {
        let mut rng = DetRng::new(7);
        let by = Duration::from_millis(100);
        assert_eq!(hold_for(LinkFault::Delayed(by), &mut rng), by);
        assert_eq!(hold_for(LinkFault::Healthy, &mut rng), Duration::ZERO);
        let jitter = Duration::from_millis(40);
        let jittered: Vec<Duration> = (0..200)
            .map(|_| hold_for(LinkFault::Jittery { by, jitter }, &mut rng))
            .collect();
        assert!(jittered
            .iter()
            .all(|d| (by - jitter..=by + jitter).contains(d)));
        assert!(jittered.iter().any(|d| *d < by) && jittered.iter().any(|d| *d > by));
        let reordered: Vec<Duration> = (0..200)
            .map(|_| hold_for(LinkFault::Reordered { percent: 30, by }, &mut rng))
            .collect();
        let late = reordered.iter().filter(|d| **d == by).count();
        assert!((30..=90).contains(&late), "{late} of 200 held");
        assert!(reordered.iter().all(|d| *d == by || d.is_zero()));
    }
}
