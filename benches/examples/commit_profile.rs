//! The measured phase of the lock-contention benchmark alone, for a profiler (`perf record`,
//! `perf stat -e task-clock,context-switches`), and a steadier reading of the batching ratio.
//!
//! `cargo run --release -p benches --example commit_profile -- [--against-one] NODES CLIENTS
//! COMMITS RUNS` runs RUNS fresh clusters, each committing COMMITS commands split over CLIENTS
//! waiting clients, and prints commits per second (the elections are not counted) and how many
//! entries the leader's AppendEntries carried on average. With `--against-one`, every run with
//! CLIENTS clients is followed by one with a single client, so both see the same load from the
//! rest of the machine, and the ratio of the two rates is printed.

use benches::{against_one, CommitTotals};

const USAGE: &str =
    "usage: commit_profile [--against-one] [NODES [CLIENTS [COMMITS [RUNS]]]] (defaults 3 8 400 20)";

const HELP: &str = "Runs RUNS fresh in-process clusters of NODES nodes; in each, CLIENTS threads
commit COMMITS commands in all through the leader, each waiting until its command is applied.
Prints commits per second (elections not counted) and the entries per AppendEntries the leader
sent. --against-one follows every run with a one-client run and prints the ratio of the rates.
Wrap it in `perf stat -e task-clock,context-switches` or `perf record -g` to see the cost.";

fn report(totals: &CommitTotals, nodes: usize, clients: usize, runs: usize) {
    println!(
        "{nodes} nodes, {clients} clients: {:.0} commits/s over {runs} runs, {:.2} entries per AppendEntries",
        totals.rate(),
        totals.entries_per_append()
    );
}

fn fail(message: &str) -> ! {
    eprintln!("commit_profile: {message}\n{USAGE}");
    std::process::exit(2)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "--help" || arg == "-h") {
        println!("{USAGE}\n\n{HELP}");
        return;
    }
    let against_one_flag = args.first().is_some_and(|arg| arg == "--against-one");
    if against_one_flag {
        args.remove(0);
    }
    if let Some(flag) = args.iter().find(|arg| arg.starts_with('-')) {
        fail(&format!("unknown option {flag:?}"));
    }
    if args.len() > 4 {
        fail("too many arguments");
    }
    let number = |i: usize, default: usize| -> usize {
        match args.get(i).map(|text| (text, text.parse::<usize>())) {
            None => default,
            Some((_, Ok(value))) if value > 0 => value,
            Some((text, _)) => fail(&format!("{text:?} is not a positive number")),
        }
    };
    let (nodes, clients, commits, runs) =
        (number(0, 3), number(1, 8), number(2, 400), number(3, 20));
    if nodes > 9 || clients > commits {
        fail("at most 9 nodes, and at least one command per client");
    }
    if !against_one_flag {
        let mut totals = CommitTotals::default();
        for _ in 0..runs {
            totals.add_run(nodes as u32, clients, commits);
        }
        report(&totals, nodes, clients, runs);
        return;
    }
    let (many, one) = against_one(nodes as u32, clients, commits, runs);
    report(&many, nodes, clients, runs);
    report(&one, nodes, 1, runs);
    println!(
        "{nodes} nodes: {clients} clients commit {:.2}x the commands per second of 1",
        many.rate() / one.rate()
    );
}
