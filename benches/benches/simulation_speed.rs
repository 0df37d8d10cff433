//! Simulation speed: how many simulated seconds a cluster covers per wall-clock second, in fake
//! time on real threads. Each iteration runs a fresh cluster for 25 simulated seconds; the ratio is
//! 25 s divided by the reported time per iteration.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use node::Command;
use sim::{simulate, Cluster, ClusterConfig};
use std::time::Duration;

const SIMULATED: Duration = Duration::from_secs(25);

/// Runs a `nodes`-node cluster for 25 simulated seconds; with `load`, a command is offered to
/// every node every 10 ms of simulated time.
fn run_cluster(nodes: usize, load: bool) {
    simulate(1, move |sim| {
        let cluster = Cluster::new(sim, ClusterConfig::new(nodes));
        let started = cluster.clock().now();
        let mut value = 0u64;
        while cluster.clock().now() - started < SIMULATED {
            if load {
                for id in cluster.ids() {
                    value += 1;
                    cluster.start(id, Command::from_text(&value.to_string()));
                }
                cluster.sleep(Duration::from_millis(10));
            } else {
                cluster.sleep(Duration::from_secs(1));
            }
        }
        cluster.shutdown();
    })
    .unwrap_or_else(|failure| panic!("seed {}: {}", failure.seed, failure.message));
}

fn simulation_speed(c: &mut Criterion) {
    // Fake time, but real threads: the wall time still depends on getting both cores.
    let steal_before = benches::steal_time();
    let mut group = c.benchmark_group("simulate_25s");
    group.sample_size(10);
    for nodes in [3, 5] {
        group.bench_function(format!("{nodes}_nodes_idle"), |b| {
            b.iter(|| run_cluster(nodes, false))
        });
        group.bench_function(format!("{nodes}_nodes_load_100_per_s_per_node"), |b| {
            b.iter(|| run_cluster(nodes, true))
        });
    }
    group.finish();
    benches::report_steal_since(steal_before, "the simulation benchmarks");
}

criterion_group!(benches, simulation_speed);
criterion_main!(benches);
