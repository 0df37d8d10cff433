//! Snapshots and log compaction, after the 6.5840 labs' tests of Raft (3D) and of the key-value
//! service (4B). Every invariant runs throughout (snapshot agreement, in-order apply, Log
//! Matching and Leader Completeness across compacted logs); each test also checks that the
//! stored log stays under the threshold and that the snapshots it is about really happened.

use crate::support::{cmd, SEEDS};
use node::kv::{ClerkConfig, KvServerConfig, ReadMode};
use node::persist::PersistentState;
use node::{LogIndex, NodeId, Persister};
use sim::kv_workload::{new_clerk, simulate_kv};
use sim::ClusterSettings;
use sim::{check_kv_history, run_seeds, Cluster, ClusterConfig, KvWorkloadConfig};
use std::time::Duration;
use threadsim::sync::Arc;

/// A dozen or so of the tests' small entries (the labs snapshot every ten).
const THRESHOLD: usize = 256;

fn snapshotting(nodes: usize, unreliable: bool) -> ClusterConfig {
    let mut config = ClusterConfig::new(nodes);
    config.net.unreliable = unreliable;
    config.snapshot_threshold = Some(THRESHOLD);
    config
}

/// What to do to a follower (or, one time in three, the leader) each round.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Victim {
    Untouched,
    Disconnected,
    Crashed,
}

/// The labs' `snapcommon`: 30 rounds; each cuts off or crashes a victim, commits a dozen
/// entries without it, the leader compacts past them, and the victim comes back and must catch
/// up (through an InstallSnapshot when its next entries are compacted).
fn snapshot_rounds(test: &'static str, victim_fate: Victim, unreliable: bool) {
    snapshot_rounds_with(test, victim_fate, snapshotting(3, unreliable));
}

fn snapshot_rounds_with(test: &'static str, victim_fate: Victim, config: ClusterConfig) {
    run_seeds(test, SEEDS, move |sim| {
        let cluster = Cluster::new(sim, config.clone());
        let mut value = 0;
        let mut next = || {
            value += 1;
            cmd(value)
        };
        cluster.one(next(), 3, true);
        let mut leader = cluster.check_one_leader();
        for round in 0..30 {
            let (mut victim, mut sender) = (NodeId((leader.0 + 1) % 3), leader);
            if round % 3 == 1 {
                (victim, sender) = (sender, victim);
            }
            match victim_fate {
                Victim::Untouched => {}
                Victim::Disconnected => cluster.disconnect(victim),
                Victim::Crashed => cluster.crash(victim),
            }
            let without_victim = if victim_fate == Victim::Untouched {
                3
            } else {
                2
            };
            if victim_fate != Victim::Untouched {
                cluster.one(next(), without_victim, true);
            }
            for _ in 0..11 {
                cluster.start(sender, next());
            }
            cluster.one(next(), without_victim, true);
            match victim_fate {
                Victim::Untouched => {}
                Victim::Disconnected => cluster.connect(victim),
                Victim::Crashed => cluster.restart(victim).expect("restart"),
            }
            cluster.one(next(), 3, true);
            leader = cluster.check_one_leader();
        }
        cluster.check_log_bounded(THRESHOLD);
        let observed = cluster.invariants().observed();
        assert!(observed.snapshots_taken >= 30, "{observed:?}");
        match victim_fate {
            Victim::Untouched => {}
            Victim::Disconnected => assert!(observed.snapshots_installed >= 5, "{observed:?}"),
            Victim::Crashed => assert!(
                observed.snapshots_installed + observed.snapshots_restored >= 5,
                "{observed:?}"
            ),
        }
        cluster.shutdown();
    });
}

#[test]
fn basic_every_node_compacts_and_stays_under_the_threshold() {
    snapshot_rounds("snapshots::basic", Victim::Untouched, false);
}

#[test]
fn install_a_follower_cut_off_catches_up_through_a_snapshot() {
    snapshot_rounds("snapshots::install", Victim::Disconnected, false);
}

#[test]
fn install_unreliable() {
    snapshot_rounds("snapshots::install_unreliable", Victim::Disconnected, true);
}

#[test]
fn install_unreliable_in_chunks_of_four_bytes() {
    // The checking service's 16-byte snapshots go in four chunks (and entries one a message),
    // any of which the network may lose: the follower must assemble them and catch up.
    let mut config = snapshotting(3, true);
    config.node.max_bytes_per_append = 4;
    snapshot_rounds_with("snapshots::install_in_chunks", Victim::Disconnected, config);
}

#[test]
fn install_crash_a_restarted_follower_restores_its_snapshot_and_catches_up() {
    snapshot_rounds("snapshots::install_crash", Victim::Crashed, false);
}

#[test]
fn install_uncrash_unreliable() {
    snapshot_rounds(
        "snapshots::install_uncrash_unreliable",
        Victim::Crashed,
        true,
    );
}

/// The labs' `TestSnapshotAllCrash3D`: every node crashes after a dozen entries, five times;
/// each time the cluster comes back from its snapshots and goes on past the last index.
#[test]
fn all_crash_the_cluster_comes_back_from_its_snapshots() {
    run_seeds("snapshots::all_crash", SEEDS, |sim| {
        let cluster = Cluster::new(sim, snapshotting(3, false));
        let mut value = 0;
        for _ in 0..5 {
            for _ in 0..12 {
                value += 1;
                cluster.one(cmd(value), 3, true);
            }
            value += 1;
            let before = cluster.one(cmd(value), 3, true);
            for id in cluster.ids() {
                cluster.crash(id);
            }
            for id in cluster.ids() {
                cluster.restart(id).expect("restart");
            }
            value += 1;
            let after = cluster.one(cmd(value), 3, true);
            assert!(after > before, "index went from {before} to {after}");
        }
        let observed = cluster.invariants().observed();
        assert!(observed.snapshots_restored >= 10, "{observed:?}");
        cluster.shutdown();
    });
}

/// The labs' `TestSnapshotInit3D`: a node restarted from a snapshot starts applying after it
/// (restored twice in a row, with one entry written between).
#[test]
fn init_a_node_restarted_from_a_snapshot_applies_after_it() {
    run_seeds("snapshots::init", SEEDS, |sim| {
        let cluster = Cluster::new(sim, snapshotting(3, false));
        let mut last = LogIndex(0);
        for value in 1..=30 {
            last = cluster.one(cmd(value), 3, true);
        }
        for value in [31, 32] {
            // The services take the snapshots their last entries call for, then every node
            // crashes.
            cluster.sleep(Duration::from_millis(100));
            for id in cluster.ids() {
                cluster.crash(id);
            }
            for id in cluster.ids() {
                cluster.restart(id).expect("restart");
            }
            let index = cluster.one(cmd(value), 3, true);
            assert!(index > last, "index went from {last} to {index}");
            last = index;
        }
        let observed = cluster.invariants().observed();
        assert!(observed.snapshots_restored >= 6, "{observed:?}");
        cluster.shutdown();
    });
}

/// The labs' `TestSnapshotSize4B`: 200 rounds of put and get on one key with a 1000-byte
/// threshold; the stored log stays under it and the snapshot holds one key and one session.
#[test]
fn kv_snapshot_size_the_stored_state_stays_small() {
    const KV_THRESHOLD: usize = 1000;
    run_seeds("snapshots::kv_snapshot_size", SEEDS, |sim| {
        let mut config = ClusterConfig::new(3);
        config.kv = Some(KvServerConfig::default());
        config.snapshot_threshold = Some(KV_THRESHOLD);
        let cluster = Arc::new(Cluster::new(sim, config));
        let mut clerk = new_clerk(&cluster, 0, ClerkConfig::default());
        for _ in 0..200 {
            for value in ["0", "1"] {
                clerk.put("x", value, None).expect("no deadline");
                assert_eq!(clerk.get("x", None).expect("no deadline"), value);
            }
        }
        cluster.check_log_bounded(KV_THRESHOLD);
        for id in cluster.ids() {
            let stored = cluster.disk(id).load().expect("readable").expect("written");
            let state = PersistentState::decode(&stored).expect("a valid state");
            assert!(
                state.snapshot.len() < 500,
                "{id}'s snapshot takes {} bytes",
                state.snapshot.len()
            );
            assert!(
                stored.len() <= KV_THRESHOLD + state.snapshot.len(),
                "{id} stores {} bytes",
                stored.len()
            );
        }
        assert!(cluster.invariants().observed().snapshots_taken >= 3);
        cluster.shutdown();
    });
}

/// The labs' `TestSnapshotUnreliableRecoverConcurrentPartitionLinearizable4B`, and the rest of
/// 4B's snapshot tests with it: many clients, message loss, crashes and restarts, the leader cut
/// off with clients on its side, snapshots every 1024 bytes of log; the history must be
/// linearizable, and followers and restarted nodes must have caught up through snapshots.
#[test]
fn kv_unreliable_recover_concurrent_partitions_linearizable() {
    let config = KvWorkloadConfig {
        cluster: ClusterSettings {
            snapshot_threshold: Some(1024),
            ..ClusterSettings::default()
        },
        read_mode: ReadMode::Log,
        ..KvWorkloadConfig::default()
    };
    for &seed in SEEDS {
        let run = simulate_kv(seed, &config)
            .unwrap_or_else(|failure| panic!("seed {seed}: {}", failure.message));
        assert!(
            run.figures.crashes > 0 && run.figures.leader_isolations > 0,
            "seed {seed}: no crash or no isolation"
        );
        assert!(
            run.figures.snapshots_taken >= 100 && run.figures.snapshots_installed >= 10,
            "seed {seed}: {} snapshots taken, {} installed",
            run.figures.snapshots_taken,
            run.figures.snapshots_installed
        );
        let report = check_kv_history(&run.history);
        assert_eq!(
            report.verdict,
            models::Verdict::Linearizable,
            "seed {seed}: {} operations",
            run.history.len()
        );
    }
}

/// The bound on the stored log can fail: nodes whose services never snapshot keep every entry.
#[test]
#[should_panic(expected = "over the snapshot threshold of 256: its service did not compact")]
fn the_stored_log_bound_fails_when_nothing_compacts() {
    run_seeds("snapshots::bound_fails", &[1], |sim| {
        let cluster = Cluster::new(sim, ClusterConfig::new(3));
        for value in 1..=40 {
            cluster.one(cmd(value), 3, true);
        }
        cluster.check_log_bounded(THRESHOLD);
    });
}
