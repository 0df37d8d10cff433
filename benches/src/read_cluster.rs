//! A real-time key-value cluster in one process for the read-throughput benchmark: system
//! clock, in-process transport without delays, a key-value server on every node serving gets in
//! one read mode, and reader threads that call the leader's server directly.

use node::kv::{
    ClientId, KvObserver, KvOp, KvReply, KvRequest, KvServer, KvServerConfig, ReadMode, Seq,
};
use node::{Applied, Node, NodeId, Term};
use std::time::{Duration, Instant};
use threadsim::sync::Arc;
use threadsim::ClockRef;

/// Watches nothing: the benchmark measures, it does not check.
struct Unobserved;

impl KvObserver for Unobserved {
    fn on_applied(&self, _: NodeId, _: &Applied) {}
    fn on_local_read(&self, _: NodeId, _: Term, _: ReadMode) {}
}

/// A cluster of key-value servers.
pub struct ReadCluster {
    clock: ClockRef,
    nodes: Vec<Arc<Node>>,
    servers: Vec<Arc<KvServer>>,
}

impl ReadCluster {
    /// Starts `size` nodes serving gets in `mode`, and writes the key the readers read.
    pub fn new(size: u32, mode: ReadMode) -> ReadCluster {
        let (clock, nodes) = crate::in_process::start_nodes(size);
        let mut cluster = ReadCluster {
            clock: clock.clone(),
            nodes: vec![],
            servers: vec![],
        };
        for (node, receiver) in nodes {
            let config = KvServerConfig {
                read_mode: mode,
                ..KvServerConfig::default()
            };
            let server = KvServer::start(
                node.clone(),
                receiver,
                clock.clone(),
                config,
                Arc::new(Unobserved),
            );
            cluster.nodes.push(node);
            cluster.servers.push(Arc::new(server));
        }
        let leader = cluster.leader();
        let writer = cluster.register(leader);
        let put = KvOp::Put("k".into(), "v".into());
        while !matches!(cluster.call(leader, writer, 1, put.clone()), KvReply::Ok(_)) {
            clock.sleep(Duration::from_millis(10));
        }
        cluster
    }

    /// A client session registered through `server` (which leads).
    fn register(&self, server: usize) -> ClientId {
        loop {
            match self.servers[server].handle(KvRequest::Register) {
                Some(KvReply::Registered(client)) => return client,
                _ => self.clock.sleep(Duration::from_millis(10)),
            }
        }
    }

    /// Waits until some node leads and returns its position.
    pub fn leader(&self) -> usize {
        crate::in_process::wait_for_leader(&self.clock, &self.nodes)
    }

    fn call(&self, server: usize, client: ClientId, seq: u64, op: KvOp) -> KvReply {
        let request = KvRequest::Op {
            client,
            seq: Seq(seq),
            op,
        };
        self.servers[server]
            .handle(request)
            .unwrap_or(KvReply::Timeout)
    }

    /// `readers` threads each read the key `per_reader` times through the leader's server;
    /// returns the wall time from when all were ready to the last answer. Panics if a read fails
    /// (the leader lost its leadership: the measurement would mean nothing).
    pub fn read(self: &Arc<Self>, readers: usize, per_reader: usize) -> Duration {
        let leader = self.leader();
        #[allow(clippy::disallowed_types)] // real threads of a real-time benchmark
        let ready = std::sync::Arc::new(std::sync::Barrier::new(readers + 1));
        let handles: Vec<_> = (0..readers)
            .map(|_| {
                let cluster = self.clone();
                let ready = ready.clone();
                std::thread::spawn(move || {
                    // Reads through the log need a session; the others ignore it.
                    let client = cluster.register(leader);
                    ready.wait();
                    for n in 0..per_reader {
                        let get = KvOp::Get("k".into());
                        match cluster.call(leader, client, n as u64 + 1, get) {
                            KvReply::Ok(_) => {}
                            other => panic!("a read failed during the benchmark: {other:?}"),
                        }
                    }
                })
            })
            .collect();
        ready.wait();
        #[allow(clippy::disallowed_methods)] // a real-time benchmark
        let started = Instant::now();
        for handle in handles {
            handle.join().expect("reader");
        }
        started.elapsed()
    }
}

impl Drop for ReadCluster {
    fn drop(&mut self) {
        for server in &self.servers {
            server.kill();
        }
        for node in &self.nodes {
            node.kill();
        }
    }
}
