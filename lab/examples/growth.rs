//! How a real cluster's storage, restart time and throughput grow with the length of a run,
//! with and without snapshots, for each way of storing the state: 3 servers in this process,
//! each with its state in real files and every message on real TCP over localhost; 8 clerks put
//! 32-byte values on 1,000 keys (so the state stays the same size while the log grows). At 1k,
//! 10k and 100k commands (those up to COMMANDS) it prints the largest data directory and how
//! long a follower takes to restart from its files and catch up with the leader; at the end,
//! the throughput of the first and the last 10k commands, and for the log the writes per fsync
//! on the leader. STORAGE is wal, file or both (one after the other, in one run). SYNC_MS puts
//! every data directory on a lossy disk (`lab::lossy_fs`, root and FUSE) whose syncs take that
//! many milliseconds, to see group commit on a disk slower to sync than this machine's.
//!
//! ```sh
//! cargo run --release -p lab --example growth -- COMMANDS THRESHOLD|off [wal|file|both] [SYNC_MS]
//! cargo run --release -p lab --example growth -- 100000 off both
//! cargo run --release -p lab --example growth -- 100000 1048576 wal
//! cargo run --release -p lab --example growth -- 20000 1048576 wal 1
//! ```

use lab::lossy_fs::LossyMount;
use node::kv::{Clerk, ClerkConfig, ReadMode};
use node::NodeId;
use server::{client_addresses, local_configs, Server, ServerConfig, TcpKvTransport};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use storage::{Storage, StorageKind};
use threadsim::{ClockRef, SystemClock};

const NODES: u32 = 3;
const CLIENTS: u64 = 8;
const KEYS: u64 = 1000;
const CHECKPOINTS: [u64; 3] = [1_000, 10_000, 100_000];
const WINDOW: u64 = 10_000;

fn usage() -> ExitCode {
    eprintln!(
        "usage: growth COMMANDS THRESHOLD|off [wal|file|both] [SYNC_MS] (COMMANDS 1000-1000000, \
         THRESHOLD 256-1073741824 bytes, storage both unless named, SYNC_MS 1-100 for lossy disks \
         whose syncs take that long; for example: growth 100000 off both)"
    );
    ExitCode::from(2)
}

struct Cluster {
    root: PathBuf,
    configs: Vec<ServerConfig>,
    servers: Vec<Server>,
    transport: Arc<TcpKvTransport>,
    ids: Vec<NodeId>,
    clock: ClockRef,
    /// With SYNC_MS: each server's lossy disk, unmounted after the servers stop.
    disks: Vec<LossyMount>,
}

impl Cluster {
    fn start(threshold: Option<usize>, storage: StorageKind, sync: Option<Duration>) -> Cluster {
        let root = std::env::temp_dir().join(format!(
            "interleave-growth-{}-{}",
            std::process::id(),
            storage.name()
        ));
        let mut configs =
            local_configs(NODES, &root, ReadMode::Log, threshold).expect("free ports");
        for config in &mut configs {
            config.storage = storage;
        }
        let disks = match sync {
            None => Vec::new(),
            Some(latency) => configs
                .iter()
                .map(|config| {
                    let disk = LossyMount::mount(&config.data_dir).expect("a lossy disk");
                    disk.set_sync_latency(latency);
                    disk
                })
                .collect(),
        };
        let client_addresses = client_addresses(&configs);
        let servers = configs
            .iter()
            .map(|config| Server::start(config).expect("the server starts"))
            .collect();
        Cluster {
            root,
            configs,
            servers,
            transport: Arc::new(TcpKvTransport::new(&client_addresses)),
            ids: client_addresses.keys().copied().collect(),
            clock: Arc::new(SystemClock::new()),
            disks,
        }
    }

    fn clerk(&self) -> Clerk {
        Clerk::new(
            self.ids.clone(),
            self.transport.clone(),
            self.clock.clone(),
            ClerkConfig::default(),
        )
    }

    /// `count` puts spread over the clerks, each with one at a time; returns how long each
    /// took.
    fn put(&self, first: u64, count: u64) -> Vec<Duration> {
        let workers: Vec<_> = (0..CLIENTS)
            .map(|client| {
                let mut clerk = self.clerk();
                std::thread::spawn(move || {
                    let mut latencies = Vec::new();
                    for n in (first + client..first + count).step_by(CLIENTS as usize) {
                        let key = format!("k{}", n % KEYS);
                        let value = format!("{n:032}");
                        #[allow(clippy::disallowed_methods)] // a real-time measurement
                        let started = Instant::now();
                        clerk.put(&key, &value, None).expect("no deadline");
                        latencies.push(started.elapsed());
                    }
                    latencies
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("a clerk"))
            .collect()
    }

    fn leader(&self) -> usize {
        loop {
            if let Some(leader) = self
                .servers
                .iter()
                .position(|server| server.node().state().1)
            {
                return leader;
            }
            self.clock.sleep(Duration::from_millis(10));
        }
    }

    /// The largest data directory, in bytes.
    fn largest_data_dir(&self) -> u64 {
        self.configs
            .iter()
            .map(|config| {
                std::fs::read_dir(&config.data_dir)
                    .map(|files| {
                        files
                            .filter_map(|file| file.ok()?.metadata().ok())
                            .map(|meta| meta.len())
                            .sum()
                    })
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0)
    }

    /// Stops a follower, starts it again from its files and waits until it has applied what
    /// the leader had committed; returns how long the start took (reading and decoding its
    /// file), and how long until it had caught up (its service restored the snapshot and
    /// applied the log after it, once a heartbeat told it the commit index).
    fn restart_a_follower(&mut self) -> (Duration, Duration) {
        let leader = self.leader();
        let follower = (leader + 1) % NODES as usize;
        let target = self.servers[leader].node().status().commit_index;
        // Stopped and dropped first: its data directory stays locked while it exists.
        self.servers.remove(follower).stop();
        #[allow(clippy::disallowed_methods)] // a real-time measurement
        let started = Instant::now();
        let restarted = Server::start(&self.configs[follower]).expect("the follower restarts");
        self.servers.insert(follower, restarted);
        let start = started.elapsed();
        while self.servers[follower].node().status().last_applied < target {
            self.clock.sleep(Duration::from_micros(200));
        }
        (start, started.elapsed())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for server in &mut self.servers {
            server.stop();
        }
        self.disks.clear();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(commands), Some(threshold), None) = (args.first(), args.get(1), args.get(4)) else {
        return usage();
    };
    let Ok(commands) = commands.parse::<u64>() else {
        return usage();
    };
    let threshold = match threshold.as_str() {
        "off" => None,
        bytes => match bytes.parse::<usize>() {
            Ok(bytes) if (256..=1 << 30).contains(&bytes) => Some(bytes),
            _ => return usage(),
        },
    };
    if !(1_000..=1_000_000).contains(&commands) {
        return usage();
    }
    let storages: &[StorageKind] = match args.get(2).map(String::as_str) {
        None | Some("both") => &[StorageKind::StateFile, StorageKind::Wal],
        Some("wal") => &[StorageKind::Wal],
        Some("file") => &[StorageKind::StateFile],
        Some(_) => return usage(),
    };
    let sync = match args.get(3).map(|ms| ms.parse::<u64>()) {
        None => None,
        Some(Ok(ms)) if (1..=100).contains(&ms) => Some(Duration::from_millis(ms)),
        Some(_) => return usage(),
    };
    if let (Some(_), Err(why)) = (sync, lab::lossy_fs::available()) {
        eprintln!("growth: SYNC_MS needs the lossy file system, and {why}");
        return ExitCode::from(2);
    }
    for &storage in storages {
        run(commands, threshold, storage, sync);
    }
    ExitCode::SUCCESS
}

/// One run of COMMANDS puts on a fresh cluster storing its state in `storage`.
fn run(commands: u64, threshold: Option<usize>, storage: StorageKind, sync: Option<Duration>) {
    let mut cluster = Cluster::start(threshold, storage, sync);
    cluster.clerk().put("warm", "x", None).expect("no deadline");
    let snapshots = threshold.map_or("off".to_string(), |bytes| format!("every {bytes} bytes"));
    let disks = sync.map_or("real files".to_string(), |latency| {
        format!("lossy disks whose syncs take {latency:?}")
    });
    println!(
        "storage {}: 3 nodes, {disks} and TCP, 8 clerks, puts of 32 bytes on 1,000 keys, snapshots {snapshots}",
        storage.name()
    );
    println!("| commands | largest data directory | log entries kept | restart: start | restart: caught up |");
    println!("| --- | --- | --- | --- | --- |");
    let mut done = 0;
    // (first command, commands, time) of each batch of puts.
    let mut batches: Vec<(u64, u64, Duration, Vec<Duration>)> = Vec::new();
    let checkpoints: Vec<u64> = CHECKPOINTS
        .into_iter()
        .filter(|&at| at <= commands)
        .chain((!CHECKPOINTS.contains(&commands)).then_some(commands))
        .collect();
    for &checkpoint in &checkpoints {
        while done < checkpoint {
            let count = (checkpoint - done).min(WINDOW);
            #[allow(clippy::disallowed_methods)] // a real-time measurement
            let started = Instant::now();
            let latencies = cluster.put(done, count);
            batches.push((done, count, started.elapsed(), latencies));
            done += count;
        }
        let bytes = cluster.largest_data_dir();
        let leader = cluster.leader();
        let status = cluster.servers[leader].node().status();
        let kept = status.last_log_index.0 - status.snapshot_index.0;
        let (start, caught_up) = cluster.restart_a_follower();
        println!(
            "| {checkpoint} | {} KiB | {kept} | {:.1} ms | {:.1} ms |",
            bytes.div_ceil(1024),
            start.as_secs_f64() * 1e3,
            caught_up.as_secs_f64() * 1e3
        );
    }
    type Batch = (u64, u64, Duration, Vec<Duration>);
    let rate = |batches: &[&Batch]| {
        let count: u64 = batches.iter().map(|batch| batch.1).sum();
        let time: Duration = batches.iter().map(|batch| batch.2).sum();
        (count, count as f64 / time.as_secs_f64())
    };
    let first: Vec<_> = batches.iter().filter(|batch| batch.0 < WINDOW).collect();
    let last: Vec<_> = batches.iter().rev().take(1).collect();
    let ((first_count, first_rate), (last_count, last_rate)) = (rate(&first), rate(&last));
    let latency = |batches: &[&Batch]| {
        let mut all: Vec<Duration> = batches.iter().flat_map(|batch| batch.3.clone()).collect();
        all.sort_unstable();
        let at =
            |fraction: f64| all[((all.len() - 1) as f64 * fraction) as usize].as_secs_f64() * 1e3;
        format!("p50 {:.2} ms, p99 {:.2} ms", at(0.5), at(0.99))
    };
    println!(
        "throughput: the first {first_count} commands {first_rate:.0}/s ({}), the last {last_count} {last_rate:.0}/s ({})",
        latency(&first),
        latency(&last)
    );
    let leader = cluster.leader();
    if let Storage::Wal(wal) = cluster.servers[leader].storage() {
        let stats = wal.stats();
        println!(
            "the leader's log since its last start: {} writes, {} fsyncs ({:.1} writes per fsync), {} commands applied",
            stats.group.writes,
            stats.group.syncs,
            stats.group.writes as f64 / stats.group.syncs.max(1) as f64,
            cluster.servers[leader].node().status().last_applied
        );
        let sent = cluster.servers[leader].node().status().sent;
        println!(
            "its AppendEntries with entries: {} carrying {} ({:.1} entries each)",
            sent.appends,
            sent.entries,
            sent.entries_per_append()
        );
    }
    for (id, server) in cluster.servers.iter().enumerate() {
        if let (true, Storage::Wal(wal)) = (id != leader, server.storage()) {
            let stats = wal.stats();
            println!(
                "follower n{id}'s log since its last start: {} writes, {} fsyncs",
                stats.group.writes, stats.group.syncs
            );
        }
    }
    println!();
}
