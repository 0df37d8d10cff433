//! A soak of a real cluster under hostile clients: three `interleave-server` processes on this
//! machine (ReadIndex reads, a snapshot every 64 KiB of log), eight honest clients recording a
//! history (four writers, four readers: the nemesis's clients), and, unless `--no-hostile`,
//! hostile clients at the same time: garbage frames, 4 GiB lengths, oversized values, frames
//! that stall, idle connections past each server's limit, and frames that would hold tens of MiB
//! each. Every 30 s it prints each server's resident memory; at the end the honest operations
//! per 30 s, the honest throughput and the history's verdict. Every loop stops at the end; every
//! connection is to this machine.
//!
//! ```sh
//! cargo build --release -p server --bin interleave-server && cargo build --release -p lab --examples
//! target/release/examples/soak 600            # 10 minutes with hostile clients
//! target/release/examples/soak 120 --no-hostile
//! ```

#![allow(clippy::disallowed_methods)] // a soak of real processes runs on real time

use lab::nemesis::{Clients, Workload};
use lab::system::InterleaveServer;
use lab::system::Unreachable;
use lab::{LocalCluster, LocalClusterSpec, ServerProgram};
use models::{check_partitions, partition_by_key, CheckOptions, History, KeyValue, KvInput};
use models::{KvOutput, Verdict};
use node::kv::{ClientId, KvOp, KvRequest, KvTransport, Seq, MAX_VALUE_BYTES};
use server::tcp::{ClientProtocol, Protocol};
use server::TcpKvTransport;
use std::collections::VecDeque;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const REPORT_EVERY: Duration = Duration::from_secs(30);

fn main() -> ExitCode {
    let (seconds, hostile, server) = match arguments() {
        Ok(arguments) => arguments,
        Err(message) => {
            eprintln!("soak: {message}");
            return ExitCode::from(2);
        }
    };
    let root = std::env::temp_dir().join(format!("interleave-soak-{}", std::process::id()));
    let outcome = soak(seconds, hostile, server, &root);
    let _ = std::fs::remove_dir_all(&root);
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("soak: {message}");
            ExitCode::from(1)
        }
    }
}

/// The soak's length, whether hostile clients run, and the server program beside this one.
fn arguments() -> Result<(u64, bool, PathBuf), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (seconds, hostile) = match args.as_slice() {
        [seconds] => (seconds, true),
        [seconds, flag] if flag == "--no-hostile" => (seconds, false),
        _ => return Err("usage: soak SECONDS [--no-hostile]".into()),
    };
    let seconds = seconds
        .parse::<u64>()
        .ok()
        .filter(|s| (10..=7200).contains(s))
        .ok_or("SECONDS is 10 to 7200")?;
    let server = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("interleave-server")))
        .filter(|path| path.is_file())
        .ok_or("build the server first: cargo build --release -p server --bin interleave-server")?;
    Ok((seconds, hostile, server))
}

/// Runs the soak; whether the history was linearizable and every server stopped cleanly.
fn soak(seconds: u64, hostile: bool, server: PathBuf, root: &Path) -> Result<bool, String> {
    let mut cluster = start_cluster(server, root)?;
    let transport = Arc::new(TcpKvTransport::new(cluster.clients()));
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
    let connection = cluster.system().connect(cluster.clients());
    let clients = Clients::start(
        workload,
        &*connection,
        true,
        &Unreachable::default(),
        1,
        epoch,
    )
    .map_err(|error| format!("cannot start the clients: {error}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let attackers = if hostile {
        hostile_clients(&targets, &transport, &stop)
    } else {
        Vec::new()
    };
    println!(
        "soak: 3 servers, 8 honest clients, {} hostile threads, {seconds} s",
        attackers.len()
    );
    print_memory_until(epoch, Duration::from_secs(seconds), &pids);
    stop.store(true, Ordering::SeqCst);
    let attempts: u64 = attackers.into_iter().map(|t| t.join().unwrap_or(0)).sum();
    let history = clients.stop();
    connection.close();
    print_throughput(&history, seconds, attempts);
    let report = check_partitions(
        &KeyValue,
        partition_by_key(&history),
        &CheckOptions::default(),
    );
    println!("history: {:?}", report.verdict);
    let stopped = cluster.stop_all(Duration::from_secs(10));
    let clean = stopped
        .values()
        .all(|status| status.is_some_and(|s| s.success()));
    println!("servers stopped cleanly on SIGTERM: {clean}");
    Ok(report.verdict == Verdict::Linearizable && clean)
}

/// Three servers in `root`, with a leader elected.
fn start_cluster(server: PathBuf, root: &Path) -> Result<LocalCluster, String> {
    let cluster = LocalCluster::start(LocalClusterSpec {
        nodes: 3,
        // Snapshots every 64 KiB of log keep a save's cost flat (without them every save
        // rewrites the whole log, and throughput falls through the run whatever the clients).
        system: InterleaveServer::system(
            ServerProgram {
                program: server,
                leading_args: Vec::new(),
            },
            ["--read-mode", "read-index", "--snapshot-threshold", "65536"]
                .map(String::from)
                .to_vec(),
        )
        .expect("random bytes for a key"),
        root: root.to_path_buf(),
        network: lab::Network::Direct,
        lossy_disks: false,
        seed: 0,
    })
    .map_err(|error| format!("cannot start the cluster: {error}"))?;
    let transport = TcpKvTransport::new(cluster.clients());
    let started = Instant::now();
    while transport.leaders(Duration::from_millis(200)).is_empty() {
        if started.elapsed() > Duration::from_secs(10) {
            return Err("no leader within 10 s".into());
        }
    }
    Ok(cluster)
}

/// Prints each server's resident memory every [`REPORT_EVERY`] until `length` after `epoch`.
fn print_memory_until(epoch: Instant, length: Duration, pids: &[u32]) {
    println!("elapsed_s  server_rss_mib");
    let mut next_report = epoch + REPORT_EVERY;
    while Instant::now() < epoch + length {
        std::thread::sleep(Duration::from_millis(200));
        if Instant::now() >= next_report {
            let rss: Vec<String> = pids.iter().map(|&pid| rss_mib(pid)).collect();
            let elapsed = next_report.duration_since(epoch).as_secs();
            println!("{elapsed:>9}  {}", rss.join(" "));
            next_report += REPORT_EVERY;
        }
    }
}

/// Prints the honest operations that returned within the soak's window, per 30 s and per second
/// (the clients finish the operation under way after it).
fn print_throughput(history: &History<KvInput, KvOutput>, seconds: u64, attempts: u64) {
    let window = seconds * 1_000_000;
    let returned: Vec<u64> = (history.iter())
        .filter_map(|op| op.ret)
        .filter(|&ret| ret < window)
        .collect();
    println!("honest operations returned per 30 s:");
    for bucket in 0..seconds.div_ceil(REPORT_EVERY.as_secs()) {
        let (from, to) = (bucket * 30_000_000, (bucket + 1) * 30_000_000);
        let count = returned
            .iter()
            .filter(|&&ret| ret >= from && ret < to)
            .count();
        println!("  {:>4}-{:<4} s  {count}", bucket * 30, (bucket + 1) * 30);
    }
    let unknown = history.iter().filter(|op| op.ret.is_none()).count();
    println!(
        "honest: {} operations returned ({:.0}/s), {unknown} unknown; hostile attempts: {attempts}",
        returned.len(),
        returned.len() as f64 / seconds as f64
    );
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

/// One hostile client: called with its attempt number, every few milliseconds.
type Attack = Box<dyn Fn(usize) + Send>;

/// Starts the hostile threads; each returns how many attempts it made once `stop` is set.
fn hostile_clients(
    targets: &[(SocketAddr, SocketAddr)],
    transport: &Arc<TcpKvTransport>,
    stop: &Arc<AtomicBool>,
) -> Vec<JoinHandle<u64>> {
    let attacks: [(u64, Attack); 5] = [
        (20, garbage(targets.to_vec())),
        (50, oversized_values(transport.clone())),
        (3_000, too_many_connections(targets.to_vec())),
        (1_000, stalled_frames(targets.to_vec())),
        (2_000, memory_hogs(targets.to_vec())),
    ];
    attacks
        .into_iter()
        .map(|(pause_ms, attack)| {
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
        })
        .collect()
}

/// Garbage and 4 GiB lengths on both ports of every server.
fn garbage(targets: Vec<(SocketAddr, SocketAddr)>) -> Attack {
    Box::new(move |i| {
        let (client, rpc) = targets[i % targets.len()];
        let garbage: Vec<u8> = (0..64u32)
            .map(|b| (b.wrapping_mul(97) ^ i as u32) as u8)
            .collect();
        for address in [client, rpc] {
            send(address, &garbage);
            send(address, &u32::MAX.to_le_bytes());
        }
    })
}

/// Puts over the value limit through the real client protocol (each refused).
fn oversized_values(transport: Arc<TcpKvTransport>) -> Attack {
    let servers = transport.servers();
    Box::new(move |i| {
        let request = KvRequest::Op {
            client: ClientId(10_000),
            seq: Seq(i as u64 + 1),
            op: KvOp::Put("big".into(), "v".repeat(MAX_VALUE_BYTES + 1 + i % 1000)),
        };
        let _ = transport.call(
            servers[i % servers.len()],
            request,
            Duration::from_millis(500),
        );
    })
}

/// Connections past a client port's limit, held 2.5 s.
fn too_many_connections(targets: Vec<(SocketAddr, SocketAddr)>) -> Attack {
    Box::new(move |i| {
        let (client, _) = targets[i % targets.len()];
        let extra = ClientProtocol::LIMITS.max_connections + 20;
        let held: Vec<TcpStream> = (0..extra)
            .filter_map(|_| TcpStream::connect(client).ok())
            .collect();
        std::thread::sleep(Duration::from_millis(2_500));
        drop(held);
    })
}

/// Frames that begin and stall: held 12 s (past the client port's frame deadline), then
/// dropped.
fn stalled_frames(targets: Vec<(SocketAddr, SocketAddr)>) -> Attack {
    let stalled: Mutex<VecDeque<(Instant, TcpStream)>> = Mutex::default();
    Box::new(move |i| {
        let (client, rpc) = targets[i % targets.len()];
        let mut stalled = stalled.lock().expect("one thread");
        while (stalled.front()).is_some_and(|(since, _)| since.elapsed() > Duration::from_secs(12))
        {
            stalled.pop_front();
        }
        for address in [client, rpc] {
            if let Ok(mut stream) = TcpStream::connect(address) {
                let _ = stream.write_all(&[0, 0, 1]);
                stalled.push_back((Instant::now(), stream));
            }
        }
    })
}

/// Six frames announcing 60 MiB on a node port, 16 MiB of each sent, then dropped.
fn memory_hogs(targets: Vec<(SocketAddr, SocketAddr)>) -> Attack {
    Box::new(move |i| {
        let (_, rpc) = targets[i % targets.len()];
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
    })
}

fn send(address: SocketAddr, bytes: &[u8]) {
    if let Ok(mut stream) = TcpStream::connect(address) {
        let _ = stream.write_all(bytes);
    }
}
