//! The online checker against the brute-force oracle, and what it reports.

use super::*;
use crate::checker::brute::brute_force_linearizable;
use crate::kv::{KeyValue, KvInput, KvOutput};
use crate::register::{Register, RegisterInput as In, RegisterOutput as Out};
use crate::test_histories::{random_kv_history_with, random_register_history_with, Lcg};

/// One event of a history fed online.
enum Event {
    Call(usize),
    Return(usize),
    GiveUp(usize),
}

/// A run's verdict and what the checker did.
type Checked<M> = (
    Result<(), OnlineViolation<<M as Model>::Input, <M as Model>::Output>>,
    OnlineFigures,
);

/// Feeds `history` to a new online checker in time order (a tie in any order `rng` draws; an
/// operation of unknown outcome given up a little after its call) and says whether it found
/// no violation, with the checker.
fn online<M: Model>(
    model: M,
    key_of: impl Fn(&M::Input) -> String,
    history: &[Operation<M::Input, M::Output>],
    rng: &mut Lcg,
) -> Checked<M> {
    let mut events: Vec<(Time, u64, Event)> = Vec::new();
    for (index, operation) in history.iter().enumerate() {
        events.push((operation.call, rng.below(1_000), Event::Call(index)));
        // Any order at one instant, but an operation's own end after its call.
        let (end, event) = match operation.ret {
            Some(ret) => (ret, Event::Return(index)),
            None => (operation.call + rng.below(4), Event::GiveUp(index)),
        };
        let tie = if end == operation.call {
            1_000
        } else {
            rng.below(1_000)
        };
        events.push((end, tie, event));
    }
    events.sort_by_key(|(time, tie, _)| (*time, *tie));
    // Half the time, open windows checked as they stand every few time units too.
    let mut checker = OnlineChecker::new(model);
    if rng.below(2) == 0 {
        checker = checker.check_open_windows_every(1 + rng.below(5));
    }
    let mut ids = vec![None; history.len()];
    let mut fed = || -> Result<(), OnlineViolation<M::Input, M::Output>> {
        for (time, _, event) in &events {
            match *event {
                Event::Call(index) => {
                    let operation = &history[index];
                    let key = key_of(&operation.input);
                    ids[index] = Some(checker.call(
                        &key,
                        operation.client,
                        operation.input.clone(),
                        *time,
                    )?);
                }
                Event::Return(index) => {
                    let output = history[index].output().expect("returned").clone();
                    checker.returned(ids[index].expect("called"), output, *time)?;
                }
                Event::GiveUp(index) => checker.gave_up(ids[index].expect("called"), *time)?,
            }
        }
        checker.finish(events.last().map_or(0, |event| event.0 + 1))
    };
    let verdict = fed();
    (verdict, checker.figures())
}

/// Over 5,000 histories `generate` draws from `seed`, the online checker's verdict is the
/// brute-force checker's, and both kinds of verdict come up often.
fn agrees_with_brute_force<M: Model + Clone>(
    model: M,
    key_of: impl Fn(&M::Input) -> String + Copy,
    seed: u64,
    mut generate: impl FnMut(&mut Lcg) -> Vec<Operation<M::Input, M::Output>>,
) {
    let (mut rng, mut order) = (Lcg(seed), Lcg(seed + 1));
    let (mut legal, mut illegal) = (0, 0);
    for case in 0..5_000 {
        let history = generate(&mut rng);
        let expected = brute_force_linearizable(&model, &history);
        let (got, _) = online(model.clone(), key_of, &history, &mut order);
        assert_eq!(got.is_ok(), expected, "case {case}: {history:#?}\n{got:?}");
        if expected {
            legal += 1;
        } else {
            illegal += 1;
        }
    }
    assert!(
        legal > 1_000 && illegal > 500,
        "legal {legal}, illegal {illegal}"
    );
}

#[test]
fn agrees_with_brute_force_on_many_small_random_register_histories() {
    agrees_with_brute_force(
        Register,
        |_| "r".to_string(),
        11,
        |rng| random_register_history_with(rng, 8, 5),
    );
}

#[test]
fn agrees_with_brute_force_on_many_small_random_key_value_histories() {
    let key_of = |input: &KvInput| input.key().to_string();
    agrees_with_brute_force(KeyValue, key_of, 21, |rng| {
        random_kv_history_with(rng, 8, 4)
    });
}

fn op(client: u64, input: In, output: Out, call: Time, ret: Time) -> Operation<In, Out> {
    Operation::returned(client, input, output, call, ret)
}

#[test]
fn a_stale_read_is_found_at_the_first_event_after_its_window_closes_and_dated_by_its_return() {
    let history = vec![
        op(0, In::Write(1), Out::Written, 0, 10),
        op(1, In::Write(2), Out::Written, 20, 30),
        op(2, In::Read, Out::Value(Some(1)), 40, 50),
        op(0, In::Read, Out::Value(Some(2)), 60, 70),
    ];
    let (verdict, figures) = online(Register, |_| "r".to_string(), &history, &mut Lcg(1));
    let violation = verdict.expect_err("the read of 1 at 40-50 is stale");
    assert_eq!(violation.impossible_from, 50);
    assert!(
        [50, 60].contains(&violation.found_at),
        "at its return if the open window is checked then, else at the next call, once no call \
         at 50 can come: {violation:?}"
    );
    assert_eq!(
        violation.operations.len(),
        1,
        "the window holds the stale read alone"
    );
    assert_eq!(violation.states_at_start, 1);
    assert!(figures.windows >= 2, "{figures:?}");
    let text = violation.describe(
        |input, output| Register.describe(input, output),
        |time| time.to_string(),
    );
    assert!(
        text.contains("client 2") && text.contains("[40 to 50]"),
        "{text}"
    );
}

#[test]
fn an_operation_called_when_another_returns_is_concurrent_with_it() {
    // The read returns at 10, the write is called at 10: the write may come first.
    let history = vec![
        op(0, In::Read, Out::Value(Some(5)), 0, 10),
        op(1, In::Write(5), Out::Written, 10, 20),
    ];
    assert!(brute_force_linearizable(&Register, &history));
    for seed in 0..20 {
        let (verdict, _) = online(Register, |_| "r".to_string(), &history, &mut Lcg(seed));
        assert!(verdict.is_ok(), "{verdict:?}");
    }
}

#[test]
fn an_append_of_unknown_outcome_is_carried_until_a_read_shows_it() {
    let key = || "k".to_string();
    let history = vec![
        Operation::unknown(0, KvInput::Append(key(), "a".into()), 0),
        Operation::returned(
            1,
            KvInput::Get(key()),
            KvOutput::Value(String::new()),
            10,
            20,
        ),
        Operation::returned(1, KvInput::Get(key()), KvOutput::Value("a".into()), 30, 40),
        Operation::returned(1, KvInput::Get(key()), KvOutput::Value("a".into()), 50, 60),
    ];
    let (verdict, figures) = online(KeyValue, |_| key(), &history, &mut Lcg(3));
    assert!(verdict.is_ok(), "{verdict:?}");
    assert!(figures.windows >= 3, "{figures:?}");
    let mut vanished = history.clone();
    vanished.push(Operation::returned(
        1,
        KvInput::Get(key()),
        KvOutput::Value(String::new()),
        70,
        80,
    ));
    let (verdict, _) = online(KeyValue, |_| key(), &vanished, &mut Lcg(3));
    assert_eq!(verdict.expect_err("once seen it stays").impossible_from, 80);
}

#[test]
fn a_window_past_the_fixed_sets_defers_its_key_and_never_guesses() {
    // Many clients overlapping one long read: no cut for 300 operations.
    let mut history = vec![op(0, In::Read, Out::Value(None), 0, 10_000)];
    for n in 1..300 {
        history.push(op(n, In::Read, Out::Value(None), n, n + 1));
    }
    history.push(op(0, In::Read, Out::Value(Some(9)), 20_000, 20_001));
    let (verdict, figures) = online(Register, |_| "r".to_string(), &history, &mut Lcg(5));
    assert!(
        verdict.is_ok(),
        "deferred, so left to the whole history's check"
    );
    assert_eq!(figures.keys_deferred, 1);
    assert_eq!(figures.operations_deferred, 1);
}
