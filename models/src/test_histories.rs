//! Small random histories for the differential tests against the brute-force checker, from one
//! seeded generator (the checker has no randomness of its own).

use crate::history::Operation;
use crate::kv::{KeyValue, KvInput, KvOutput};
use crate::model::Model;
use crate::register_ops::{RegisterInput as In, RegisterOutput as Out};
use crate::Register;

/// A register operation.
pub type RegOp = Operation<In, Out>;

/// A small deterministic generator.
pub struct Lcg(pub u64);

impl Lcg {
    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// A random history of 2-7 operations by up to 3 clients: outputs come from a random sequential
/// execution (so many histories are legal), then are perturbed now and then, and one operation in
/// six loses its outcome.
pub fn random_register_history(rng: &mut Lcg) -> Vec<RegOp> {
    random_register_history_with(rng, 6, 6)
}

/// As [`random_register_history`], with 2 to `1 + spread` operations, one in `unknown_one_in`
/// losing its outcome.
pub fn random_register_history_with(rng: &mut Lcg, spread: u64, unknown_one_in: u64) -> Vec<RegOp> {
    let count = 2 + rng.below(spread) as usize;
    let mut client_free_at = [0u64; 3];
    let mut ops = Vec::new();
    for _ in 0..count {
        let client = rng.below(3) as usize;
        let call = client_free_at[client] + rng.below(4);
        let ret = call + 1 + rng.below(6);
        client_free_at[client] = ret + 1;
        let input = match rng.below(3) {
            0 => In::Read,
            1 => In::Write(rng.below(3) as i64),
            _ => In::Cas {
                expected: rng.below(3) as i64,
                new: rng.below(3) as i64,
            },
        };
        ops.push((client as u64, input, call, ret));
    }
    // Outputs from executing in call order, so overlapping operations usually agree.
    let mut state = None;
    let mut history = Vec::new();
    for (client, input, call, ret) in ops {
        let (next, mut output) = Register.step(&state, &input);
        state = next;
        if rng.below(5) == 0 {
            output = match output {
                Out::Value(_) => Out::Value(Some(rng.below(3) as i64)),
                Out::Swapped(swapped) => Out::Swapped(!swapped),
                Out::Written => Out::Written,
            };
        }
        if rng.below(unknown_one_in) == 0 {
            history.push(Operation::unknown(client, input, call));
        } else {
            history.push(Operation::returned(client, input, output, call, ret));
        }
    }
    history
}

/// 2-9 operations of up to 4 clients, each write of a value of its own (no compare-and-set),
/// outputs from a sequential run in call order and then perturbed now and then (a read of another
/// value, of one never written, of the initial value), one operation in five of unknown outcome,
/// times close together so that ties and touching stretches are common.
pub fn random_distinct_writes_history(rng: &mut Lcg) -> Vec<RegOp> {
    let count = 2 + rng.below(8) as usize;
    let mut free_at = [0u64; 4];
    let (mut state, mut next_value) = (None, 1);
    let mut history = Vec::new();
    for _ in 0..count {
        let client = rng.below(4) as usize;
        let call = free_at[client] + rng.below(3);
        let ret = call + rng.below(5);
        free_at[client] = ret + 1;
        let input = if rng.below(2) == 0 {
            next_value += 1;
            In::Write(next_value - 1)
        } else {
            In::Read
        };
        let (after, mut output) = Register.step(&state, &input);
        state = after;
        if matches!(output, Out::Value(_)) && rng.below(4) == 0 {
            output = Out::Value(match rng.below(3) {
                0 => None,
                1 => Some(99),
                _ => Some(1 + rng.below(next_value as u64) as i64),
            });
        }
        history.push(if rng.below(5) == 0 {
            Operation::unknown(client as u64, input, call)
        } else {
            Operation::returned(client as u64, input, output, call, ret)
        });
    }
    history
}

/// A random single-key history of gets, puts and appends (unique appended values), with outputs
/// from a sequential execution in call order, sometimes perturbed, one outcome in six unknown.
pub fn random_kv_history(rng: &mut Lcg) -> Vec<Operation<KvInput, KvOutput>> {
    random_kv_history_with(rng, 6, 6)
}

/// As [`random_kv_history`], with 2 to `1 + spread` operations, one in `unknown_one_in` losing
/// its outcome.
pub fn random_kv_history_with(
    rng: &mut Lcg,
    spread: u64,
    unknown_one_in: u64,
) -> Vec<Operation<KvInput, KvOutput>> {
    let count = 2 + rng.below(spread) as usize;
    let mut client_free_at = [0u64; 3];
    let mut value = KeyValue.init();
    let mut history = Vec::new();
    for n in 0..count {
        let client = rng.below(3) as usize;
        let call = client_free_at[client] + rng.below(4);
        let ret = call + 1 + rng.below(6);
        client_free_at[client] = ret + 1;
        let key = "k".to_string();
        let input = match rng.below(4) {
            0 | 1 => KvInput::Get(key),
            2 => KvInput::Append(key, format!("{n}.")),
            _ => KvInput::Put(key, format!("p{n}.")),
        };
        let (next, mut output) = KeyValue.step(&value, &input);
        value = next;
        if rng.below(5) == 0 {
            if let KvOutput::Value(seen) = &mut output {
                seen.push_str("x.");
            }
        }
        if rng.below(unknown_one_in) == 0 {
            history.push(Operation::unknown(client as u64, input, call));
        } else {
            history.push(Operation::returned(client as u64, input, output, call, ret));
        }
    }
    history
}
