//! The measured phase of the lock-contention benchmark alone, for a profiler (`perf record`,
//! `perf stat -e task-clock,context-switches`):
//! `cargo run --release -p benches --example commit_profile -- NODES CLIENTS COMMITS RUNS`
//! runs RUNS fresh clusters, each committing COMMITS commands split over CLIENTS waiting
//! clients, and prints commits per second (the elections are not counted) and how many entries
//! the leader's AppendEntries carried on average.

use benches::RealCluster;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() > 4 || args.iter().any(|arg| arg.starts_with('-')) {
        eprintln!("usage: commit_profile [NODES [CLIENTS [COMMITS [RUNS]]]] (defaults 3 8 400 20)");
        std::process::exit(2);
    }
    let number = |i: usize, default: usize| -> usize {
        match args.get(i) {
            None => default,
            Some(text) => match text.parse() {
                Ok(value) if value > 0 => value,
                _ => {
                    eprintln!("commit_profile: {text:?} is not a positive number");
                    std::process::exit(2)
                }
            },
        }
    };
    let (nodes, clients, commits, runs) =
        (number(0, 3), number(1, 8), number(2, 400), number(3, 20));
    if nodes > 9 || clients > commits {
        eprintln!("commit_profile: at most 9 nodes, and at least one commit per client");
        std::process::exit(2);
    }
    let (mut elapsed, mut appends, mut entries) = (Duration::ZERO, 0, 0);
    for _ in 0..runs {
        let cluster = RealCluster::new(nodes as u32);
        cluster.leader();
        let run = cluster.run(clients, commits / clients);
        elapsed += run.elapsed;
        appends += run.sent.appends;
        entries += run.sent.entries;
    }
    let committed = (runs * (commits / clients) * clients) as f64;
    println!(
        "{nodes} nodes, {clients} clients: {:.0} commits/s over {runs} runs, {:.2} entries per AppendEntries",
        committed / elapsed.as_secs_f64(),
        entries as f64 / appends.max(1) as f64
    );
}
