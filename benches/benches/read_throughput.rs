//! Read throughput per read mode: a 3-node key-value cluster in one process (system clock,
//! in-process transport without delays), 1, 8 and 32 reader threads each reading
//! one key through the leader's server. Criterion reports the time per read (its inverse is
//! reads per second).
//!
//! Expected: the log mode pays a replication round and an apply per read; ReadIndex a
//! heartbeat round shared by the reads that arrive together; lease reads no round at all while
//! the lease holds.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use benches::ReadCluster;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use node::kv::ReadMode;
use std::time::Duration;
use threadsim::sync::Arc;

fn read_throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("reads_through_leader");
    group.sample_size(10);
    for mode in [ReadMode::Log, ReadMode::ReadIndex, ReadMode::Lease] {
        let cluster = Arc::new(ReadCluster::new(3, mode));
        for readers in [1usize, 8, 32] {
            let per_reader = 3200 / readers;
            group.throughput(Throughput::Elements((readers * per_reader) as u64));
            group.bench_with_input(
                BenchmarkId::new(mode.name(), readers),
                &readers,
                |b, &readers| {
                    b.iter_custom(|iterations| {
                        (0..iterations)
                            .map(|_| cluster.read(readers, per_reader))
                            .sum::<Duration>()
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, read_throughput);
criterion_main!(benches);
