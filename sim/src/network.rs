//! [`Network`]: a simulated network implementing [`Transport`], with delays, loss, partitions,
//! one-way cuts and nodes going down, all changeable while messages are in flight.
//!
//! A message is carried by the sending thread: the request waits its delay (on the clock), is
//! checked for reachability *at delivery*, runs the target's handler on the sender's thread, and
//! the reply waits its own delay and is checked again. A lost message or an unreachable target
//! still costs the sender its full timeout.

use crate::events::{node_list, Events};
use node::messages::{Request, Response};
use node::{NodeId, RpcHandler, Transport, TransportError};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use threadsim::sync::{Arc, Mutex};
use threadsim::ClockRef;
use threadsim::DetRng;

/// Delays, loss and timeout of the simulated network.
#[derive(Clone, Debug, PartialEq)]
pub struct NetConfig {
    /// Shortest one-way delay of a request or a reply.
    pub delay_min: Duration,
    /// Longest one-way delay.
    pub delay_max: Duration,
    /// Probability that a request is lost (only when `unreliable`).
    pub request_loss: f64,
    /// Probability that a reply is lost after the request was handled (only when `unreliable`).
    pub reply_loss: f64,
    /// Whether requests and replies are dropped at the rates above.
    pub unreliable: bool,
    /// Long reordering (as in the 6.5840 labs): two thirds of replies are held back a further
    /// 200 ms + U(0, U(0, 2000)) ms, so replies arrive long after others sent later.
    pub long_reordering: bool,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            delay_min: Duration::from_millis(1),
            delay_max: Duration::from_millis(10),
            request_loss: 0.1,
            reply_loss: 0.1,
            unreliable: false,
            long_reordering: false,
        }
    }
}

/// Counters of what the network did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetStats {
    /// Calls made.
    pub calls: u64,
    /// Requests that reached a handler.
    pub delivered: u64,
    /// Replies that reached their caller.
    pub replied: u64,
    /// Requests or replies dropped by loss.
    pub lost: u64,
    /// Requests or replies stopped by a partition, a down node or a crash.
    pub unreachable: u64,
    /// Replies that would have arrived after their caller's timeout.
    pub timed_out: u64,
}

struct Endpoint {
    incarnation: u64,
    handler: Option<Arc<dyn RpcHandler>>,
    /// A client of the key-value service: always attached, never handles Raft requests.
    client: bool,
    up: bool,
}

impl Endpoint {
    fn attached(&self) -> bool {
        self.client || self.handler.is_some()
    }
}

/// A link's draws at one simulated instant: derived from the seed, the link and the instant,
/// so removing a message (a shrinker removing the event that caused it) changes the draws of
/// that link at that instant only, not every later delay and loss on it.
struct LinkStream {
    at: threadsim::Instant,
    rng: DetRng,
}

struct State {
    config: NetConfig,
    endpoints: BTreeMap<NodeId, Endpoint>,
    cut: BTreeSet<(NodeId, NodeId)>,
    /// Each link's stream for the instant it last carried a call.
    links: BTreeMap<(NodeId, NodeId), LinkStream>,
    root: DetRng,
    stats: NetStats,
}

/// The simulated network shared by a cluster.
pub struct Network {
    clock: ClockRef,
    events: Events,
    state: Mutex<State>,
}

/// One node incarnation's view of the network: its [`Transport`].
pub struct Port {
    network: Arc<Network>,
    me: NodeId,
    incarnation: u64,
}

/// The random choices for one call, drawn together so every call draws the same amount.
struct CallPlan {
    request_delay: Duration,
    request_lost: bool,
    reply_delay: Duration,
    reply_lost: bool,
}

impl State {
    fn endpoint(&mut self, node: NodeId) -> &mut Endpoint {
        self.endpoints.entry(node).or_insert(Endpoint {
            incarnation: 0,
            handler: None,
            client: false,
            up: true,
        })
    }

    fn deliverable(&self, from: NodeId, to: NodeId) -> bool {
        let up = |node| {
            self.endpoints
                .get(&node)
                .is_some_and(|e| e.up && e.attached())
        };
        up(from) && up(to) && !self.cut.contains(&(from, to))
    }

    fn alive(&self, node: NodeId, incarnation: u64) -> bool {
        self.endpoints
            .get(&node)
            .is_some_and(|e| e.incarnation == incarnation && e.attached())
    }
}

impl Network {
    /// A network with every link up; `rng` is the stream its delays and losses come from, and
    /// faults are recorded in `events`.
    pub fn new(events: Events, config: NetConfig, rng: DetRng) -> Arc<Network> {
        assert!(config.delay_min <= config.delay_max, "empty delay range");
        Arc::new(Network {
            clock: events.clock().clone(),
            events,
            state: Mutex::new(State {
                config,
                endpoints: BTreeMap::new(),
                cut: BTreeSet::new(),
                links: BTreeMap::new(),
                root: rng,
                stats: NetStats::default(),
            }),
        })
    }

    /// Reserves the next incarnation of `node` before its handler exists (the node needs its
    /// transport before it can hand out a handler); [`Network::activate`] completes it.
    pub fn reserve(self: &Arc<Self>, node: NodeId) -> Port {
        let mut state = self.state.lock();
        let endpoint = state.endpoint(node);
        endpoint.incarnation += 1;
        endpoint.handler = None;
        Port {
            network: self.clone(),
            me: node,
            incarnation: endpoint.incarnation,
        }
    }

    /// Lets the reserved incarnation behind `port` receive through `handler`.
    pub fn activate(&self, port: &Port, handler: Arc<dyn RpcHandler>) {
        let mut state = self.state.lock();
        let endpoint = state
            .endpoints
            .get_mut(&port.me)
            .expect("reserved endpoint");
        assert_eq!(
            endpoint.incarnation, port.incarnation,
            "activating a stale incarnation of {}",
            port.me
        );
        endpoint.handler = Some(handler);
    }

    /// Adds a client endpoint (it sends key-value requests; it handles nothing). Partitions
    /// place it like a node: a client in no group is cut off.
    pub fn add_client(self: &Arc<Self>, client: NodeId) -> ClientPort {
        let mut state = self.state.lock();
        assert!(
            !state.endpoints.contains_key(&client),
            "{client} is already on the network"
        );
        state.endpoint(client).client = true;
        ClientPort {
            network: self.clone(),
            me: client,
        }
    }

    /// Crashes `node`'s current incarnation: it can never send or receive again, and messages in
    /// flight to or from it are lost.
    pub fn detach(&self, node: NodeId) {
        if let Some(endpoint) = self.state.lock().endpoints.get_mut(&node) {
            endpoint.handler = None;
        }
    }

    /// Splits the nodes into `groups` that cannot reach each other; a node in no group is isolated.
    pub fn partition(&self, groups: &[Vec<NodeId>]) {
        let groups_text: Vec<String> = groups.iter().map(|group| node_list(group)).collect();
        self.events
            .info(format!("partition {}", groups_text.join(" ")));
        let mut state = self.state.lock();
        let nodes: Vec<NodeId> = state.endpoints.keys().copied().collect();
        let group_of = |node: NodeId| groups.iter().position(|group| group.contains(&node));
        state.cut.clear();
        for &a in &nodes {
            for &b in &nodes {
                let same = a == b || (group_of(a).is_some() && group_of(a) == group_of(b));
                if !same {
                    state.cut.insert((a, b));
                }
            }
        }
    }

    /// Cuts the link from `from` to `to` only: `to` can still send to `from`.
    pub fn partition_one_way(&self, from: NodeId, to: NodeId) {
        self.events.info(format!("cut {from} -> {to}"));
        self.state.lock().cut.insert((from, to));
    }

    /// Takes `node`'s network interface down or up (its links stay as they are).
    pub fn set_up(&self, node: NodeId, up: bool) {
        self.events
            .info(format!("{node} network {}", if up { "up" } else { "down" }));
        let mut state = self.state.lock();
        state.endpoint(node).up = up;
    }

    /// Whether `node`'s interface is up.
    pub fn is_up(&self, node: NodeId) -> bool {
        self.state.lock().endpoints.get(&node).is_some_and(|e| e.up)
    }

    /// Restores every link and interface.
    pub fn heal(&self) {
        self.events.info("heal".to_string());
        let mut state = self.state.lock();
        state.cut.clear();
        for endpoint in state.endpoints.values_mut() {
            endpoint.up = true;
        }
    }

    /// Turns message loss on or off.
    pub fn set_unreliable(&self, unreliable: bool) {
        let mut state = self.state.lock();
        if state.config.unreliable != unreliable {
            self.events.info(format!(
                "network {}",
                if unreliable { "unreliable" } else { "reliable" }
            ));
        }
        state.config.unreliable = unreliable;
    }

    /// The current delays, loss rates and timeout.
    pub fn config(&self) -> NetConfig {
        self.state.lock().config.clone()
    }

    /// Replaces delays, loss rates and timeout.
    pub fn set_config(&self, config: NetConfig) {
        self.state.lock().config = config;
    }

    /// Whether a message from `from` would reach `to` now.
    pub fn reachable(&self, from: NodeId, to: NodeId) -> bool {
        self.state.lock().deliverable(from, to)
    }

    /// What the network has done so far.
    pub fn stats(&self) -> NetStats {
        self.state.lock().stats
    }

    fn plan(&self, from: NodeId, to: NodeId) -> CallPlan {
        let mut state = self.state.lock();
        state.stats.calls += 1;
        let config = state.config.clone();
        let now = self.clock.now();
        let fresh = || LinkStream {
            at: now,
            rng: state
                .root
                .split((u64::from(from.0) << 32) | u64::from(to.0))
                .split(now.since_epoch().as_micros() as u64),
        };
        let stream = match state.links.get(&(from, to)) {
            Some(stream) if stream.at == now => None,
            _ => Some(fresh()),
        };
        if let Some(stream) = stream {
            state.links.insert((from, to), stream);
        }
        let rng = &mut state
            .links
            .get_mut(&(from, to))
            .expect("inserted above")
            .rng;
        let request_delay = rng.duration_ms(config.delay_min, config.delay_max);
        let reply_delay = rng.duration_ms(config.delay_min, config.delay_max);
        let request_lost = rng.chance(config.request_loss) && config.unreliable;
        let reply_lost = rng.chance(config.reply_loss) && config.unreliable;
        // Drawn on every call, used or not, so switching reordering on shifts no other draw.
        let held_back = rng.chance(2.0 / 3.0);
        let inner_ms = rng.range_inclusive(0, 2000);
        let hold = Duration::from_millis(200 + rng.range_inclusive(0, inner_ms));
        let reply_delay = if config.long_reordering && held_back {
            reply_delay + hold
        } else {
            reply_delay
        };
        CallPlan {
            request_delay,
            request_lost,
            reply_delay,
            reply_lost,
        }
    }
}

impl Port {
    /// The node this port belongs to.
    pub fn node(&self) -> NodeId {
        self.me
    }

    /// Which incarnation of the node this port belongs to.
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }
}

impl Transport for Port {
    fn call(
        &self,
        to: NodeId,
        request: Request,
        timeout: Duration,
    ) -> Result<Response, TransportError> {
        self.network.carry(
            (self.me, self.incarnation),
            to,
            timeout,
            |state| state.endpoints[&to].handler.clone(),
            |handler| handler.handle(request),
        )
    }
}

/// A key-value client's view of the network: calls reach the [`node::kv::KvServer`] that
/// `servers` names for the target node at delivery time.
pub struct ClientPort {
    network: Arc<Network>,
    me: NodeId,
}

impl ClientPort {
    /// The client's endpoint id.
    pub fn id(&self) -> NodeId {
        self.me
    }

    /// Carries `request` to `server` and its reply back, like a Raft call: delays, loss,
    /// partitions and crashes apply. `deliver` runs the server's handler at delivery.
    pub fn call<R>(
        &self,
        server: NodeId,
        timeout: Duration,
        deliver: impl FnOnce() -> Option<R>,
    ) -> Result<R, TransportError> {
        self.network
            .carry((self.me, 0), server, timeout, |_| Some(()), |()| deliver())
    }
}

impl Network {
    /// Carries one call: the request waits its delay, is checked for reachability at delivery,
    /// `target` picks what handles it (under the network's lock) and `run` runs it on the
    /// caller's thread (without the lock); the reply waits its own delay and is checked again.
    /// A lost message costs the caller its full timeout.
    fn carry<H, R>(
        &self,
        (from, incarnation): (NodeId, u64),
        to: NodeId,
        timeout: Duration,
        target: impl FnOnce(&State) -> Option<H>,
        run: impl FnOnce(H) -> Option<R>,
    ) -> Result<R, TransportError> {
        let started = self.clock.now();
        let plan = self.plan(from, to);
        self.clock.sleep(plan.request_delay);
        let handler = {
            let mut state = self.state.lock();
            if plan.request_lost {
                state.stats.lost += 1;
                None
            } else if !state.alive(from, incarnation) || !state.deliverable(from, to) {
                state.stats.unreachable += 1;
                None
            } else {
                state.stats.delivered += 1;
                target(&state)
            }
        };
        let Some(handler) = handler else {
            return Err(self.give_up(to, started, timeout));
        };
        let Some(response) = run(handler) else {
            return Err(self.give_up(to, started, timeout));
        };
        if self.clock.now() + plan.reply_delay > started + timeout {
            // The reply would arrive after the caller gave up: handled, but never heard.
            self.state.lock().stats.timed_out += 1;
            return Err(self.give_up(to, started, timeout));
        }
        self.clock.sleep(plan.reply_delay);
        {
            let mut state = self.state.lock();
            if plan.reply_lost {
                state.stats.lost += 1;
            } else if !state.alive(from, incarnation) || !state.deliverable(to, from) {
                state.stats.unreachable += 1;
            } else {
                state.stats.replied += 1;
                return Ok(response);
            }
        }
        Err(self.give_up(to, started, timeout))
    }

    fn give_up(
        &self,
        to: NodeId,
        started: threadsim::Instant,
        timeout: Duration,
    ) -> TransportError {
        let waited = self.clock.now() - started;
        if waited < timeout {
            self.clock.sleep(timeout - waited);
        }
        TransportError::NoReply(to)
    }
}
