//! A real-time cluster in one process for the lock-contention benchmark and its profiling
//! example: system clock, in-process transport without artificial delays, clients that call
//! `start` on the leader and wait until their command is applied there.

use crate::AppliedIndex;
use node::{Command, Node, ReplicationStats};
use std::time::{Duration, Instant};
use threadsim::sync::{Arc, Condvar};
use threadsim::ClockRef;

/// What one [`RealCluster::run`] measured.
pub struct Run {
    /// Wall time from the moment every client thread is ready (spawned and waiting at a start
    /// barrier) to the last client's last wake-up.
    pub elapsed: Duration,
    /// How long each `start` call took.
    pub start_latencies: Vec<Duration>,
    /// The AppendEntries with entries the leader sent meanwhile (to all followers).
    pub sent: ReplicationStats,
}

/// Nodes of one cluster, each with a service thread that drains its applied entries.
pub struct RealCluster {
    clock: ClockRef,
    nodes: Vec<Arc<Node>>,
    applied: Vec<Arc<AppliedIndex>>,
    drains: Vec<std::thread::JoinHandle<()>>,
}

impl RealCluster {
    /// Starts a cluster of `size` nodes with empty logs.
    pub fn new(size: u32) -> RealCluster {
        let (clock, nodes) = crate::in_process::start_nodes(size);
        let mut cluster = RealCluster {
            clock: clock.clone(),
            nodes: vec![],
            applied: vec![],
            drains: vec![],
        };
        for (node, receiver) in nodes {
            let id = node.id();
            let applied = Arc::new(AppliedIndex::default());
            let sink = applied.clone();
            // Named threads, so a profile can tell the leader's work from the followers'.
            let service = std::thread::Builder::new().name(format!("{id}-service"));
            let service = service.spawn(move || {
                // Like a service that handles what has arrived before telling the clients whose
                // commands it applied.
                while let Some(entry) = receiver.recv() {
                    let mut last = entry.index();
                    while let Some(more) = receiver.try_recv() {
                        last = more.index();
                    }
                    sink.advance_to(last);
                }
            });
            cluster
                .drains
                .push(service.expect("spawn the service thread"));
            cluster.nodes.push(node);
            cluster.applied.push(applied);
        }
        cluster
    }

    /// Waits until some node is leader and returns its position.
    pub fn leader(&self) -> usize {
        crate::in_process::wait_for_leader(&self.clock, &self.nodes)
    }

    /// Runs `clients` threads that each commit `per_client` commands through the leader.
    pub fn run(&self, clients: usize, per_client: usize) -> Run {
        let leader = self.leader();
        let sent_before = self.nodes[leader].status().sent;
        // Spawning a thread costs tens of microseconds here; spawning 8 inside the timed part
        // would charge several client-spawns to the 8-client runs and one to the 1-client runs.
        #[allow(clippy::disallowed_types)] // real threads of a real-time benchmark
        let ready = std::sync::Arc::new(std::sync::Barrier::new(clients + 1));
        let handles: Vec<_> = (0..clients)
            .map(|client| {
                let node = self.nodes[leader].clone();
                let applied = self.applied[leader].clone();
                let ready = ready.clone();
                let thread = std::thread::Builder::new().name(format!("client-{client}"));
                let spawned = thread.spawn(move || {
                    let wake = Arc::new(Condvar::new());
                    let mut latencies = Vec::with_capacity(per_client);
                    ready.wait();
                    for n in 0..per_client {
                        #[allow(clippy::disallowed_methods)]
                        let before = Instant::now();
                        let Ok((index, _)) =
                            node.start(Command::from_text(&format!("{client}-{n}")))
                        else {
                            panic!("the leader lost its leadership during the benchmark");
                        };
                        latencies.push(before.elapsed());
                        applied.wait_for(index, &wake);
                    }
                    latencies
                });
                spawned.expect("spawn a client thread")
            })
            .collect();
        ready.wait();
        #[allow(clippy::disallowed_methods)] // a real-time benchmark
        let started = Instant::now();
        let start_latencies = handles
            .into_iter()
            .flat_map(|h| h.join().expect("client"))
            .collect();
        let elapsed = started.elapsed();
        let sent_after = self.nodes[leader].status().sent;
        Run {
            elapsed,
            start_latencies,
            sent: sent_after.since(&sent_before),
        }
    }
}

impl Drop for RealCluster {
    fn drop(&mut self) {
        for node in &self.nodes {
            node.kill();
        }
        for drain in self.drains.drain(..) {
            let _ = drain.join();
        }
    }
}
