//! No silent acceptance: seeded random register histories in the native format, each written so
//! that every field it has is one its operation needs, are damaged in ways that keep the JSON valid
//! but change what it says (a field misspelt, left out or written twice, two calls of one client
//! overlapping). A lenient reader would take most of them with another meaning; this one must
//! refuse every one.

use crate::xorshift::Rng;
use models::formats::json;

/// Damaged histories: a fraction of a second in the test profile.
const CASES: u64 = 5_000;

/// One line as its fields in the order written (written out by hand, so a damaged line may
/// repeat a field).
type Line = Vec<(String, String)>;

/// A history of two or more returned operations, one after another, each taking time: every field
/// is needed (`input` only where the operation takes one, `output` only where it gives one).
fn history(rng: &mut Rng) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut time = 0;
    for _ in 0..2 + rng.below(5) {
        let client = rng.below(3);
        let call = time + rng.below(5);
        let ret = call + 1 + rng.below(5);
        time = ret;
        let mut line: Line = vec![("client".into(), client.to_string())];
        match rng.below(3) {
            0 => {
                line.push(("op".into(), "\"read\"".into()));
                line.push(("output".into(), rng.below(3).to_string()));
            }
            1 => {
                line.push(("op".into(), "\"write\"".into()));
                line.push(("input".into(), rng.below(3).to_string()));
            }
            _ => {
                line.push(("op".into(), "\"cas\"".into()));
                line.push((
                    "input".into(),
                    format!("[{},{}]", rng.below(3), rng.below(3)),
                ));
                line.push(("output".into(), (rng.below(2) == 0).to_string()));
            }
        }
        line.push(("call".into(), call.to_string()));
        line.push(("return".into(), ret.to_string()));
        line.push(("outcome".into(), "\"ok\"".into()));
        lines.push(line);
    }
    lines
}

fn text(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|line| {
            let fields: Vec<String> = line
                .iter()
                .map(|(name, value)| format!("{name:?}:{value}"))
                .collect();
            format!("{{{}}}", fields.join(","))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Changes what `lines` say while keeping each line valid JSON; returns what was done.
fn damage(rng: &mut Rng, lines: &mut [Line]) -> String {
    let count = lines.len();
    let line = &mut lines[rng.below(count)];
    let at = rng.below(line.len());
    match rng.below(5) {
        4 => {
            let (name, value) = line[at].clone();
            let mut misspelt = name.clone();
            misspelt.insert(rng.below(name.len()), ['x', '_', 'e'][rng.below(3)]);
            line.insert(rng.below(line.len() + 1), (misspelt.clone(), value));
            format!("added {misspelt} beside {name}")
        }
        0 => {
            let name = &mut line[at].0;
            let original = name.clone();
            let position = rng.below(name.len());
            name.insert(position, ['x', '_', 'e'][rng.below(3)]);
            format!("misspelt {original} as {name}")
        }
        1 => format!("left out {}", line.remove(at).0),
        2 => {
            let (name, value) = line[at].clone();
            line.insert(rng.below(line.len() + 1), (name.clone(), value));
            format!("wrote {name} twice")
        }
        _ => {
            // A second operation of the first line's client that starts before that one returned.
            let field = |line: &Line, name: &str| {
                line.iter()
                    .find(|(field, _)| field == name)
                    .map(|(_, value)| value.clone())
                    .expect("every generated line has it")
            };
            let first = lines[0].clone();
            let (call, ret): (u64, u64) = (
                field(&first, "call").parse().expect("an integer"),
                field(&first, "return").parse().expect("an integer"),
            );
            let mut overlapping = first.clone();
            for (name, value) in &mut overlapping {
                if name == "call" {
                    *value = call.to_string();
                }
                if name == "return" {
                    *value = (ret + 1).to_string();
                }
            }
            lines[count - 1] = overlapping;
            format!(
                "a second call of client {} in flight with the first",
                field(&first, "client")
            )
        }
    }
}

#[test]
fn well_formed_json_that_says_something_else_is_refused() {
    let mut rng = Rng(7);
    for case in 0..CASES {
        let mut lines = history(&mut rng);
        let valid = text(&lines);
        assert!(
            json::parse_register("f", &valid).is_ok(),
            "case {case}: the undamaged history must read:\n{valid}"
        );
        let what = damage(&mut rng, &mut lines);
        let damaged = text(&lines);
        assert!(
            json::parse_register("f", &damaged).is_err(),
            "case {case}: {what}, and the reader took it:\n{damaged}"
        );
    }
}
