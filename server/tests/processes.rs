//! Three `interleave-server` processes on localhost: clerks append while the leader is killed
//! with SIGKILL and started again from its files; every acknowledged append is in the final
//! value exactly once and in each clerk's order, an append whose outcome is unknown at most
//! once, and nothing else. SIGTERM then stops every server cleanly.

use lab::system::InterleaveServer;
use lab::{LinkFault, LocalCluster, LocalClusterSpec, Network, ServerProgram};
use node::kv::{Clerk, ClerkConfig};
use node::NodeId;
use server::wire::kv::ClockChange;
use server::{FaultError, TcpKvTransport};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use threadsim::{Clock, ClockRef, SystemClock};

/// A [`LocalCluster`] of `interleave-server` processes in a temporary folder of its own, removed
/// (after every server is killed) when dropped; the test helpers panic on any error.
pub struct Processes {
    cluster: Option<LocalCluster>,
    pub clients: BTreeMap<NodeId, SocketAddr>,
    pub root: PathBuf,
}

impl Processes {
    fn new(nodes: u32, name: &str, extra_args: &[&str]) -> Processes {
        Processes::start_all(nodes, name, extra_args, Network::Direct)
    }

    /// [`Processes::new`] with every node reaching every other through a `LinkProxy` of its
    /// own, so links can be cut one direction at a time.
    pub fn with_proxies(nodes: u32, name: &str, extra_args: &[&str]) -> Processes {
        Processes::start_all(nodes, name, extra_args, Network::Proxies)
    }

    fn start_all(nodes: u32, name: &str, extra_args: &[&str], network: Network) -> Processes {
        let root = std::env::temp_dir().join(format!("interleave-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let mut server_args: Vec<String> = extra_args.iter().map(|arg| arg.to_string()).collect();
        if !server_args.iter().any(|arg| arg == "--read-mode") {
            server_args.extend(["--read-mode".to_string(), "read-index".to_string()]);
        }
        let cluster = LocalCluster::start(LocalClusterSpec {
            nodes,
            system: InterleaveServer::system(
                ServerProgram {
                    program: env!("CARGO_BIN_EXE_interleave-server").into(),
                    leading_args: Vec::new(),
                },
                server_args,
            )
            .expect("random bytes for a key"),
            root: root.clone(),
            network,
            lossy_disks: false,
            seed: 0,
        })
        .expect("the cluster starts");
        Processes {
            clients: cluster.clients().clone(),
            cluster: Some(cluster),
            root,
        }
    }

    /// A transport that proves it holds the run's administrators' key (written beside the data
    /// directories), for faults.
    fn administrator(&self) -> TcpKvTransport {
        let key = server::tcp::ClusterKey::read(&self.root.join("admin.key"))
            .unwrap_or_else(|error| panic!("{error}"));
        TcpKvTransport::administering(&self.clients, key)
    }

    fn cluster(&mut self) -> &mut LocalCluster {
        self.cluster.as_mut().expect("running")
    }

    fn start(&mut self, id: NodeId) {
        self.cluster().start_node(id).expect("the server starts");
    }

    fn kill_9(&mut self, id: NodeId) {
        self.cluster().kill_9(id).expect("SIGKILL");
    }

    fn signal(&mut self, id: NodeId, signal: libc::c_int) {
        self.cluster().signal(id, signal).expect("signalled");
    }

    pub fn isolate(&mut self, node: NodeId, fault: LinkFault) {
        self.cluster
            .as_mut()
            .expect("running")
            .isolate(node, fault)
            .expect("proxies make cuts");
    }

    fn log(&self, id: NodeId) -> String {
        self.cluster.as_ref().expect("running").log(id)
    }

    /// `id`'s exit status; it must exit within `limit` (else the test fails).
    fn exit_within(&mut self, id: NodeId, limit: Duration) -> std::process::ExitStatus {
        match self.cluster().wait_for_exit(id, limit).expect("waited") {
            Some(status) => status,
            None => panic!("{id} did not exit within {limit:?}"),
        }
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        drop(self.cluster.take());
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// What one clerk did: its appends, acknowledged or of unknown outcome, in order.
struct Appends {
    acknowledged: Vec<String>,
    unknown: Vec<String>,
}

fn append_until(clerk: &mut Clerk, clock: &ClockRef, name: &str, stop: &AtomicBool) -> Appends {
    let mut appends = Appends {
        acknowledged: Vec::new(),
        unknown: Vec::new(),
    };
    let mut i = 0;
    while !stop.load(Ordering::SeqCst) {
        let value = format!("{name}.{i};");
        let deadline = clock.now() + Duration::from_secs(1);
        match clerk.append("k", &value, Some(deadline)) {
            Ok(()) => appends.acknowledged.push(value),
            Err(_) => appends.unknown.push(value),
        }
        i += 1;
    }
    appends
}

/// Checks the final value against what the clerks saw.
fn check_appends(value: &str, clerks: &[(String, Appends)]) -> Result<(), String> {
    let pieces: Vec<String> = value.split_inclusive(';').map(str::to_string).collect();
    for (name, appends) in clerks {
        let mine: Vec<&String> = pieces
            .iter()
            .filter(|piece| piece.starts_with(&format!("{name}.")))
            .collect();
        let acknowledged_seen: Vec<&String> = mine
            .iter()
            .copied()
            .filter(|piece| appends.acknowledged.contains(piece))
            .collect();
        if let Some(lost) = appends
            .acknowledged
            .iter()
            .find(|append| !acknowledged_seen.contains(append))
        {
            return Err(format!(
                "{name}: acknowledged append {lost} lost ({} of {} acknowledged appends found)",
                acknowledged_seen.len(),
                appends.acknowledged.len()
            ));
        }
        if acknowledged_seen != appends.acknowledged.iter().collect::<Vec<_>>() {
            return Err(format!("{name}: acknowledged appends out of order"));
        }
        for piece in &mine {
            let count = mine.iter().filter(|other| *other == piece).count();
            if count > 1 {
                return Err(format!("{name}: {piece} appears {count} times"));
            }
            if !appends.acknowledged.contains(piece) && !appends.unknown.contains(piece) {
                return Err(format!("{name}: {piece} was never appended"));
            }
        }
    }
    Ok(())
}

/// Runs two appending clerks on three servers while `faults` runs, then stops the clerks and
/// runs `after`; returns what the clerks saw and the final value of the key.
fn appends_under(
    processes: &mut Processes,
    faults: impl FnOnce(&mut Processes, &dyn Fn() -> Vec<NodeId>),
    after: impl FnOnce(&mut Processes),
) -> (Vec<(String, Appends)>, String) {
    let clock: ClockRef = Arc::new(SystemClock::new());
    let transport = Arc::new(TcpKvTransport::new(&processes.clients));
    let servers: Vec<NodeId> = processes.clients.keys().copied().collect();
    let clerk = || {
        Clerk::new(
            servers.clone(),
            transport.clone(),
            clock.clone(),
            ClerkConfig::default(),
        )
    };
    let stop = Arc::new(AtomicBool::new(false));
    let clerks: Vec<_> = (0..2)
        .map(|index| {
            let mut clerk = clerk();
            let (clock, stop) = (clock.clone(), stop.clone());
            std::thread::spawn(move || {
                let name = format!("c{index}");
                let appends = append_until(&mut clerk, &clock, &name, &stop);
                (name, appends)
            })
        })
        .collect();
    let leaders = || transport.leaders(Duration::from_millis(200));
    faults(processes, &leaders);
    stop.store(true, Ordering::SeqCst);
    let mut results: Vec<(String, Appends)> =
        clerks.into_iter().map(|c| c.join().unwrap()).collect();
    results.push(last_append(&servers, &transport, &clock));
    after(processes);
    let deadline = clock.now() + Duration::from_secs(10);
    let value = match clerk().get("k", Some(deadline)) {
        Ok(value) => value,
        Err(gave_up) => panic!(
            "no server answered the final read ({gave_up}); logs:\n{}",
            servers
                .iter()
                .map(|&id| processes.log(id))
                .collect::<String>()
        ),
    };
    for (name, appends) in results.iter().filter(|(name, _)| name != LAST) {
        eprintln!(
            "{name}: {} appends acknowledged, {} unknown",
            appends.acknowledged.len(),
            appends.unknown.len()
        );
        assert!(
            appends.acknowledged.len() >= 10,
            "{name} had only {} appends acknowledged",
            appends.acknowledged.len()
        );
    }
    (results, value)
}

/// The name of [`last_append`]'s clerk.
const LAST: &str = "last";

/// One more append, acknowledged, by a clerk that waits out a slow reply instead of sending its
/// request again: it is the last write every node makes before the fault that follows, so a
/// fault that loses each node's last write loses an acknowledged append. (A clerk that sends
/// again may leave a second copy after the first, and losing the copy loses nothing: a server
/// that acknowledged a write before making it then passes, as it once did in CI.)
fn last_append(
    servers: &[NodeId],
    transport: &Arc<TcpKvTransport>,
    clock: &ClockRef,
) -> (String, Appends) {
    let patient = ClerkConfig {
        call_timeout: Duration::from_secs(5),
        min_call_timeout: Duration::from_secs(5),
        ..ClerkConfig::default()
    };
    let mut clerk = Clerk::new(servers.to_vec(), transport.clone(), clock.clone(), patient);
    let value = format!("{LAST}.0;");
    let deadline = clock.now() + Duration::from_secs(20);
    if let Err(gave_up) = clerk.append("k", &value, Some(deadline)) {
        panic!("the last append was not acknowledged ({gave_up})");
    }
    let appends = Appends {
        acknowledged: vec![value],
        unknown: Vec::new(),
    };
    (LAST.to_string(), appends)
}

/// A leader other than `old` (any leader if `None`), waiting up to 10 s for one.
pub fn wait_for_leader(leaders: &dyn Fn() -> Vec<NodeId>, old: Option<NodeId>) -> NodeId {
    for _ in 0..100 {
        if let Some(&leader) = leaders().iter().find(|&&leader| Some(leader) != old) {
            return leader;
        }
        pause(100);
    }
    panic!("no leader other than {old:?} in 10 s");
}

pub fn pause(millis: u64) {
    SystemClock::new().sleep(Duration::from_millis(millis));
}

#[test]
fn a_leader_killed_with_sigkill_loses_no_acknowledged_append() {
    let mut processes = Processes::new(3, "leader-killed", &[]);
    let (results, value) = appends_under(
        &mut processes,
        |processes, leaders| {
            let old_leader = wait_for_leader(leaders, None);
            pause(500);
            processes.kill_9(old_leader);
            pause(1500);
            wait_for_leader(leaders, Some(old_leader));
            processes.start(old_leader);
            pause(1000);
            assert!(
                processes.log(old_leader).contains("role changed"),
                "the servers log their role changes"
            );
        },
        |_| {},
    );
    if let Err(error) = check_appends(&value, &results) {
        panic!("{error}");
    }
    // SIGTERM stops each server cleanly, exit status 0.
    for id in processes.clients.keys().copied().collect::<Vec<_>>() {
        processes.signal(id, libc::SIGTERM);
        let status = processes.exit_within(id, Duration::from_secs(5));
        assert!(status.success(), "{id} after SIGTERM: {status}");
    }
}

/// Kills every server at once, as a power cut would kill their processes, mid-run and again
/// once the clerks have stopped, restarting them each time.
fn whole_cluster_killed(name: &str, extra_args: &[&str]) -> Result<(), String> {
    let kill_all = |processes: &mut Processes| {
        let ids: Vec<NodeId> = processes.clients.keys().copied().collect();
        for &id in &ids {
            processes.kill_9(id);
        }
        for id in ids {
            processes.start(id);
        }
    };
    let mut processes = Processes::new(3, name, extra_args);
    let (results, value) = appends_under(
        &mut processes,
        |processes, leaders| {
            wait_for_leader(leaders, None);
            pause(500);
            kill_all(processes);
            pause(1500);
        },
        kill_all,
    );
    check_appends(&value, &results)
}

#[test]
fn a_whole_cluster_killed_at_once_loses_no_acknowledged_append() {
    whole_cluster_killed("all-killed", &[]).unwrap_or_else(|error| panic!("{error}"));
}

#[test]
fn acknowledging_a_write_before_it_is_made_loses_appends_and_is_caught() {
    let error = whole_cluster_killed("all-killed-broken", &["--broken-write", "ack-before-write"])
        .expect_err("acknowledged appends lost");
    eprintln!("{error}");
    assert!(error.contains("lost"), "{error}");
}

#[test]
fn the_check_rejects_a_lost_a_doubled_and_an_invented_append() {
    let clerks = vec![(
        "c0".to_string(),
        Appends {
            acknowledged: vec!["c0.0;".into(), "c0.1;".into()],
            unknown: vec!["c0.2;".into()],
        },
    )];
    assert!(check_appends("c0.0;c0.1;c0.2;", &clerks).is_ok());
    assert!(check_appends("c0.0;c0.1;", &clerks).is_ok());
    assert!(check_appends("c0.0;", &clerks)
        .unwrap_err()
        .contains("c0.1; lost"));
    assert!(check_appends("c0.1;c0.0;", &clerks)
        .unwrap_err()
        .contains("out of order"));
    assert!(check_appends("c0.0;c0.1;c0.2;c0.2;", &clerks)
        .unwrap_err()
        .contains("2 times"));
    assert!(check_appends("c0.0;c0.1;c0.7;", &clerks)
        .unwrap_err()
        .contains("never appended"));
}

/// Starts one server, appends once, makes its disk fail with `break_disk`, and checks that the
/// next append is not acknowledged and the server exits 1 saying why.
fn a_failing_disk_stops_the_server(
    name: &str,
    extra_args: &[&str],
    break_disk: impl FnOnce(&Processes),
) {
    let mut processes = Processes::new(1, name, extra_args);
    let clock: ClockRef = Arc::new(SystemClock::new());
    let transport = Arc::new(TcpKvTransport::new(&processes.clients));
    let mut clerk = Clerk::new(
        vec![NodeId(0)],
        transport,
        clock.clone(),
        ClerkConfig::default(),
    );
    clerk.append("k", "kept;", None).expect("a working disk");
    break_disk(&processes);
    let deadline = clock.now() + Duration::from_secs(2);
    assert!(
        clerk.append("k", "lost;", Some(deadline)).is_err(),
        "an append the node could not write was acknowledged"
    );
    let status = processes.exit_within(NodeId(0), Duration::from_secs(5));
    assert_eq!(status.code(), Some(1), "{status}");
    let log = processes.log(NodeId(0));
    assert!(
        log.contains("storage failed") || log.contains("a write to its storage failed"),
        "{log}"
    );
}

#[test]
fn a_server_whose_disk_refuses_a_write_stops_and_acknowledges_nothing() {
    // The whole-state file: each save creates `state.tmp`, which a directory can block. (The
    // log writes to a file it holds open; its disk faults come from the nemesis below, and
    // from the power-loss file system.)
    a_failing_disk_stops_the_server("failing-disk", &["--storage", "file"], |processes| {
        // The next save cannot create its file: a directory stands where it goes (a real
        // error from the file system, EISDIR, where a test without root cannot make the disk
        // fail).
        std::fs::create_dir(processes.root.join("n0").join("state.tmp")).unwrap();
    });
}

#[test]
fn a_server_whose_disk_a_nemesis_fails_stops_and_acknowledges_nothing() {
    a_failing_disk_stops_the_server("disk-fault", &["--allow-faults"], |processes| {
        // A client without the administrators' key is refused the fault, by name.
        let client = TcpKvTransport::new(&processes.clients);
        assert_eq!(
            client.fail_disk(NodeId(0), Duration::from_secs(1)),
            Err(FaultError::Refused(
                server::NOT_AN_ADMINISTRATOR.to_string()
            ))
        );
        client.close();
        processes
            .administrator()
            .fail_disk(NodeId(0), Duration::from_secs(1))
            .expect("the fault is accepted");
    });
}

#[test]
fn a_leader_cut_off_by_its_links_is_replaced_and_no_acknowledged_append_is_lost() {
    let mut processes = Processes::with_proxies(3, "partitioned", &[]);
    let (results, value) = appends_under(
        &mut processes,
        |processes, leaders| {
            let old_leader = wait_for_leader(leaders, None);
            pause(500);
            processes.isolate(old_leader, LinkFault::Cut);
            pause(1000);
            // The majority elects another leader while the old one is cut off.
            wait_for_leader(leaders, Some(old_leader));
            processes.isolate(old_leader, LinkFault::Healthy);
            pause(1000);
        },
        |_| {},
    );
    if let Err(error) = check_appends(&value, &results) {
        panic!("{error}");
    }
}

#[test]
fn a_leader_paused_with_sigstop_past_the_election_timeout_loses_no_acknowledged_append() {
    let mut processes = Processes::new(3, "leader-paused", &[]);
    let (results, value) = appends_under(
        &mut processes,
        |processes, leaders| {
            let old_leader = wait_for_leader(leaders, None);
            pause(500);
            processes.signal(old_leader, libc::SIGSTOP);
            // A paused process answers nothing, not even its status: the leader found is new.
            pause(1500);
            wait_for_leader(leaders, Some(old_leader));
            processes.signal(old_leader, libc::SIGCONT);
            pause(1000);
        },
        |_| {},
    );
    if let Err(error) = check_appends(&value, &results) {
        panic!("{error}");
    }
}

/// Clock jumps are faults safety must survive; what they do to leadership is timing: a follower's
/// jump fires its election timer (its pre-vote is refused while the others hear from the
/// leader), and a leader's jump may make it step down (by its clock no majority answered for
/// longer than its quorum timeout) or not (if an answer to a heartbeat comes first: a run on a
/// loaded machine kept its leader), so the test asserts neither.
#[test]
fn clock_jumps_on_a_follower_and_on_the_leader_lose_no_acknowledged_append() {
    let mut processes = Processes::new(3, "clock-jumps", &["--allow-faults"]);
    let transport = processes.administrator();
    let jump = |to: NodeId| {
        let change = ClockChange {
            rate_ppm: 1_000_000,
            jump: Duration::from_secs(5),
        };
        transport
            .set_clock(to, change, Duration::from_millis(500))
            .unwrap_or_else(|why| panic!("{why}"))
    };
    let (results, value) = appends_under(
        &mut processes,
        |processes, leaders| {
            let leader = wait_for_leader(leaders, None);
            pause(500);
            let follower = *processes.clients.keys().find(|&&id| id != leader).unwrap();
            let pre_votes = |processes: &Processes| {
                processes.log(follower).matches("role=PreCandidate").count()
            };
            let pre_votes_before = pre_votes(processes);
            // Vacuity: a jump reaches the node's timers. Whether one fires the election timer
            // is a race the test does not control: a heartbeat handled between the jump and the
            // ticker's next look pushes the deadline past the jumped clock (a loaded machine
            // lost it once in a clean-clone run). So the follower jumps until one fires, at
            // most five times; every jump is a fault the appends must survive.
            let term = jump(follower).term;
            pause(1000);
            for _ in 1..5 {
                if pre_votes(processes) > pre_votes_before {
                    break;
                }
                jump(follower);
                pause(1000);
            }
            assert!(
                pre_votes(processes) > pre_votes_before,
                "five jumps did not fire the follower's election timer"
            );
            jump(leader);
            pause(1500);
            let next = wait_for_leader(leaders, None);
            let next_term = transport.status(next, Duration::from_millis(500));
            eprintln!(
                "leader {leader} in {term:?} before the jumps, {next} in {next_term:?} after"
            );
        },
        |_| {},
    );
    if let Err(error) = check_appends(&value, &results) {
        panic!("{error}");
    }
}

#[test]
fn a_server_refuses_faults_unless_started_to_allow_them() {
    let processes = Processes::new(1, "faults-refused", &[]);
    let transport = processes.administrator();
    let change = ClockChange {
        rate_ppm: 500_000,
        jump: Duration::ZERO,
    };
    let mut answer = transport.set_clock(NodeId(0), change, Duration::from_millis(500));
    for _ in 0..20 {
        if !matches!(answer, Err(FaultError::NoAnswer { .. })) {
            break;
        }
        pause(100);
        answer = transport.set_clock(NodeId(0), change, Duration::from_millis(500));
    }
    let why = answer.expect_err("refused").to_string();
    assert!(why.contains("--allow-faults"), "{why}");
    let why = transport
        .fail_disk(NodeId(0), Duration::from_millis(500))
        .expect_err("refused")
        .to_string();
    assert!(why.contains("--allow-faults"), "{why}");
    let mut clerk = Clerk::new(
        vec![NodeId(0)],
        Arc::new(transport),
        Arc::new(SystemClock::new()),
        ClerkConfig::default(),
    );
    clerk
        .append("k", "written;", None)
        .expect("the disk still works");
}

#[test]
fn a_server_whose_log_reader_is_gone_goes_on_serving_and_stops_cleanly() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let root = std::env::temp_dir().join(format!("interleave-log-gone-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let config = server::local_configs(1, &root, node::kv::ReadMode::Log, None)
        .expect("free addresses")
        .remove(0);
    let node_port = config.members[&NodeId(0)];
    let mut server = Command::new(env!("CARGO_BIN_EXE_interleave-server"))
        .args(["--id", "0", "--members", &format!("0={node_port}")])
        .args(["--client-address", &config.client_address.to_string()])
        .arg("--data-dir")
        .arg(&config.data_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    // The log's reader goes away (a log pipe whose reader exited): every line the server writes
    // from now on fails. Once, the first one aborted the server.
    drop(server.stderr.take());
    let clients = BTreeMap::from([(NodeId(0), config.client_address)]);
    let clock = Arc::new(SystemClock::new());
    let mut clerk = Clerk::new(
        vec![NodeId(0)],
        Arc::new(TcpKvTransport::new(&clients)),
        clock.clone(),
        ClerkConfig::default(),
    );
    for round in 0..5 {
        // A malformed frame on the node port: the server logs a warning for each.
        if let Ok(mut stream) = std::net::TcpStream::connect(node_port) {
            let _ = stream.write_all(&[9, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        }
        let deadline = clock.now() + Duration::from_secs(10);
        clerk
            .put("k", &round.to_string(), Some(deadline))
            .expect("served with its log gone");
    }
    assert!(
        server.try_wait().expect("status").is_none(),
        "the server is still running"
    );
    // SAFETY: a signal to the child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(server.id() as i32, libc::SIGTERM) }, 0);
    let status = server.wait().expect("the server stops");
    assert!(status.success(), "SIGTERM with its log gone: {status}");
    let _ = std::fs::remove_dir_all(&root);
}
