//! Three servers in this process over real TCP on localhost, each with its state in a real
//! file: they elect a leader and commit; the leader is stopped and the others go on; it comes
//! back from its files; every acknowledged append is in the final value exactly once, in order.

use node::kv::{Clerk, ClerkConfig, ReadMode};
use node::{LogIndex, NodeId};
use node::{Membership, MembershipChange};
use server::wire::admin::AdminRequest;
use server::{administer, free_addresses, AdminError, Server, ServerConfig, TcpKvTransport};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use threadsim::Clock;
use threadsim::{ClockRef, SystemClock};

struct Deployment {
    configs: Vec<ServerConfig>,
    servers: Vec<Option<Server>>,
    clients: BTreeMap<NodeId, SocketAddr>,
    root: PathBuf,
}

impl Deployment {
    fn start(nodes: u32, read_mode: ReadMode, name: &str) -> Deployment {
        Deployment::start_with(nodes, read_mode, name, None, None)
    }

    fn start_with(
        nodes: u32,
        read_mode: ReadMode,
        name: &str,
        snapshot_threshold: Option<usize>,
        voters: Option<BTreeSet<NodeId>>,
    ) -> Deployment {
        let root = std::env::temp_dir().join(format!("interleave-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let addresses = free_addresses(2 * nodes as usize).expect("free ports");
        let ids: Vec<NodeId> = (0..nodes).map(NodeId).collect();
        let members: BTreeMap<NodeId, SocketAddr> = ids
            .iter()
            .map(|&id| (id, addresses[id.0 as usize]))
            .collect();
        let clients: BTreeMap<NodeId, SocketAddr> = ids
            .iter()
            .map(|&id| (id, addresses[(nodes + id.0) as usize]))
            .collect();
        let cluster_key = server::tcp::ClusterKey::generate().expect("random bytes for a key");
        let admin_key = server::tcp::ClusterKey::generate().expect("random bytes for a key");
        let configs: Vec<ServerConfig> = ids
            .iter()
            .map(|&id| ServerConfig {
                id,
                members: members.clone(),
                client_address: clients[&id],
                voters: voters.clone(),
                data_dir: root.join(id.to_string()),
                cluster_key: Some(cluster_key.clone()),
                admin_key: Some(admin_key.clone()),
                read_mode,
                allow_faults: false,
                check_quorum_after: None,
                snapshot_threshold,
                storage: storage::StorageKind::default(),
                broken_write: None,
                mutations: node::MutationSet::default(),
            })
            .collect();
        let servers = configs
            .iter()
            .map(|config| Some(Server::start(config).unwrap_or_else(|error| panic!("{error}"))))
            .collect();
        Deployment {
            configs,
            servers,
            clients,
            root,
        }
    }

    fn clerk(&self) -> Clerk {
        let clock: ClockRef = Arc::new(SystemClock::new());
        Clerk::new(
            self.clients.keys().copied().collect(),
            Arc::new(TcpKvTransport::new(&self.clients)),
            clock,
            ClerkConfig::default(),
        )
    }

    fn leader(&self) -> Option<usize> {
        self.servers.iter().position(|server| {
            server
                .as_ref()
                .is_some_and(|server| server.node().state().1)
        })
    }
}

impl Drop for Deployment {
    fn drop(&mut self) {
        self.servers.clear();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[test]
fn three_servers_over_tcp_elect_commit_lose_the_leader_and_keep_every_append() {
    let mut deployment = Deployment::start(3, ReadMode::ReadIndex, "tcp-cluster");
    let mut clerk = deployment.clerk();
    let mut appended = Vec::new();
    for i in 0..20 {
        let value = format!("a{i};");
        clerk.append("k", &value, None).expect("no deadline");
        appended.push(value);
    }
    let leader = deployment.leader().expect("a leader after commits");
    deployment.servers[leader] = None;
    for i in 20..40 {
        let value = format!("a{i};");
        clerk.append("k", &value, None).expect("no deadline");
        appended.push(value);
    }
    let successor = deployment.leader().expect("a new leader");
    let restarted = Server::start(&deployment.configs[leader]).expect("it restarts from its files");
    let restored = restarted.node().status().last_log_index;
    assert!(
        restored >= LogIndex(20),
        "the restarted node's log came back with {restored:?}"
    );
    deployment.servers[leader] = Some(restarted);
    for i in 40..50 {
        let value = format!("a{i};");
        clerk.append("k", &value, None).expect("no deadline");
        appended.push(value);
    }
    assert_eq!(
        clerk.get("k", None).expect("no deadline"),
        appended.concat()
    );
    // The restarted node catches up with the leader's log over TCP.
    let status = |index: usize| {
        deployment.servers[index]
            .as_ref()
            .expect("running")
            .node()
            .status()
    };
    let mut waited = 0;
    while status(leader).last_applied < status(successor).commit_index {
        assert!(waited < 500, "the restarted node never caught up");
        SystemClock::new().sleep(Duration::from_millis(10));
        waited += 1;
    }
}

#[test]
fn with_snapshots_a_restarted_leader_catches_up_from_the_new_leaders_snapshot_and_the_log_stays_small(
) {
    const THRESHOLD: usize = 600;
    let mut deployment = Deployment::start_with(
        3,
        ReadMode::ReadIndex,
        "tcp-snapshots",
        Some(THRESHOLD),
        None,
    );
    let mut clerk = deployment.clerk();
    let mut appended = Vec::new();
    let mut append = |clerk: &mut Clerk, i: usize| {
        let value = format!("a{i};");
        clerk.append("k", &value, None).expect("no deadline");
        appended.push(value);
    };
    for i in 0..60 {
        append(&mut clerk, i);
    }
    let leader = deployment.leader().expect("a leader after commits");
    deployment.servers[leader] = None;
    for i in 60..200 {
        append(&mut clerk, i);
    }
    let successor = deployment.leader().expect("a new leader");
    let status = |deployment: &Deployment, index: usize| {
        deployment.servers[index]
            .as_ref()
            .expect("running")
            .node()
            .status()
    };
    let compacted = status(&deployment, successor).snapshot_index;
    assert!(
        compacted > LogIndex(60),
        "the new leader compacted up to {compacted:?}"
    );
    // The old leader restarts from its own snapshot and log, far behind the new snapshot.
    let restarted = Server::start(&deployment.configs[leader]).expect("it restarts from its files");
    assert!(
        restarted.node().status().snapshot_index > LogIndex(0),
        "it had compacted"
    );
    deployment.servers[leader] = Some(restarted);
    for i in 200..210 {
        append(&mut clerk, i);
    }
    assert_eq!(
        clerk.get("k", None).expect("no deadline"),
        appended.concat()
    );
    let mut waited = 0;
    while status(&deployment, leader).last_applied < status(&deployment, successor).commit_index {
        assert!(waited < 500, "the restarted node never caught up");
        SystemClock::new().sleep(Duration::from_millis(10));
        waited += 1;
    }
    assert!(
        status(&deployment, leader).snapshot_index > LogIndex(60),
        "it caught up through the new leader's snapshot"
    );
    // Every log stays compacted (what a restart reads past the snapshot is small), and every
    // server restarted from its own snapshot and log serves the same value.
    let value = appended.concat();
    for index in 0..3 {
        let kept = deployment.servers[index]
            .as_ref()
            .expect("running")
            .node()
            .log_bytes();
        assert!(
            kept < 2 * THRESHOLD + value.len() + 1024,
            "n{index}'s log holds {kept} bytes past its snapshot: it was not compacted"
        );
    }
    for server in &mut deployment.servers {
        *server = None;
    }
    for index in 0..3 {
        deployment.servers[index] =
            Some(Server::start(&deployment.configs[index]).expect("restarts"));
    }
    let mut clerk = deployment.clerk();
    assert_eq!(clerk.get("k", None).expect("no deadline"), value);
}

/// An administrator grows a cluster that started with three voters of four members, hands the
/// leadership to the newcomer, shrinks the cluster by the old leader, and is told why a change
/// that makes no sense is refused; the data written before and between stays.
#[test]
fn an_administrator_grows_shrinks_and_hands_over_a_running_cluster() {
    let first_three: BTreeSet<NodeId> = (0..3).map(NodeId).collect();
    let deployment = Deployment::start_with(
        4,
        ReadMode::ReadIndex,
        "tcp-admin",
        None,
        Some(first_three.clone()),
    );
    let patience = Duration::from_secs(20);
    // A client, and an administrator holding another cluster's administrators' key, are refused
    // by name (the latter at its handshake: no answer at all).
    let client = TcpKvTransport::new(&deployment.clients);
    let refused = administer(&client, AdminRequest::Transfer(NodeId(1)), patience);
    assert!(
        matches!(&refused, Err(server::AdminError::Refused { why, .. }) if why == server::NOT_AN_ADMINISTRATOR),
        "{refused:?}"
    );
    client.close();
    let impostor = TcpKvTransport::administering(
        &deployment.clients,
        server::tcp::ClusterKey::generate().expect("random bytes for a key"),
    );
    let refused = administer(&impostor, AdminRequest::Membership, Duration::from_secs(2));
    assert!(
        matches!(refused, Err(server::AdminError::NoLeader(_))),
        "{refused:?}"
    );
    impostor.close();
    let admin = TcpKvTransport::administering(
        &deployment.clients,
        deployment.configs[0].admin_key.clone().expect("a key"),
    );
    let ask = |request| administer(&admin, request, patience);
    let (_, start) = ask(AdminRequest::Membership).expect("a leader answers");
    assert_eq!(start, Membership::of_voters(first_three.iter().copied()));
    let mut clerk = deployment.clerk();
    clerk.append("k", "before;", None).expect("no deadline");

    let newcomer = NodeId(3);
    ask(AdminRequest::Change(MembershipChange::AddLearner(newcomer))).expect("added");
    let (_, grown) =
        ask(AdminRequest::Change(MembershipChange::Promote(newcomer))).expect("promoted");
    assert_eq!(grown.voters().len(), 4);
    ask(AdminRequest::Transfer(newcomer)).expect("handed over");
    let leads = deployment.servers[3]
        .as_ref()
        .expect("running")
        .node()
        .state()
        .1;
    let (now_leading, _) = ask(AdminRequest::Membership).expect("a leader answers");
    assert!(
        leads || now_leading == newcomer,
        "the leadership went to {now_leading}"
    );

    let (_, shrunk) =
        ask(AdminRequest::Change(MembershipChange::Remove(NodeId(0)))).expect("removed");
    assert_eq!(shrunk, Membership::of_voters((1..4).map(NodeId)));
    clerk.append("k", "after;", None).expect("no deadline");
    assert_eq!(clerk.get("k", None).expect("no deadline"), "before;after;");

    let refused = ask(AdminRequest::Change(MembershipChange::Promote(NodeId(9))));
    assert!(
        matches!(&refused, Err(AdminError::Refused { why, .. }) if why.contains("n9 is not a node")),
        "{refused:?}"
    );
    let refused = ask(AdminRequest::Transfer(NodeId(0)));
    assert!(
        matches!(&refused, Err(AdminError::Refused { why, .. }) if why.contains("not a voter")),
        "{refused:?}"
    );
    admin.close();
}
