//! The measured phase of the lock-contention benchmark alone, for a profiler:
//! `cargo run --release -p benches --example commit_profile -- NODES CLIENTS COMMITS RUNS`
//! runs RUNS fresh clusters, each committing COMMITS commands split over CLIENTS waiting
//! clients, and prints commits per second for each run (the election is not counted).

use benches::RealCluster;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: usize| -> usize {
        match args.get(i) {
            None => default,
            Some(text) => text.parse().unwrap_or_else(|_| {
                eprintln!("usage: commit_profile [NODES [CLIENTS [COMMITS [RUNS]]]]: {text:?} is not a number");
                std::process::exit(2)
            }),
        }
    };
    let (nodes, clients, commits, runs) =
        (number(0, 3), number(1, 8), number(2, 400), number(3, 20));
    let mut total = Duration::ZERO;
    for _ in 0..runs {
        let cluster = RealCluster::new(nodes as u32);
        cluster.leader();
        let (elapsed, _) = cluster.run(clients, commits / clients);
        total += elapsed;
    }
    let committed = (runs * (commits / clients) * clients) as f64;
    println!(
        "{nodes} nodes, {clients} clients: {:.0} commits/s over {runs} runs",
        committed / total.as_secs_f64()
    );
}
