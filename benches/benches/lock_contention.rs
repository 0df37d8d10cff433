//! Lock contention in the node: a 3- or 5-node cluster in one process (system clock, in-process
//! transport without artificial delays), 1, 2, 4 and 8 client threads each calling `start` on the
//! leader and waiting until its command is applied there. Criterion reports the time per
//! committed command (its inverse is commands per second); `start` latency is printed as a
//! median per configuration.
//!
//! Target: 8 waiting clients commit at least 4x the commands per second of 1, because the leader
//! batches what arrives while a round is in flight instead of one round per command.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use node::sync::{Arc, Condvar, Mutex};
use node::{
    channel, ClockRef, Command, Config, LocalNetwork, LogIndex, MemoryPersister, NoObserver, Node,
    NodeId, NodeParams, SystemClock, Workers,
};
use std::time::{Duration, Instant};

/// The highest index the leader has applied, with a condvar for clients waiting on it.
#[derive(Default)]
struct AppliedIndex {
    index: Mutex<LogIndex>,
    advanced: Condvar,
}

struct RealCluster {
    clock: ClockRef,
    nodes: Vec<Arc<Node>>,
    applied: Vec<Arc<AppliedIndex>>,
    drains: Vec<std::thread::JoinHandle<()>>,
}

impl RealCluster {
    fn new(size: u32) -> RealCluster {
        let clock: ClockRef = Arc::new(SystemClock::new());
        let network = LocalNetwork::new(clock.clone(), Duration::from_millis(5));
        let ids: Vec<NodeId> = (0..size).map(NodeId).collect();
        let mut cluster = RealCluster {
            clock: clock.clone(),
            nodes: vec![],
            applied: vec![],
            drains: vec![],
        };
        for &id in &ids {
            let (apply_sender, receiver) = channel(&clock, 1024, "apply");
            let node = Arc::new(
                Node::new(NodeParams {
                    id,
                    peers: ids.iter().copied().filter(|&p| p != id).collect(),
                    transport: network.clone(),
                    persister: Arc::new(MemoryPersister::new()),
                    clock: clock.clone(),
                    apply_sender,
                    config: Config {
                        seed: u64::from(id.0),
                        ..Config::default()
                    },
                    observer: Arc::new(NoObserver),
                    workers: Workers::ALL,
                })
                .expect("valid node"),
            );
            network.register(id, node.rpc_handler());
            let applied = Arc::new(AppliedIndex::default());
            let sink = applied.clone();
            cluster.drains.push(std::thread::spawn(move || {
                // Like a service that handles what has arrived before telling its clients:
                // one wake-up per batch, not one per entry for every waiting client.
                while let Some(entry) = receiver.recv() {
                    let mut last = entry.index;
                    while let Some(more) = receiver.try_recv() {
                        last = more.index;
                    }
                    *sink.index.lock() = last;
                    sink.advanced.notify_all();
                }
            }));
            cluster.nodes.push(node);
            cluster.applied.push(applied);
        }
        cluster
    }

    fn leader(&self) -> usize {
        loop {
            if let Some(i) = self.nodes.iter().position(|n| n.state().1) {
                return i;
            }
            self.clock.sleep(Duration::from_millis(10));
        }
    }

    /// Runs `clients` threads that each commit `per_client` commands through the leader; returns
    /// the wall time and every `start` latency.
    fn run(&self, clients: usize, per_client: usize) -> (Duration, Vec<Duration>) {
        let leader = self.leader();
        #[allow(clippy::disallowed_methods)] // a real-time benchmark
        let started = Instant::now();
        let handles: Vec<_> = (0..clients)
            .map(|client| {
                let node = self.nodes[leader].clone();
                let applied = self.applied[leader].clone();
                std::thread::spawn(move || {
                    let mut latencies = Vec::with_capacity(per_client);
                    for n in 0..per_client {
                        #[allow(clippy::disallowed_methods)]
                        let before = Instant::now();
                        let Ok((index, _)) =
                            node.start(Command::from_text(&format!("{client}-{n}")))
                        else {
                            panic!("the leader lost its leadership during the benchmark");
                        };
                        latencies.push(before.elapsed());
                        let mut applied_index = applied.index.lock();
                        while *applied_index < index {
                            applied_index = applied.advanced.wait(applied_index);
                        }
                    }
                    latencies
                })
            })
            .collect();
        let latencies = handles
            .into_iter()
            .flat_map(|h| h.join().expect("client"))
            .collect();
        (started.elapsed(), latencies)
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

fn lock_contention(c: &mut Criterion) {
    let mut group = c.benchmark_group("commit_through_leader");
    group.sample_size(10);
    for size in [3u32, 5] {
        for clients in [1usize, 2, 4, 8] {
            let per_client = 400 / clients;
            let latencies = std::sync::Mutex::new(Vec::new());
            group.throughput(Throughput::Elements((clients * per_client) as u64));
            group.bench_with_input(
                BenchmarkId::new(format!("{size}_nodes"), clients),
                &clients,
                |b, &clients| {
                    b.iter_custom(|iterations| {
                        let mut total = Duration::ZERO;
                        let (mut contended, mut acquisitions, mut waited_nanos) = (0, 0, 0);
                        for _ in 0..iterations {
                            // A fresh cluster each time, so every run starts from an empty log (the
                            // cost of persisting grows with the log); its election is not timed.
                            let cluster = RealCluster::new(size);
                            node::sync::lock_stats::reset();
                            let (elapsed, mut more) = cluster.run(clients, per_client);
                            let stats = node::sync::lock_stats::snapshot();
                            contended += stats.contended;
                            acquisitions += stats.contended + stats.uncontended;
                            waited_nanos += stats.waited_nanos;
                            total += elapsed;
                            latencies.lock().expect("not poisoned").append(&mut more);
                        }
                        if node::sync::lock_stats::ENABLED {
                            let commits = iterations * (clients * per_client) as u64;
                            eprintln!(
                                "{size} nodes, {clients} clients: {contended} of {acquisitions} lock acquisitions contended, {:.1} us waited per commit",
                                waited_nanos as f64 / 1000.0 / commits as f64
                            );
                        }
                        total
                    })
                },
            );
            let mut latencies = latencies.into_inner().expect("not poisoned");
            latencies.sort();
            if let Some(median) = latencies.get(latencies.len() / 2) {
                eprintln!("{size} nodes, {clients} clients: start() median latency {median:?}");
            }
        }
    }
    group.finish();
}

criterion_group!(benches, lock_contention);
criterion_main!(benches);
