//! Lock contention in the node: a 3- or 5-node cluster in one process (system clock, in-process
//! transport without artificial delays), 1, 2, 4 and 8 client threads each calling `start` on the
//! leader and waiting until its command is applied there. Criterion reports the time per
//! committed command (its inverse is commands per second); `start` latency and the entries per
//! AppendEntries are printed per configuration, and at the end the 8 / 1 ratio read from
//! alternating 8-client and 1-client runs.
//!
//! Target: 8 waiting clients commit at least 4x the commands per second of 1, because the leader
//! batches what arrives while a round is in flight instead of one round per command.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use benches::RealCluster;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

fn lock_contention(c: &mut Criterion) {
    let steal_before = benches::steal_time();
    let mut group = c.benchmark_group("commit_through_leader");
    group.sample_size(10);
    for size in [3u32, 5] {
        for clients in [1usize, 2, 4, 8] {
            let per_client = 400 / clients;
            let latencies = std::sync::Mutex::new(Vec::new());
            let sent = std::sync::Mutex::new(node::ReplicationStats::default());
            group.throughput(Throughput::Elements((clients * per_client) as u64));
            group.bench_with_input(
                BenchmarkId::new(format!("{size}_nodes"), clients),
                &clients,
                |b, &clients| {
                    b.iter_custom(|iterations| {
                        let mut total = Duration::ZERO;
                        let (mut contended, mut acquisitions, mut waited_nanos) = (0, 0, 0);
                        for _ in 0..iterations {
                            // A fresh cluster each time, so every run starts from an empty log (the
                            // cost of persisting grows with the log); its election is not timed.
                            let cluster = RealCluster::new(size);
                            threadsim::sync::lock_stats::reset();
                            let mut run = cluster.run(clients, per_client);
                            let stats = threadsim::sync::lock_stats::snapshot();
                            contended += stats.contended;
                            acquisitions += stats.contended + stats.uncontended;
                            waited_nanos += stats.waited_nanos;
                            total += run.elapsed;
                            latencies
                                .lock()
                                .expect("not poisoned")
                                .append(&mut run.start_latencies);
                            let mut sent = sent.lock().expect("not poisoned");
                            *sent = sent.plus(&run.sent);
                        }
                        if threadsim::sync::lock_stats::ENABLED {
                            let commits = iterations * (clients * per_client) as u64;
                            eprintln!(
                                "{size} nodes, {clients} clients: {contended} of {acquisitions} lock acquisitions contended, {:.1} us waited per commit",
                                waited_nanos as f64 / 1000.0 / commits as f64
                            );
                        }
                        total
                    })
                },
            );
            let mut latencies = latencies.into_inner().expect("not poisoned");
            latencies.sort();
            let sent = sent.into_inner().expect("not poisoned");
            if let Some(median) = latencies.get(latencies.len() / 2) {
                eprintln!(
                    "{size} nodes, {clients} clients: start() median latency {median:?}, {:.2} entries per AppendEntries",
                    sent.entries_per_append()
                );
            }
        }
    }
    group.finish();
    // Criterion measures each configuration in its own stretch of time, so a burst of load from
    // the rest of the machine can skew the ratio between them; alternating runs cannot.
    let pairs = if std::env::args().any(|arg| arg == "--test") {
        1
    } else {
        20
    };
    for size in [3u32, 5] {
        let (many, one) = benches::against_one(size, 8, 400, pairs);
        eprintln!(
            "{size} nodes: 8 clients commit {:.2}x the commands per second of 1 ({:.0} vs {:.0}/s, {pairs} alternating pairs of runs)",
            many.rate() / one.rate(),
            many.rate(),
            one.rate()
        );
    }
    benches::report_steal_since(steal_before, "the commit benchmarks");
}

criterion_group!(benches, lock_contention);
criterion_main!(benches);
