//! Linearizability checker speed on the histories in `testdata/histories/`, grouped as in the
//! checker's issue, parsing excluded, one thread unless the name says otherwise (Porcupine's
//! reference times in `expected.tsv` are single-threaded).

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use models::formats::{jepsen, kvlog};
use models::{
    check, check_partitions, partition_by_key, CheckOptions, History, KeyValue, KvInput, KvOutput,
    KvStore, Operation, Register, RegisterInput, RegisterOutput,
};
use std::path::{Path, PathBuf};

/// Porcupine's test data, in the repository (`testdata/histories/README.md` names its source).
fn histories() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/histories")
}

fn etcd(dir: &Path, name: &str) -> History<RegisterInput, RegisterOutput> {
    let path = dir.join("jepsen").join(format!("{name}.log"));
    jepsen::parse(name, &std::fs::read_to_string(path).expect("read")).expect("parse")
}

fn kv(dir: &Path, name: &str) -> History<KvInput, KvOutput> {
    let path = dir.join("kv").join(format!("{name}.txt"));
    kvlog::parse(name, &std::fs::read_to_string(path).expect("read")).expect("parse")
}

fn checker_speed(c: &mut Criterion) {
    let dir = histories();
    let one_thread = CheckOptions {
        threads: 1,
        ..CheckOptions::default()
    };
    let all_threads = CheckOptions::default();

    let mut names: Vec<String> = std::fs::read_dir(dir.join("jepsen"))
        .expect("list jepsen histories")
        .filter_map(|entry| {
            entry
                .ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".log")
                .map(str::to_string)
        })
        .collect();
    names.sort();
    let all: Vec<_> = names.iter().map(|name| etcd(&dir, name)).collect();
    let mut group = c.benchmark_group("etcd");
    group.sample_size(10);
    group.bench_function(format!("all_{}", all.len()), |b| {
        b.iter(|| {
            all.iter()
                .map(|h| check(&Register, h, &one_thread).verdict)
                .collect::<Vec<_>>()
        })
    });
    for name in ["etcd_002", "etcd_007", "etcd_057", "etcd_099"] {
        let history = etcd(&dir, name);
        group.bench_function(name, |b| {
            b.iter(|| check(&Register, &history, &one_thread).verdict)
        });
    }
    group.finish();

    let mut group = c.benchmark_group("kv_per_key");
    group.sample_size(10);
    for name in [
        "c01-ok", "c01-bad", "c10-ok", "c10-bad", "c50-ok", "c50-bad",
    ] {
        let partitions = partition_by_key(&kv(&dir, name));
        group.bench_function(name, |b| {
            b.iter(|| check_partitions(&KeyValue, partitions.clone(), &one_thread).verdict)
        });
    }
    let partitions = partition_by_key(&kv(&dir, "c50-bad"));
    group.bench_function("c50-bad_all_threads", |b| {
        b.iter(|| check_partitions(&KeyValue, partitions.clone(), &all_threads).verdict)
    });
    group.finish();

    let mut group = c.benchmark_group("kv_one_partition");
    group.sample_size(10);
    for name in ["c01-ok", "c01-bad", "c10-ok", "c10-bad"] {
        let history = kv(&dir, name);
        group.bench_function(name, |b| {
            b.iter(|| check(&KvStore, &history, &one_thread).verdict)
        });
    }
    group.finish();
}

/// A register written and read back in turn by one client, `count` operations in all: the
/// search places every operation at its first try, so its time and memory must grow linearly.
fn sequential_register(count: u64) -> History<RegisterInput, RegisterOutput> {
    (0..count)
        .map(|index| {
            let (call, ret) = (2 * index, 2 * index + 1);
            let last_write = i64::try_from(index - index % 2).expect("a small index");
            if index % 2 == 0 {
                Operation::returned(
                    0,
                    RegisterInput::Write(last_write),
                    RegisterOutput::Written,
                    call,
                    ret,
                )
            } else {
                let read = RegisterOutput::Value(Some(last_write));
                Operation::returned(0, RegisterInput::Read, read, call, ret)
            }
        })
        .collect()
}

fn sequential_speed(c: &mut Criterion) {
    let one_thread = CheckOptions {
        threads: 1,
        ..CheckOptions::default()
    };
    let mut group = c.benchmark_group("sequential_register");
    group.sample_size(10);
    for count in [100_000, 1_000_000] {
        let history = sequential_register(count);
        group.bench_function(count.to_string(), |b| {
            b.iter(|| check(&Register, &history, &one_thread).verdict)
        });
    }
    group.finish();
}

/// Every history of the corpus of hard histories (`models/corpus/`), one thread.
fn corpus_speed(c: &mut Criterion) {
    let one_thread = CheckOptions {
        threads: 1,
        ..CheckOptions::default()
    };
    let mut group = c.benchmark_group("corpus");
    group.sample_size(10);
    for entry in models::corpus::entries() {
        let history = entry.read();
        group.bench_function(entry.name(), |b| {
            b.iter(|| history.check(&one_thread).verdict)
        });
    }
    group.finish();
}

criterion_group!(benches, checker_speed, sequential_speed, corpus_speed);
criterion_main!(benches);
