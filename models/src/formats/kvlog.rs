//! The MIT 6.824 kv logs: one EDN map per line, get, put and append on string keys.
//!
//! ```text
//! {:process 0, :type :invoke, :f :append, :key "0", :value "x 0 0 y"}
//! {:process 0, :type :ok, :f :append, :key "0", :value "x 0 0 y"}
//! ```
//! Time is the line number. A get of a key never written returns `""` (`nil` is read as `""`).
//! `:fail` took no effect; `:info`, or a call that never returns, is an unknown outcome.

use super::edn::{parse_map, EdnValue};
use super::{require_operations, InFlight, ParseError};
use crate::history::{History, Operation};
use crate::kv::{KvInput, KvOutput};
use std::collections::BTreeMap;

/// Reads a kv log.
pub fn parse(file: &str, text: &str) -> Result<History<KvInput, KvOutput>, ParseError> {
    let mut in_flight = InFlight::new();
    let mut operations = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let number = number + 1;
        if line.trim().is_empty() {
            continue;
        }
        let error = |message: String| ParseError::at(file, number, message);
        let map = parse_map(line).map_err(error)?;
        let client = match map.get("process") {
            Some(EdnValue::Integer(process)) if *process >= 0 => *process as u64,
            other => {
                return Err(error(format!(
                    ":process must be a non-negative integer, got {other:?}"
                )))
            }
        };
        let kind = keyword(&map, "type").map_err(error)?;
        let function = keyword(&map, "f").map_err(error)?;
        let key = match map.get("key") {
            Some(EdnValue::Text(key)) => key.clone(),
            other => return Err(error(format!(":key must be a string, got {other:?}"))),
        };
        let value = match map.get("value") {
            Some(EdnValue::Text(value)) => value.clone(),
            Some(EdnValue::Nil) | None => String::new(),
            Some(other) => {
                return Err(error(format!(
                    ":value must be a string or nil, got {other:?}"
                )))
            }
        };
        let time = number as u64;
        match kind.as_str() {
            "invoke" => {
                let input = match function.as_str() {
                    "get" => KvInput::Get(key),
                    "put" => KvInput::Put(key, value),
                    "append" => KvInput::Append(key, value),
                    other => {
                        return Err(error(format!(
                            "unknown operation :{other} (expected :get, :put or :append)"
                        )))
                    }
                };
                in_flight.call(file, number, client, &function, input, time)?;
            }
            "ok" => {
                let (input, call) = in_flight.complete(file, number, client, &function)?;
                let output = match input {
                    KvInput::Get(_) => KvOutput::Value(value),
                    _ => KvOutput::Done,
                };
                operations.push(Operation::returned(client, input, output, call, time));
            }
            "fail" => {
                in_flight.complete(file, number, client, &function)?;
            }
            "info" => {
                let (input, call) = in_flight.complete(file, number, client, &function)?;
                if !matches!(input, KvInput::Get(_)) {
                    operations.push(Operation::unknown(client, input, call));
                }
            }
            other => {
                return Err(error(format!(
                    "unknown :type :{other} (expected :invoke, :ok, :fail or :info)"
                )))
            }
        }
    }
    for (client, input, call) in in_flight.into_pending() {
        if !matches!(input, KvInput::Get(_)) {
            operations.push(Operation::unknown(client, input, call));
        }
    }
    require_operations(file, operations)
}

fn keyword(map: &BTreeMap<String, EdnValue>, field: &str) -> Result<String, String> {
    match map.get(field) {
        Some(EdnValue::Keyword(value)) => Ok(value.clone()),
        other => Err(format!(":{field} must be a keyword, got {other:?}")),
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn reads_operations_and_refuses_broken_lines() {
        let log = r#"{:process 0, :type :invoke, :f :append, :key "0", :value "x"}
{:process 1, :type :invoke, :f :get, :key "0", :value nil}
{:process 0, :type :ok, :f :append, :key "0", :value "x"}
{:process 1, :type :ok, :f :get, :key "0", :value "x"}
"#;
        let history = parse("kv.txt", log).expect("valid");
        assert_eq!(history.len(), 2);
        assert_eq!(
            history[1].outcome,
            crate::history::Outcome::Returned(KvOutput::Value("x".into()))
        );
        let cases = [
            (
                "{:process 0, :type :invoke, :f :cas, :key \"0\", :value \"x\"}",
                "unknown operation :cas",
            ),
            (
                "{:process 0, :type :ok, :f :get, :key \"0\", :value \"x\"}",
                "without a call",
            ),
            (
                "{:process 0, :type :invoke, :f :get, :key \"0\"",
                "truncated",
            ),
            ("\n\n", "no operations"),
        ];
        for (log, expected) in cases {
            let error = parse("kv.txt", log).expect_err(log);
            assert!(error.to_string().contains(expected), "{log:?}: {error}");
        }
    }
}
