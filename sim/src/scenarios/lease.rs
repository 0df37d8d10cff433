//! A lease must end with the leadership (Raft thesis §6.4.1). A leader's lease is safe because
//! every follower that acknowledged it refuses to vote for a successor until the lease is over;
//! the leader's own vote is part of that majority, and once it steps down it votes freely. So a
//! node deposed without an election, by a term that rose on its own (a node cut off and
//! campaigning, as it does where pre-vote is off), can vote a successor in while its
//! old lease still runs: if it keeps serving reads from that lease it serves stale ones.

use crate::cluster::{Cluster, ClusterConfig};
use crate::runner::Sim;
use node::kv::{ClientId, KvOp, KvReply, KvRequest, KvResult, KvServerConfig, ReadMode, Seq};
use node::{Mutation, MutationSet, NodeId};
use std::time::Duration;

/// How often the scenario looks at the cluster while it waits for a step.
const POLL: Duration = Duration::from_millis(2);

/// The longest the scenario waits for each step before it gives up (and passes: no evidence).
const STEP_LIMIT: Duration = Duration::from_secs(5);

/// Three nodes without pre-vote, reading by lease. A follower `c` is cut off until its term
/// rises; the cut heals shortly before `c` campaigns again; the leader `l` learns the higher
/// term from `c` and steps down while its lease still runs, then votes `c` in. At once `l` is cut
/// off, `c` commits a new value with the third node, and `l` is asked for it: a correct node
/// refuses (it no longer leads), a node that kept its lease answers the old value. Panics with
/// "stale read" on that answer.
pub fn lease_after_a_step_down(sim: &Sim, mutations: &MutationSet) {
    let mut config = ClusterConfig::new(3);
    config.node.mutations = mutations.clone().with(Mutation::NoPreVote);
    // Long timeouts, so that the campaigner's next election (every 1-1.05 s) mostly falls
    // within the deposed leader's lease (0.82 s at the default drift bound).
    (config.node).set_election_timeouts(Duration::from_millis(1000), Duration::from_millis(1050));
    config.kv = Some(KvServerConfig {
        read_mode: ReadMode::Lease,
        mutations: config.node.mutations.clone(),
        ..KvServerConfig::default()
    });
    let cluster = Cluster::new(sim, config);
    let mut client = Client::new();
    let leader = cluster.check_one_leader();
    let Some(_) = client.put_until_done(&cluster, leader, "old") else {
        return cluster.shutdown();
    };
    let others = cluster.others(leader);
    let (campaigner, third) = (others[0], others[1]);
    cluster.partition(&[vec![leader, third], vec![campaigner]]);
    let leader_term = cluster.state(leader).map(|(term, _)| term);
    let risen = wait_for(&cluster, || {
        cluster.state(campaigner).map(|(term, _)| term) > leader_term
    });
    // Its next campaign comes one election timeout after this one: heal most of the way there,
    // so that it comes soon after the leader has stepped down, within the leader's lease.
    cluster.sleep(Duration::from_millis(700));
    cluster.heal();
    // The leader hears the higher term and steps down; then one of the two wins an election.
    let stepped_down = wait_for(&cluster, || !leads(&cluster, leader));
    let decided = wait_for(&cluster, || {
        leads(&cluster, campaigner) || leads(&cluster, leader)
    });
    if !risen || !stepped_down || !decided || !leads(&cluster, campaigner) {
        return cluster.shutdown();
    }
    cluster.partition(&[vec![leader], vec![campaigner, third]]);
    if client.put_until_done(&cluster, campaigner, "new").is_none() {
        return cluster.shutdown();
    }
    if let Some(KvReply::Ok(KvResult::Value(value))) = client.get(&cluster, leader) {
        if value == "old" {
            panic!(
                "stale read: {leader} stepped down, voted {campaigner} in, and served the \
                 value {campaigner} had since overwritten"
            );
        }
    }
    cluster.shutdown();
}

fn leads(cluster: &Cluster, node: NodeId) -> bool {
    cluster.state(node).is_some_and(|(_, leads)| leads)
}

/// Polls `condition` every [`POLL`] for at most [`STEP_LIMIT`]; returns whether it held.
fn wait_for(cluster: &Cluster, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = cluster.clock().now() + STEP_LIMIT;
    while cluster.clock().now() < deadline {
        if condition() {
            return true;
        }
        cluster.sleep(POLL);
    }
    false
}

/// A client that talks to one server's handler directly (no network in between).
struct Client {
    /// Its session, once registered.
    id: Option<ClientId>,
    next_seq: u64,
}

impl Client {
    fn new() -> Client {
        Client {
            id: None,
            next_seq: 1,
        }
    }

    /// Sends `op` to `server`, registering there first if the client has no session (the
    /// registration's answer is returned if it is not one).
    fn call(&mut self, cluster: &Cluster, server: NodeId, op: KvOp) -> Option<KvReply> {
        let server = cluster.kv_server(server)?;
        let client = match self.id {
            Some(client) => client,
            None => match server.handle(KvRequest::Register)? {
                KvReply::Registered(client) => *self.id.insert(client),
                other => return Some(other),
            },
        };
        let request = KvRequest::Op {
            client,
            seq: Seq(self.next_seq),
            op,
        };
        self.next_seq += 1;
        server.handle(request)
    }

    /// Puts `value` under the scenario's key through `server` until it is applied (None if it
    /// never is within the step limit).
    fn put_until_done(&mut self, cluster: &Cluster, server: NodeId, value: &str) -> Option<()> {
        let mut done = false;
        wait_for(cluster, || {
            let op = KvOp::Put(KEY.into(), value.into());
            done = matches!(self.call(cluster, server, op), Some(KvReply::Ok(_)));
            done
        });
        done.then_some(())
    }

    fn get(&mut self, cluster: &Cluster, server: NodeId) -> Option<KvReply> {
        self.call(cluster, server, KvOp::Get(KEY.into()))
    }
}

const KEY: &str = "k";
