//! The node a loom model runs: the real [`Node`] with no network, over a [`ManualClock`].

use node::messages::{Request, Response};
use node::{
    Config, Delivery, MutationSet, NoObserver, Node, NodeId, NodeParams, Persister, Transport,
    TransportError, Workers,
};
use std::time::Duration;
use threadsim::sync::Arc;
use threadsim::ManualClock;
use threadsim::{channel, ClockRef, Receiver};

/// A transport on which every call goes unanswered (the models drive RPCs by hand).
pub struct NoNetwork;

impl Transport for NoNetwork {
    fn call(&self, to: NodeId, _: Request, _: Duration) -> Result<Response, TransportError> {
        Err(TransportError::NoReply(to))
    }
}

/// Node `id` of a cluster with `peers`, over `clock` and `persister`, with `mutations` on, the
/// given worker threads, and an apply channel of `apply_capacity`.
pub fn model_node(
    id: NodeId,
    peers: Vec<NodeId>,
    clock: &ManualClock,
    persister: Arc<dyn Persister>,
    mutations: &MutationSet,
    workers: Workers,
    apply_capacity: usize,
) -> (Node, Receiver<Delivery>) {
    let clock: ClockRef = Arc::new(clock.clone());
    let (apply_sender, receiver) = channel(&clock, apply_capacity, "apply");
    let node = Node::new(NodeParams {
        id,
        peers,
        membership: None,
        transport: Arc::new(NoNetwork),
        persister,
        clock,
        apply_sender,
        config: Config {
            mutations: mutations.clone(),
            ..Config::default()
        },
        observer: Arc::new(NoObserver),
        workers,
    })
    .expect("valid node");
    (node, receiver)
}

/// Node 1 of a two-node cluster: a follower with only its applier on a thread, a one-slot
/// apply channel and `mutations` on (the models drive its handlers by hand).
pub fn one_slot_follower(mutations: &MutationSet) -> (Node, Receiver<Delivery>) {
    let workers = Workers {
        applier: true,
        ..Workers::NONE
    };
    let persister = Arc::new(node::MemoryPersister::new());
    model_node(
        NodeId(1),
        vec![NodeId(0)],
        &ManualClock::new(),
        persister,
        mutations,
        workers,
        1,
    )
}

/// The text of a panic payload (loom re-raises a model's panic with it).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
