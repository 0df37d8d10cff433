//! The online checker's throughput on linearizable key-value traffic, one thread: operations
//! per second fed in time order (calls, returns, the end), against the whole history checked at
//! the end on one thread. The traffic: 8 clients on 10 keys, 50% gets, 30% puts, 20% appends,
//! each operation overlapping up to three others, built linearizable (every output is the
//! store's at a point inside the operation's interval).

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use models::{
    check_partitions, partition_by_key, CheckOptions, KeyValue, KvInput, KvOutput, OnlineChecker,
    Operation, Verdict,
};
use std::collections::BTreeMap;

/// Operations per measured history.
const OPERATIONS: u64 = 200_000;
const CLIENTS: u64 = 8;
const KEYS: u64 = 10;

/// A small deterministic generator.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = (self.0)
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// `count` operations taking effect 10 ns apart (operation `i` at `10 * i`), each called up to
/// 30 ns before and returning up to 30 ns after, client `i % 8` (so a client's operations never
/// overlap), outputs from the store at that point.
fn linearizable_traffic(count: u64) -> Vec<Operation<KvInput, KvOutput>> {
    let mut rng = Lcg(42);
    let mut store: BTreeMap<String, String> = BTreeMap::new();
    let mut history = Vec::with_capacity(count as usize);
    for i in 0..count {
        let at = 100 + 10 * i;
        let (call, ret) = (at - rng.below(31), at + rng.below(31));
        let key = format!("k{}", rng.below(KEYS));
        let value = store.entry(key.clone()).or_default();
        let (input, output) = match rng.below(10) {
            0..=4 => (KvInput::Get(key), KvOutput::Value(value.clone())),
            5..=7 => {
                *value = format!("{i} ");
                (KvInput::Put(key, value.clone()), KvOutput::Done)
            }
            _ => {
                let suffix = format!("{i} ");
                value.push_str(&suffix);
                (KvInput::Append(key, suffix), KvOutput::Done)
            }
        };
        history.push(Operation::returned(i % CLIENTS, input, output, call, ret));
    }
    history
}

/// The history's calls and returns in time order (a call first at one instant): `(time, index,
/// is the return)`.
fn events(history: &[Operation<KvInput, KvOutput>]) -> Vec<(u64, usize, bool)> {
    let mut events: Vec<(u64, usize, bool)> = (history.iter().enumerate())
        .flat_map(|(index, operation)| {
            let ret = operation.ret.expect("returned");
            [(operation.call, index, false), (ret, index, true)]
        })
        .collect();
    events.sort_by_key(|&(time, index, is_return)| (time, is_return, index));
    events
}

/// Feeds the events online; panics on a violation (the traffic is linearizable).
fn check_online(history: &[Operation<KvInput, KvOutput>], events: &[(u64, usize, bool)]) {
    let mut checker = OnlineChecker::new(KeyValue);
    let mut ids = vec![None; history.len()];
    let mut last = 0;
    for &(time, index, is_return) in events {
        let operation = &history[index];
        if is_return {
            let output = operation.output().expect("returned").clone();
            let id = ids[index].expect("called first");
            checker.returned(id, output, time).expect("linearizable");
        } else {
            let key = operation.input.key();
            let call = checker.call(key, operation.client, operation.input.clone(), time);
            ids[index] = Some(call.expect("linearizable"));
        }
        last = time;
    }
    checker.finish(last + 1).expect("linearizable");
    let figures = checker.figures();
    assert_eq!(figures.keys_deferred, 0, "{figures:?}");
}

fn online_checker(c: &mut Criterion) {
    let history = linearizable_traffic(OPERATIONS);
    let events = events(&history);
    let mut group = c.benchmark_group("online_checker");
    group.sample_size(10);
    group.throughput(Throughput::Elements(OPERATIONS));
    group.bench_function("online, one thread", |b| {
        b.iter(|| check_online(&history, &events))
    });
    let one_thread = CheckOptions {
        threads: 1,
        ..CheckOptions::default()
    };
    group.bench_function("whole history at the end, one thread", |b| {
        b.iter(|| {
            let report = check_partitions(&KeyValue, partition_by_key(&history), &one_thread);
            assert_eq!(report.verdict, Verdict::Linearizable);
        })
    });
    group.finish();
}

criterion_group!(benches, online_checker);
criterion_main!(benches);
