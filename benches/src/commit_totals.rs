//! [`CommitTotals`]: commits, wall time and AppendEntries summed over runs of a [`RealCluster`].

use crate::RealCluster;
use node::ReplicationStats;
use std::time::Duration;

/// What several runs of fresh clusters committed, how long they took and what the leaders sent.
#[derive(Clone, Copy, Debug, Default)]
pub struct CommitTotals {
    /// Wall time of the measured phases (elections excluded).
    pub elapsed: Duration,
    /// Commands committed.
    pub committed: u64,
    /// What the leaders' replicators sent, and how often they held a round for the applier.
    pub sent: ReplicationStats,
}

impl CommitTotals {
    /// Starts a fresh cluster of `nodes`, waits for its leader, and adds a run of `commits`
    /// commands split over `clients` waiting clients.
    pub fn add_run(&mut self, nodes: u32, clients: usize, commits: usize) {
        assert!(
            clients >= 1 && commits >= clients,
            "at least one command per client"
        );
        let cluster = RealCluster::new(nodes);
        cluster.leader();
        let run = cluster.run(clients, commits / clients);
        self.elapsed += run.elapsed;
        self.committed += (commits / clients * clients) as u64;
        self.sent = self.sent.plus(&run.sent);
    }

    /// Commits per second of wall time.
    pub fn rate(&self) -> f64 {
        self.committed as f64 / self.elapsed.as_secs_f64()
    }

    /// Entries per AppendEntries (0 if none was sent).
    pub fn entries_per_append(&self) -> f64 {
        self.sent.entries_per_append()
    }
}

/// Runs `pairs` times a run with `clients` clients followed by one with a single client, so
/// both see the same load from the rest of the machine; returns the two totals.
pub fn against_one(
    nodes: u32,
    clients: usize,
    commits: usize,
    pairs: usize,
) -> (CommitTotals, CommitTotals) {
    let (mut many, mut one) = (CommitTotals::default(), CommitTotals::default());
    for _ in 0..pairs {
        many.add_run(nodes, clients, commits);
        one.add_run(nodes, 1, commits);
    }
    (many, one)
}
