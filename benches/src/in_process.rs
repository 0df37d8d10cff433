//! Nodes of a real-time cluster in one process: system clock, in-process transport without
//! delays, in-memory persisters. What the benchmark clusters put on top differs (a service that
//! drains applied entries, or a key-value server).

use node::{Delivery, LocalNetwork, MemoryPersister, Node, NodeId, NodeParams};
use std::time::Duration;
use threadsim::sync::Arc;
use threadsim::{channel, ClockRef, Receiver, SystemClock};

/// How long a call to an absent node takes to fail on the in-process transport.
const NO_REPLY_DELAY: Duration = Duration::from_millis(5);

/// A started node with the receiving end of its apply channel.
pub type NodeAndApplied = (Arc<Node>, Receiver<Delivery>);

/// `size` started nodes on one clock.
pub fn start_nodes(size: u32) -> (ClockRef, Vec<NodeAndApplied>) {
    let clock: ClockRef = Arc::new(SystemClock::new());
    let network = LocalNetwork::new(clock.clone(), NO_REPLY_DELAY);
    let ids: Vec<NodeId> = (0..size).map(NodeId).collect();
    let nodes = ids
        .iter()
        .map(|&id| {
            let (apply_sender, receiver) = channel(&clock, 1024, "apply");
            let node = Arc::new(
                Node::new(NodeParams::with_defaults(
                    id,
                    &ids,
                    network.clone(),
                    Arc::new(MemoryPersister::new()),
                    clock.clone(),
                    apply_sender,
                ))
                .expect("valid node"),
            );
            network.register(id, node.rpc_handler());
            (node, receiver)
        })
        .collect();
    (clock, nodes)
}

/// Waits until one of `nodes` leads and returns its position.
pub fn wait_for_leader(clock: &ClockRef, nodes: &[Arc<Node>]) -> usize {
    loop {
        if let Some(i) = nodes.iter().position(|n| n.state().1) {
            return i;
        }
        clock.sleep(Duration::from_millis(10));
    }
}
