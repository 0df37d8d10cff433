//! Writes Jepsen-style single-register histories that are hard to refute: clients read, write
//! and compare-and-set one register, each operation taking effect at a random instant between its
//! call and its return; many time out, and a timed-out operation takes effect later or never (its
//! client is then replaced by a new one, as Jepsen replaces a crashed process). One read at the
//! very end returns a provably stale value: every operation that could have written that value
//! returned before some write of another value was called, and that write completed before the
//! read began. Refuting it means ruling out every placement of the timed-out operations.
//!
//! `cargo run --release -p models --example register_timeouts -- SEED OPERATIONS [TIMEOUT%
//! [CLIENTS [VALUES]]] > FILE` (35% of operations time out unless said, 5 concurrent clients,
//! values 0-11). With
//! `legal` last, the stale read is left out: the history is then linearizable, the generator's
//! own execution a witness.

use models::formats::json;
use models::{Model, Operation, Register, RegisterInput, RegisterOutput};

#[path = "shared/random.rs"]
mod random;
use random::Random;

/// Concurrent clients at any time, unless said.
const CLIENTS: u64 = 5;
/// Values written, unless said: few enough that values recur, so most can still be reached late.
const VALUES: u64 = 12;

/// The shape of the histories.
#[derive(Clone, Copy)]
struct Shape {
    operations: u64,
    timeout_percent: u64,
    clients: u64,
    values: u64,
}

/// One operation as generated: when it takes effect (`None`: never) and its outcome.
struct Planned {
    client: u64,
    input: RegisterInput,
    call: u64,
    ret: Option<u64>,
    effect_at: Option<u64>,
}

fn plan(random: &mut Random, shape: Shape) -> Vec<Planned> {
    let Shape {
        operations: count,
        timeout_percent,
        clients,
        values,
    } = shape;
    let mut planned = Vec::new();
    // Each slot is one concurrent process: its client id (replaced after a timeout) and when it
    // is next free.
    let mut slots: Vec<(u64, u64)> = (0..clients).map(|client| (client, 0)).collect();
    let mut next_client = clients;
    for _ in 0..count {
        let slot = random.below(clients) as usize;
        let (client, free_at) = slots[slot];
        let call = free_at + random.below(5);
        let input = match random.below(10) {
            0..=3 => RegisterInput::Read,
            4..=6 => RegisterInput::Write(random.below(values) as i64),
            _ => RegisterInput::Cas {
                expected: random.below(values) as i64,
                new: random.below(values) as i64,
            },
        };
        let duration = 1 + random.below(10);
        if random.below(100) < timeout_percent {
            let effect_at = (random.below(2) == 0).then(|| call + random.below(60));
            planned.push(Planned {
                client,
                input,
                call,
                ret: None,
                effect_at,
            });
            slots[slot] = (next_client, call + duration);
            next_client += 1;
        } else {
            let ret = call + duration;
            let effect_at = Some(call + random.below(duration + 1));
            planned.push(Planned {
                client,
                input,
                call,
                ret: Some(ret),
                effect_at,
            });
            slots[slot] = (client, ret + 1);
        }
    }
    planned
}

/// The operations that may write `value`: writes of it and compare-and-sets to it (those that
/// returned `false` wrote nothing).
fn may_write(operation: &Operation<RegisterInput, RegisterOutput>, value: i64) -> bool {
    match (operation.input, operation.output()) {
        (RegisterInput::Write(written), _) => written == value,
        (RegisterInput::Cas { new, .. }, Some(RegisterOutput::Swapped(false))) => {
            let _ = new;
            false
        }
        (RegisterInput::Cas { new, .. }, _) => new == value,
        (RegisterInput::Read, _) => false,
    }
}

/// A value the register provably cannot hold after `history`: every operation that may write it
/// returned before some completed write of another value was called.
fn provably_stale(
    history: &[Operation<RegisterInput, RegisterOutput>],
    values: u64,
) -> Option<i64> {
    (0..values as i64).rev().find(|&value| {
        let writers: Vec<_> = history.iter().filter(|op| may_write(op, value)).collect();
        !writers.is_empty()
            && writers.iter().all(|op| op.ret.is_some())
            && history.iter().any(|overwrite| {
                matches!(overwrite.input, RegisterInput::Write(other) if other != value)
                    && overwrite.ret.is_some()
                    && writers
                        .iter()
                        .all(|op| op.ret.is_some_and(|ret| ret < overwrite.call))
            })
    })
}

fn main() {
    let mut arguments: Vec<String> = std::env::args().skip(1).collect();
    let legal = arguments.last().is_some_and(|last| last == "legal");
    if legal {
        arguments.pop();
    }
    let parsed: Option<Vec<u64>> = arguments.iter().map(|text| text.parse().ok()).collect();
    let defaults = [35, CLIENTS, VALUES];
    let shape = parsed
        .filter(|numbers| (2..=5).contains(&numbers.len()))
        .map(|numbers| {
            let given = |i: usize| numbers.get(i).copied().unwrap_or(defaults[i - 2]);
            (
                numbers[0],
                Shape {
                    operations: numbers[1],
                    timeout_percent: given(2),
                    clients: given(3),
                    values: given(4),
                },
            )
        });
    let Some((seed, shape)) = shape.filter(|(_, shape)| {
        (1..=100_000).contains(&shape.operations)
            && shape.timeout_percent <= 100
            && (1..=64).contains(&shape.clients)
            && (1..=1_000_000).contains(&shape.values)
    }) else {
        eprintln!(
            "usage: register_timeouts SEED OPERATIONS (1 to 100000) [TIMEOUT% (0 to 100) [CLIENTS (1 to 64) [VALUES (1 to 1000000)]]] [legal] > FILE"
        );
        std::process::exit(2);
    };
    let mut random = Random(seed);
    let planned = plan(&mut random, shape);
    // Take effect in the order of the chosen instants (ties by position) to get the outputs.
    let mut effects: Vec<(u64, usize)> = planned
        .iter()
        .enumerate()
        .filter_map(|(index, op)| op.effect_at.map(|at| (at, index)))
        .collect();
    effects.sort_unstable();
    let mut outputs = vec![None; planned.len()];
    let mut state = Register.init();
    for (_, index) in effects {
        let (next, output) = Register.step(&state, &planned[index].input);
        state = next;
        outputs[index] = Some(output);
    }
    let mut history: Vec<Operation<RegisterInput, RegisterOutput>> = planned
        .iter()
        .zip(outputs)
        .map(|(op, output)| match (op.ret, output) {
            (Some(ret), Some(output)) => {
                Operation::returned(op.client, op.input, output, op.call, ret)
            }
            _ => Operation::unknown(op.client, op.input, op.call),
        })
        .collect();
    if legal {
        // The execution above is a witness: every operation took effect within its window.
        print!("{}", json::write_register(&history));
        return;
    }
    let Some(stale) = provably_stale(&history, shape.values) else {
        eprintln!("register_timeouts: seed {seed} leaves no provably stale value; try another");
        std::process::exit(1);
    };
    let end = planned
        .iter()
        .map(|op| op.ret.unwrap_or(op.call).max(op.effect_at.unwrap_or(0)))
        .max()
        .unwrap_or(0);
    let reader = history.iter().map(|op| op.client).max().unwrap_or(0) + 1;
    history.push(Operation::returned(
        reader,
        RegisterInput::Read,
        RegisterOutput::Value(Some(stale)),
        end + 1,
        end + 2,
    ));
    print!("{}", json::write_register(&history));
}
