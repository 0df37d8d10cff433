//! Throughput and latency of a real cluster on this machine: `nodes` servers in this process,
//! each with its state in a real file and every message on real TCP over localhost, and
//! `clients` clerks, each with one operation at a time (half gets, half appends, on 10 keys),
//! for `seconds`. Prints operations per second and the 50th and 99th percentile latencies.
//! The members authenticate each other with a cluster key, as a deployment's do;
//! `--without-cluster-key` runs them without (on loopback only), to measure what the key costs.
//!
//! ```sh
//! cargo run --release -p server --example load -- NODES READ_MODE CLIENTS SECONDS [--without-cluster-key]
//! cargo run --release -p server --example load -- 3 lease 8 10
//! ```

use node::kv::{Clerk, ClerkConfig};
use node::NodeId;
use server::{client_addresses, local_configs, Server, TcpKvTransport};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use threadsim::{ClockRef, DetRng, SystemClock};

fn usage() -> ExitCode {
    eprintln!(
        "usage: load NODES READ_MODE CLIENTS SECONDS [--without-cluster-key] (for example: load 3 lease 8 10)"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let without_key = args
        .last()
        .is_some_and(|last| last == "--without-cluster-key");
    if without_key {
        args.pop();
    }
    let [nodes, read_mode, clients, seconds] = args.as_slice() else {
        return usage();
    };
    let (Ok(nodes), Ok(read_mode), Ok(clients), Ok(seconds)) = (
        nodes.parse::<u32>(),
        node::kv::parse_read_mode(read_mode),
        clients.parse::<u64>(),
        seconds.parse::<u64>(),
    ) else {
        return usage();
    };
    if !(1..=9).contains(&nodes) || !(1..=256).contains(&clients) || !(1..=3600).contains(&seconds)
    {
        eprintln!("load: NODES 1-9, CLIENTS 1-256, SECONDS 1-3600");
        return ExitCode::from(2);
    }
    let root = std::env::temp_dir().join(format!("interleave-load-{}", std::process::id()));
    let mut configs = local_configs(nodes, &root, read_mode, None).expect("free ports");
    if without_key {
        for config in &mut configs {
            config.cluster_key = None;
        }
    }
    let client_addresses = client_addresses(&configs);
    let servers: Vec<Server> = configs
        .iter()
        .map(|config| Server::start(config).expect("the server starts"))
        .collect();
    let clock: ClockRef = Arc::new(SystemClock::new());
    let transport = Arc::new(TcpKvTransport::new(&client_addresses));
    let ids: Vec<NodeId> = client_addresses.keys().copied().collect();
    // The first operation of a clerk waits for a leader; the measurement starts after warming up.
    let mut warm = Clerk::new(
        ids.clone(),
        transport.clone(),
        clock.clone(),
        ClerkConfig::default(),
    );
    warm.append("warm", "x", None).expect("no deadline");
    let stop = Arc::new(AtomicBool::new(false));
    let started = clock.now();
    let workers: Vec<_> = (1..=clients)
        .map(|id| {
            let mut clerk = Clerk::new(
                ids.clone(),
                transport.clone(),
                clock.clone(),
                ClerkConfig::default(),
            );
            let (clock, stop) = (clock.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut rng = DetRng::new(id);
                let mut latencies = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let key = format!("k{}", rng.range_inclusive(0, 9));
                    let began = clock.now();
                    let deadline = Some(began + Duration::from_secs(5));
                    let done = if rng.chance(0.5) {
                        clerk.get(&key, deadline).map(|_| ())
                    } else {
                        clerk.append(&key, "x", deadline)
                    };
                    if done.is_ok() {
                        latencies.push(clock.now().saturating_since(began));
                    }
                }
                latencies
            })
        })
        .collect();
    clock.sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    let mut latencies: Vec<Duration> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("a clerk"))
        .collect();
    let elapsed = clock.now().saturating_since(started);
    latencies.sort();
    let percentile = |p: f64| latencies[((latencies.len() - 1) as f64 * p) as usize];
    println!(
        "{nodes} nodes, {read_mode} reads, {clients} clients, {:.1} s: {} operations, {:.0} ops/s, p50 {:.2} ms, p99 {:.2} ms",
        elapsed.as_secs_f64(),
        latencies.len(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(0.5).as_secs_f64() * 1e3,
        percentile(0.99).as_secs_f64() * 1e3,
    );
    drop(servers);
    let _ = std::fs::remove_dir_all(&root);
    ExitCode::SUCCESS
}
