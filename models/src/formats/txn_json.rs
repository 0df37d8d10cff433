//! List-append transaction histories in JSON lines, one transaction per line:
//!
//! ```text
//! {"client":0,"call":10,"return":25,"outcome":"ok","ops":[["append",1,3],["r",2,[1,2]]]}
//! {"client":1,"call":12,"return":null,"outcome":"unknown","ops":[["append",2,3],["r",1,null]]}
//! ```
//!
//! Keys and values are unsigned integers (as in Elle's list-append workload); a read's list is
//! null when the transaction did not commit (`unknown` or `failed`), else the list it read. The
//! reader is strict, as the linearizability formats are: every field required, no other field,
//! times and keys whole numbers, a committed read with a list, an `ok` or `failed` transaction
//! with a return no earlier than its call. An error names the file and line.

use super::json_fields::Fields;
use super::ParseError;
use crate::list_append::{MicroOp, Txn, TxnOutcome};
use serde_json::{json, Map, Value};

/// Reads a list-append history.
pub fn parse_txns(file: &str, text: &str) -> Result<Vec<Txn>, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut history = Vec::new();
    for (at, line) in text.lines().enumerate() {
        let number = at + 1;
        if line.trim().is_empty() {
            continue;
        }
        let error = |message: String| ParseError::at(file, number, message);
        // Read field by field: a field written twice is refused (a `Value` would keep the
        // last one, and the verdict would depend on the order of the fields).
        let fields = Fields::parse(line).map_err(error)?;
        history.push(txn(&fields.into_object()).map_err(error)?);
    }
    if history.is_empty() {
        return Err(ParseError::at(file, 0, "no transactions"));
    }
    Ok(history)
}

const FIELDS: [&str; 5] = ["client", "call", "return", "outcome", "ops"];

fn txn(object: &Map<String, Value>) -> Result<Txn, String> {
    if let Some(field) = object.keys().find(|key| !FIELDS.contains(&key.as_str())) {
        return Err(format!(
            "unknown field {field:?} (a transaction has {})",
            FIELDS.join(", ")
        ));
    }
    let whole = |field: &str| -> Result<u64, String> {
        object
            .get(field)
            .ok_or(format!("missing {field:?}"))?
            .as_u64()
            .ok_or(format!("{field:?} must be a whole number"))
    };
    let outcome = match object.get("outcome").and_then(Value::as_str) {
        Some("ok") => TxnOutcome::Committed,
        Some("failed") => TxnOutcome::Aborted,
        Some("unknown") => TxnOutcome::Unknown,
        _ => return Err("\"outcome\" must be \"ok\", \"failed\" or \"unknown\"".into()),
    };
    let call = whole("call")?;
    let ret = match object.get("return") {
        None => return Err("missing \"return\" (null if the outcome is unknown)".into()),
        Some(Value::Null) if outcome == TxnOutcome::Unknown => None,
        Some(Value::Null) => return Err("an \"ok\" or \"failed\" transaction has a return".into()),
        Some(_) if outcome == TxnOutcome::Unknown => {
            return Err("an \"unknown\" transaction's return is null".into())
        }
        Some(_) => Some(whole("return")?),
    };
    if ret.is_some_and(|ret| ret < call) {
        return Err(format!(
            "returns at {} before its call at {call}",
            ret.unwrap_or(0)
        ));
    }
    let ops = object
        .get("ops")
        .ok_or("missing \"ops\"")?
        .as_array()
        .ok_or("\"ops\" must be a list")?
        .iter()
        .map(|op| micro_op(op, outcome))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Txn {
        client: whole("client")?,
        call,
        ret,
        outcome,
        ops,
    })
}

fn micro_op(value: &Value, outcome: TxnOutcome) -> Result<MicroOp, String> {
    let shape = "an operation is [\"append\", KEY, VALUE] or [\"r\", KEY, LIST or null]";
    let parts = value.as_array().ok_or(shape)?;
    let [kind, key, argument] = parts.as_slice() else {
        return Err(shape.into());
    };
    let key = key.as_u64().ok_or("a key must be a whole number")?;
    match kind.as_str() {
        Some("append") => Ok(MicroOp::Append {
            key,
            value: argument
                .as_u64()
                .ok_or("an appended value must be a whole number")?,
        }),
        Some("r") => {
            let list = match argument {
                Value::Null if outcome == TxnOutcome::Committed => {
                    return Err("a read of an \"ok\" transaction has its list".into())
                }
                Value::Null => None,
                Value::Array(items) => Some(
                    items
                        .iter()
                        .map(|item| item.as_u64().ok_or("a list holds whole numbers"))
                        .collect::<Result<Vec<u64>, _>>()?,
                ),
                _ => return Err("a read's list is a list of whole numbers, or null".into()),
            };
            Ok(MicroOp::Read { key, list })
        }
        _ => Err(shape.into()),
    }
}

/// A list-append history as [`parse_txns`] reads it, one transaction per line.
pub fn write_txns(history: &[Txn]) -> String {
    let mut out = String::new();
    for txn in history {
        let ops: Vec<Value> = txn
            .ops
            .iter()
            .map(|op| match op {
                MicroOp::Append { key, value } => json!(["append", key, value]),
                MicroOp::Read { key, list } => json!(["r", key, list]),
            })
            .collect();
        let outcome = match txn.outcome {
            TxnOutcome::Committed => "ok",
            TxnOutcome::Aborted => "failed",
            TxnOutcome::Unknown => "unknown",
        };
        let line = json!({
            "client": txn.client,
            "call": txn.call,
            "return": txn.ret,
            "outcome": outcome,
            "ops": ops,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_written_history_reads_back_as_itself() {
        let history = vec![
            Txn {
                client: 0,
                call: 10,
                ret: Some(25),
                outcome: TxnOutcome::Committed,
                ops: vec![
                    MicroOp::Append { key: 1, value: 3 },
                    MicroOp::Read {
                        key: 2,
                        list: Some(vec![1, 2]),
                    },
                ],
            },
            Txn {
                client: 1,
                call: 12,
                ret: None,
                outcome: TxnOutcome::Unknown,
                ops: vec![MicroOp::Read { key: 1, list: None }],
            },
            Txn {
                client: 2,
                call: 13,
                ret: Some(14),
                outcome: TxnOutcome::Aborted,
                ops: vec![MicroOp::Append { key: 1, value: 4 }],
            },
        ];
        let text = write_txns(&history);
        realtools::fuzz_seed("txn_history", "every-outcome", text.as_bytes());
        assert_eq!(parse_txns("h", &text).unwrap(), history);
    }

    #[test]
    fn a_history_reads_and_every_malformed_line_is_refused_with_its_number() {
        let good = r#"{"client":0,"call":10,"return":25,"outcome":"ok","ops":[["append",1,3],["r",2,[1,2]]]}
{"client":1,"call":12,"return":null,"outcome":"unknown","ops":[["append",2,3],["r",1,null]]}"#;
        let history = parse_txns("h", good).unwrap();
        assert_eq!(history.len(), 2);
        assert_eq!(history[1].ret, None);
        assert_eq!(
            history[0].ops[1],
            MicroOp::Read {
                key: 2,
                list: Some(vec![1, 2])
            }
        );
        let line = |text: &str| format!("{{\"client\":0,\"call\":10,{text}}}");
        for (bad, fragment) in [
            ("not json".to_string(), "not valid JSON"),
            (
                line(r#""return":20,"outcome":"ok","ops":[],"ops":[["r",1,null]]"#),
                "field `ops` appears twice",
            ),
            (
                line(r#""return":5,"outcome":"ok","ops":[]"#),
                "before its call",
            ),
            (
                line(r#""return":null,"outcome":"ok","ops":[]"#),
                "has a return",
            ),
            (
                line(r#""return":20,"outcome":"maybe","ops":[]"#),
                "\"outcome\"",
            ),
            (
                line(r#""return":20,"outcome":"ok","ops":[["r",1,null]]"#),
                "has its list",
            ),
            (
                line(r#""return":20,"outcome":"ok","ops":[["w",1,2]]"#),
                "an operation is",
            ),
            (
                line(r#""return":20,"outcome":"ok","ops":[["append",-1,2]]"#),
                "a key",
            ),
            (
                line(r#""return":20,"outcome":"ok","ops":[],"extra":1"#),
                "unknown field",
            ),
            (line(r#""outcome":"ok","ops":[]"#), "missing \"return\""),
        ] {
            let text = format!("{good}\n{bad}");
            let error = parse_txns("h", &text).unwrap_err();
            assert_eq!(error.line, 3, "{bad}: {error}");
            assert!(error.message.contains(fragment), "{bad}: {error}");
        }
        assert_eq!(parse_txns("h", "\n").unwrap_err().line, 0);
    }
}
