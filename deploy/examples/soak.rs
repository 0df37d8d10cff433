//! A soak of a real cluster under hostile clients: three `interleave-server` processes on this
//! machine (ReadIndex reads, a snapshot every 64 KiB of log), eight honest clients recording a history (four writers, four readers: the nemesis's
//! clients), and, unless `--no-hostile`, hostile clients at the same time: garbage frames, 4 GiB
//! lengths, oversized values, frames that stall, idle connections past each server's limit, and
//! frames that would hold tens of MiB each. Every 30 s it prints the honest operations that
//! returned and each server's resident memory; at the end the honest throughput and the
//! history's verdict. Every loop stops at the end; every connection is to this machine.
//!
//! ```sh
//! cargo build --release -p deploy --bin interleave-server --examples
//! target/release/examples/soak 600            # 10 minutes with hostile clients
//! target/release/examples/soak 120 --no-hostile
//! ```

#![allow(clippy::disallowed_methods)] // a soak of real processes runs on real time

use deploy::nemesis::{Clients, Workload, WritersCutFrom};
use deploy::tcp::{ClientProtocol, Protocol};
use deploy::{LocalCluster, LocalClusterSpec, ServerProgram, TcpKvTransport};
use models::{check_partitions, partition_by_key, CheckOptions, KeyValue, Verdict};
use node::kv::{ClientId, KvOp, KvRequest, KvTransport, Seq, MAX_VALUE_BYTES};
use node::NodeId;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const REPORT_EVERY: Duration = Duration::from_secs(30);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (seconds, hostile) = match args.as_slice() {
        [seconds] => (seconds.parse::<u64>(), true),
        [seconds, flag] if flag == "--no-hostile" => (seconds.parse::<u64>(), false),
        _ => {
            eprintln!("usage: soak SECONDS [--no-hostile]");
            return ExitCode::from(2);
        }
    };
    let Ok(seconds @ 10..=7200) = seconds else {
        eprintln!("soak: SECONDS is 10 to 7200");
        return ExitCode::from(2);
    };
    let Some(server) = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("interleave-server")))
        .filter(|path| path.is_file())
    else {
        eprintln!(
            "soak: build the server first: cargo build --release -p deploy --bin interleave-server"
        );
        return ExitCode::from(2);
    };
    let root = std::env::temp_dir().join(format!("interleave-soak-{}", std::process::id()));
    let mut cluster = match LocalCluster::start(LocalClusterSpec {
        nodes: 3,
        server: ServerProgram {
            program: server,
            leading_args: Vec::new(),
        },
        // Snapshots every 64 KiB of log keep a save's cost flat (without them every save
        // rewrites the whole log, and throughput falls through the run whatever the clients).
        server_args: ["--read-mode", "read-index", "--snapshot-threshold", "65536"]
            .map(String::from)
            .to_vec(),
        root: root.clone(),
        proxied: false,
    }) {
        Ok(cluster) => cluster,
        Err(error) => {
            eprintln!("soak: cannot start the cluster: {error}");
            return ExitCode::from(1);
        }
    };
    let transport = Arc::new(TcpKvTransport::new(cluster.clients()));
    let started = Instant::now();
    while transport.leaders(Duration::from_millis(200)).is_empty() {
        if started.elapsed() > Duration::from_secs(10) {
            eprintln!("soak: no leader within 10 s");
            return ExitCode::from(1);
        }
    }
    let ids = cluster.ids();
    let pids: Vec<u32> = ids.iter().filter_map(|&id| cluster.pid(id)).collect();
    let targets: Vec<(SocketAddr, SocketAddr)> = ids
        .iter()
        .map(|&id| (cluster.clients()[&id], cluster.rpc_address(id)))
        .collect();
    let epoch = Instant::now();
    let workload = Workload {
        writers: 4,
        readers: 4,
        keys: 3,
    };
    let clients = match Clients::start(workload, &transport, &WritersCutFrom::default(), 1, epoch) {
        Ok(clients) => clients,
        Err(error) => {
            eprintln!("soak: cannot start the clients: {error}");
            return ExitCode::from(1);
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let attackers: Vec<std::thread::JoinHandle<u64>> = if hostile {
        hostile_clients(&targets, &transport, &stop)
    } else {
        Vec::new()
    };
    println!(
        "soak: 3 servers, 8 honest clients, {} hostile threads, {seconds} s",
        attackers.len()
    );
    println!("elapsed_s  server_rss_mib");
    let end = epoch + Duration::from_secs(seconds);
    let mut next_report = epoch + REPORT_EVERY;
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(200));
        if Instant::now() >= next_report {
            let rss: Vec<String> = pids.iter().map(|&pid| rss_mib(pid)).collect();
            println!(
                "{:>9}  {}",
                next_report.duration_since(epoch).as_secs(),
                rss.join(" ")
            );
            next_report += REPORT_EVERY;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let attacks: u64 = attackers.into_iter().map(|t| t.join().unwrap_or(0)).sum();
    let history = clients.stop();
    // Operations that returned within the soak's window (the clients finish the one under way
    // after it).
    let window = seconds * 1_000_000;
    let returned: Vec<u64> = history
        .iter()
        .filter_map(|op| op.ret)
        .filter(|&ret| ret < window)
        .collect();
    println!("honest operations returned per 30 s:");
    let buckets = seconds.div_ceil(REPORT_EVERY.as_secs());
    for bucket in 0..buckets {
        let (from, to) = (bucket * 30_000_000, (bucket + 1) * 30_000_000);
        let count = returned
            .iter()
            .filter(|&&ret| ret >= from && ret < to)
            .count();
        println!("  {:>4}-{:<4} s  {count}", bucket * 30, (bucket + 1) * 30);
    }
    let unknown = history.iter().filter(|op| op.ret.is_none()).count();
    println!(
        "honest: {} operations returned ({:.0}/s), {unknown} unknown; hostile attempts: {attacks}",
        returned.len(),
        returned.len() as f64 / seconds as f64
    );
    let report = check_partitions(
        &KeyValue,
        partition_by_key(&history),
        &CheckOptions::default(),
    );
    let verdict = report.verdict;
    println!("history: {verdict:?}");
    let stopped = cluster.stop_all(Duration::from_secs(10));
    let clean = stopped
        .values()
        .all(|status| status.is_some_and(|s| s.success()));
    println!("servers stopped cleanly on SIGTERM: {clean}");
    let _ = std::fs::remove_dir_all(&root);
    if verdict == Verdict::Linearizable && clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn rss_mib(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.split_whitespace().next()?.parse::<u64>().ok())
        .map_or_else(
            || "?".to_string(),
            |kib| format!("{:.1}", kib as f64 / 1024.0),
        )
}

/// Starts the hostile threads; each returns how many attempts it made.
fn hostile_clients(
    targets: &[(SocketAddr, SocketAddr)],
    transport: &Arc<TcpKvTransport>,
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<u64>> {
    let mut threads = Vec::new();
    let targets = targets.to_vec();
    let every = |pause_ms: u64, attack: Box<dyn Fn(usize) + Send>| {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut attempts = 0;
            while !stop.load(Ordering::SeqCst) {
                attack(attempts as usize);
                attempts += 1;
                std::thread::sleep(Duration::from_millis(pause_ms));
            }
            attempts
        })
    };
    // Garbage and 4 GiB lengths on both ports of every server.
    let t = targets.clone();
    threads.push(every(
        20,
        Box::new(move |i| {
            let (client, rpc) = t[i % t.len()];
            let garbage: Vec<u8> = (0..64u32)
                .map(|b| (b.wrapping_mul(97) ^ i as u32) as u8)
                .collect();
            for address in [client, rpc] {
                send(address, &garbage);
                send(address, &u32::MAX.to_le_bytes());
            }
        }),
    ));
    // Oversized values through the real client protocol (refused), and a 2 MB put frame.
    let t2 = transport.clone();
    let servers: Vec<NodeId> = t2.servers();
    threads.push(every(
        50,
        Box::new(move |i| {
            let request = KvRequest {
                client: ClientId(10_000),
                seq: Seq(i as u64 + 1),
                op: KvOp::Put("big".into(), "v".repeat(MAX_VALUE_BYTES + 1 + i % 1000)),
            };
            let _ = t2.call(
                servers[i % servers.len()],
                request,
                Duration::from_millis(500),
            );
        }),
    ));
    // Connections past each client port's limit, held open, renewed every few seconds.
    let t = targets.clone();
    threads.push(every(
        3_000,
        Box::new(move |i| {
            let (client, _) = t[i % t.len()];
            let extra = ClientProtocol::LIMITS.max_connections + 20;
            let held: Vec<TcpStream> = (0..extra)
                .filter_map(|_| TcpStream::connect(client).ok())
                .collect();
            std::thread::sleep(Duration::from_millis(2_500));
            drop(held);
        }),
    ));
    // Frames that begin and stall: held 12 s (past the client port's frame deadline), then
    // dropped.
    let t = targets.clone();
    let stalled = std::sync::Mutex::new(std::collections::VecDeque::new());
    threads.push(every(
        1_000,
        Box::new(move |i| {
            let (client, rpc) = t[i % t.len()];
            let mut stalled = stalled.lock().expect("one thread");
            while stalled
                .front()
                .is_some_and(|(since, _): &(Instant, TcpStream)| {
                    since.elapsed() > Duration::from_secs(12)
                })
            {
                stalled.pop_front();
            }
            for address in [client, rpc] {
                if let Ok(mut stream) = TcpStream::connect(address) {
                    let _ = stream.write_all(&[0, 0, 1]);
                    stalled.push_back((Instant::now(), stream));
                }
            }
        }),
    ));
    // Memory hogs: frames announcing 60 MiB on a node port, 16 MiB sent, then dropped.
    let t = targets;
    threads.push(every(
        2_000,
        Box::new(move |i| {
            let (_, rpc) = t[i % t.len()];
            let chunk = vec![0u8; 1 << 20];
            let mut hogs = Vec::new();
            for _ in 0..6 {
                if let Ok(mut stream) = TcpStream::connect(rpc) {
                    let _ = stream.write_all(&(60u32 << 20).to_le_bytes());
                    for _ in 0..16 {
                        if stream.write_all(&chunk).is_err() {
                            break;
                        }
                    }
                    hogs.push(stream);
                }
            }
            drop(hogs);
        }),
    ));
    threads
}

fn send(address: SocketAddr, bytes: &[u8]) {
    if let Ok(mut stream) = TcpStream::connect(address) {
        let _ = stream.write_all(bytes);
    }
}
