//! Writes a linearizable history of appends to one key: eight clients, one operation at a time
//! each, every operation taking effect at an instant between its call and its return (overlapping
//! its neighbours by up to 20 time units), a given share of them gets that return the whole value
//! so far. The generator's execution is a witness, so the verdict must be linearizable; the
//! history measures how the checker's time and memory grow with the appends to one key.
//!
//! `cargo run --release -p models --example kv_appends -- SEED OPERATIONS GETS-PER-THOUSAND > FILE`

use models::formats::json;
use models::{KvInput, KvOutput, Operation};

#[path = "shared/random.rs"]
mod random;
use random::Random;

const CLIENTS: u64 = 8;

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|arg| arg.parse())
        .collect::<Result<_, _>>()
        .unwrap_or_else(|_| usage());
    let [seed, operations, gets_per_thousand] = args[..] else {
        usage()
    };
    if gets_per_thousand > 1000 || operations == 0 || operations > 10_000_000 {
        usage();
    }
    let mut random = Random(seed);
    let mut free_at = [0u64; CLIENTS as usize];
    let mut appended = [0u64; CLIENTS as usize];
    let (mut now, mut value) = (0u64, String::new());
    let mut history = Vec::new();
    for _ in 0..operations {
        let client = random.below(CLIENTS) as usize;
        // The instant it takes effect: after every earlier one, and after its client's last return.
        now = (now + 1 + random.below(5)).max(free_at[client]);
        let call = now.saturating_sub(random.below(21)).max(free_at[client]);
        let ret = now + random.below(21);
        free_at[client] = ret + 1;
        let key = "k".to_string();
        let (input, output) = if random.below(1000) < gets_per_thousand {
            (KvInput::Get(key), KvOutput::Value(value.clone()))
        } else {
            let piece = format!("{client}.{} ", appended[client]);
            appended[client] += 1;
            value.push_str(&piece);
            (KvInput::Append(key, piece), KvOutput::Done)
        };
        history.push(Operation::returned(client as u64, input, output, call, ret));
    }
    history.sort_by_key(|operation| operation.call);
    print!("{}", json::write_kv(&history));
}

fn usage() -> ! {
    eprintln!(
        "usage: kv_appends SEED OPERATIONS GETS-PER-THOUSAND (at most 10,000,000 operations)"
    );
    std::process::exit(2);
}
