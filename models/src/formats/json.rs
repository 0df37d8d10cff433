//! The native format: JSON lines, one operation per line, for both models.
//!
//! ```text
//! {"client":0,"op":"write","input":3,"output":null,"call":100,"return":180,"outcome":"ok"}
//! {"client":1,"op":"cas","input":[3,4],"output":false,"call":120,"return":200,"outcome":"ok"}
//! {"client":2,"op":"read","input":null,"output":3,"call":150,"return":null,"outcome":"unknown"}
//! {"client":3,"op":"append","key":"k","input":"x","output":null,"call":5,"return":9,"outcome":"ok"}
//! {"client":4,"op":"get","key":"k","input":null,"output":"x","call":10,"return":12,"outcome":"ok"}
//! ```
//!
//! - `client`: who issued it (one operation in flight per client);
//! - `op`: `read`, `write`, `cas` (register) or `get`, `put`, `append` (key-value, with `key`);
//! - `input`: the argument (`write`: integer; `cas`: `[expected, new]`; `put`/`append`: string);
//! - `output`: the result (`read`: integer or null; `cas`: whether it swapped; `get`: string);
//! - `call`, `return`: times on any scale where only order matters (`return` null if unknown);
//! - `outcome`: `ok` (took effect once, between call and return), `unknown` (timed out: took
//!   effect at some point after the call, or never) or `failed` (definitely took no effect).

use super::json_fields::{Fields, KNOWN_FIELDS};
use super::{require_operations, ParseError};
use crate::history::{History, Operation, Outcome};
use crate::kv::{KvInput, KvOutput};
use crate::register::{RegisterInput, RegisterOutput};
use serde_json::{json, Map, Value};

/// One line's fields, before the model gives meaning to `op`, `input` and `output` (`None`: the
/// line does not have the field).
struct Record {
    client: u64,
    op: String,
    key: Option<String>,
    input: Option<Value>,
    output: Option<Value>,
    call: u64,
    ret: Option<u64>,
    outcome: String,
}

fn read_records(file: &str, text: &str) -> Result<Vec<(usize, Record)>, ParseError> {
    let mut records = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let number = number + 1;
        if line.trim().is_empty() {
            continue;
        }
        let record = read_record(line).map_err(|message| ParseError::at(file, number, message))?;
        records.push((number, record));
    }
    refuse_overlapping_calls(file, &records)?;
    Ok(records)
}

fn read_record(line: &str) -> Result<Record, String> {
    let mut fields = Fields::parse(line)?;
    if let Some(unknown) = fields.unknown_field() {
        return Err(format!(
            "unknown field `{unknown}` (the fields are {})",
            KNOWN_FIELDS.join(", ")
        ));
    }
    let mut required = |field: &str| {
        fields
            .take(field)
            .ok_or_else(|| format!("the field `{field}` is missing"))
    };
    let integer = |value: Value, field: &str| {
        value
            .as_u64()
            .ok_or_else(|| format!("`{field}` must be a non-negative integer, got {value}"))
    };
    let client = integer(required("client")?, "client")?;
    let op = match required("op")? {
        Value::String(op) => op,
        other => return Err(format!("`op` must be a string, got {other}")),
    };
    let call = integer(required("call")?, "call")?;
    let outcome = match required("outcome")? {
        Value::String(outcome) => outcome,
        other => return Err(format!("`outcome` must be a string, got {other}")),
    };
    let ret = match fields.take("return") {
        None | Some(Value::Null) => None,
        Some(value) => Some(integer(value, "return")?),
    };
    if let Some(ret) = ret.filter(|&ret| ret < call) {
        return Err(format!("returns at {ret} before its call at {call}"));
    }
    let key = match fields.take("key") {
        None => None,
        Some(Value::String(key)) => Some(key),
        Some(other) => return Err(format!("`key` must be a string, got {other}")),
    };
    Ok(Record {
        client,
        op,
        key,
        input: fields.take("input"),
        output: fields.take("output"),
        call,
        ret,
        outcome,
    })
}

/// Refuses a client that calls again before its previous operation returned: the format allows
/// one operation in flight per client. An operation whose outcome is unknown never returned; its
/// client gave up on it and may go on.
fn refuse_overlapping_calls(file: &str, records: &[(usize, Record)]) -> Result<(), ParseError> {
    let mut by_client: Vec<(u64, u64, Option<u64>, usize)> = records
        .iter()
        .map(|(number, record)| (record.client, record.call, record.ret, *number))
        .collect();
    by_client.sort_unstable();
    // The latest return so far of the client at hand: (client, return, its line).
    let mut in_flight: Option<(u64, u64, usize)> = None;
    for (client, call, ret, line) in by_client {
        if let Some((_, until, since)) =
            in_flight.filter(|&(of, until, _)| of == client && call < until)
        {
            return Err(ParseError::at(
                file,
                line,
                format!(
                    "client {client} calls at {call} while its operation of line {since} is in \
                     flight until {until} (one operation per client at a time)"
                ),
            ));
        }
        if let Some(ret) = ret {
            if in_flight.is_none_or(|(of, until, _)| of != client || ret > until) {
                in_flight = Some((client, ret, line));
            }
        }
    }
    Ok(())
}

fn to_operation<I, O>(
    file: &str,
    number: usize,
    record: Record,
    input: I,
    output: Result<O, String>,
) -> Result<Option<Operation<I, O>>, ParseError> {
    let error = |message: String| ParseError::at(file, number, message);
    match record.outcome.as_str() {
        "ok" => {
            let ret = record
                .ret
                .ok_or_else(|| error("an `ok` operation needs a `return` time".to_string()))?;
            Ok(Some(Operation::returned(
                record.client,
                input,
                output.map_err(error)?,
                record.call,
                ret,
            )))
        }
        "unknown" if record.ret.is_some() => Err(error(
            "an `unknown` operation never returned: its `return` must be null".to_string(),
        )),
        "unknown" => Ok(Some(Operation::unknown(record.client, input, record.call))),
        "failed" => Ok(None),
        other => Err(error(format!(
            "unknown outcome {other:?} (expected ok, unknown or failed)"
        ))),
    }
}

fn int(value: &Value, what: &str) -> Result<i64, String> {
    value
        .as_i64()
        .ok_or_else(|| format!("{what} must be an integer, got {value}"))
}

fn text(value: &Value, what: &str) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{what} must be a string, got {value}"))
}

/// The `field` an operation `what` must have (null counts as given).
fn given<'a>(value: &'a Option<Value>, what: &str, field: &str) -> Result<&'a Value, String> {
    value
        .as_ref()
        .ok_or_else(|| format!("{what} needs an `{field}`"))
}

/// Refuses a `field` the operation `what` does not take (null is the same as leaving it out).
fn not_given(value: &Option<Value>, what: &str, field: &str) -> Result<(), String> {
    match value {
        None | Some(Value::Null) => Ok(()),
        Some(other) => Err(format!("{what} takes no `{field}`, got {other}")),
    }
}

/// What a model makes of one record: its input, and its output or why the output is invalid
/// (only consulted when the operation returned).
type Decoded<I, O> = (I, Result<O, String>);

/// Reads every record, gives it meaning with `decode`, and keeps the operations that may have
/// taken effect. Any error names the file and line.
fn parse_with<I, O>(
    file: &str,
    text: &str,
    decode: impl Fn(&Record) -> Result<Decoded<I, O>, String>,
) -> Result<History<I, O>, ParseError> {
    let mut history = Vec::new();
    for (number, record) in read_records(file, text)? {
        let (input, output) =
            decode(&record).map_err(|message| ParseError::at(file, number, message))?;
        if let Some(operation) = to_operation(file, number, record, input, output)? {
            history.push(operation);
        }
    }
    require_operations(file, history)
}

/// Reads a register history in the native format.
pub fn parse_register(
    file: &str,
    text_in: &str,
) -> Result<History<RegisterInput, RegisterOutput>, ParseError> {
    parse_with(file, text_in, |record| {
        if let Some(key) = &record.key {
            return Err(format!("a register operation has no `key`, got {key:?}"));
        }
        match record.op.as_str() {
            "read" => {
                not_given(&record.input, "a read", "input")?;
                let output =
                    given(&record.output, "a read that returned", "output").and_then(|output| {
                        match output {
                            Value::Null => Ok(RegisterOutput::Value(None)),
                            value => int(value, "a read's output")
                                .map(|v| RegisterOutput::Value(Some(v))),
                        }
                    });
                Ok((RegisterInput::Read, output))
            }
            "write" => {
                not_given(&record.output, "a write", "output")?;
                let input = given(&record.input, "a write", "input")?;
                Ok((
                    RegisterInput::Write(int(input, "a write's input")?),
                    Ok(RegisterOutput::Written),
                ))
            }
            "cas" => {
                let input = given(&record.input, "a cas", "input")?;
                let pair = input.as_array().filter(|a| a.len() == 2);
                let pair = pair
                    .ok_or_else(|| format!("a cas's input must be [expected, new], got {input}"))?;
                let input = RegisterInput::Cas {
                    expected: int(&pair[0], "cas expected")?,
                    new: int(&pair[1], "cas new")?,
                };
                let output =
                    given(&record.output, "a cas that returned", "output").and_then(|output| {
                        output
                            .as_bool()
                            .map(RegisterOutput::Swapped)
                            .ok_or_else(|| {
                                format!("a cas's output must be true or false, got {output}")
                            })
                    });
                Ok((input, output))
            }
            other => Err(format!(
                "unknown register operation {other:?} (expected read, write or cas)"
            )),
        }
    })
}

/// Reads a key-value history in the native format.
pub fn parse_kv(file: &str, text_in: &str) -> Result<History<KvInput, KvOutput>, ParseError> {
    parse_with(file, text_in, |record| {
        let key = record
            .key
            .clone()
            .ok_or_else(|| "a key-value operation needs a `key`".to_string())?;
        match record.op.as_str() {
            "get" => {
                not_given(&record.input, "a get", "input")?;
                let output = given(&record.output, "a get that returned", "output")
                    .and_then(|output| text(output, "a get's output").map(KvOutput::Value));
                Ok((KvInput::Get(key), output))
            }
            "put" | "append" => {
                let what = if record.op == "put" {
                    "a put"
                } else {
                    "an append"
                };
                not_given(&record.output, what, "output")?;
                let value = text(
                    given(&record.input, what, "input")?,
                    &format!("{what}'s input"),
                )?;
                let input = if record.op == "put" {
                    KvInput::Put(key, value)
                } else {
                    KvInput::Append(key, value)
                };
                Ok((input, Ok(KvOutput::Done)))
            }
            other => Err(format!(
                "unknown key-value operation {other:?} (expected get, put or append)"
            )),
        }
    })
}

fn line(
    client: u64,
    op: &str,
    key: Option<&str>,
    input: Value,
    output: Value,
    operation_times: (u64, Option<u64>),
    unknown: bool,
) -> String {
    let mut object = Map::new();
    object.insert("client".into(), json!(client));
    object.insert("op".into(), json!(op));
    if let Some(key) = key {
        object.insert("key".into(), json!(key));
    }
    object.insert("input".into(), input);
    object.insert("output".into(), output);
    object.insert("call".into(), json!(operation_times.0));
    object.insert("return".into(), json!(operation_times.1));
    object.insert(
        "outcome".into(),
        json!(if unknown { "unknown" } else { "ok" }),
    );
    Value::Object(object).to_string()
}

/// Writes a key-value history in the native format (one line per operation).
pub fn write_kv(history: &History<KvInput, KvOutput>) -> String {
    let mut out = String::new();
    for op in history {
        let (name, key, input) = match &op.input {
            KvInput::Get(key) => ("get", key, Value::Null),
            KvInput::Put(key, value) => ("put", key, json!(value)),
            KvInput::Append(key, value) => ("append", key, json!(value)),
        };
        let output = match &op.outcome {
            Outcome::Returned(KvOutput::Value(value)) => json!(value),
            _ => Value::Null,
        };
        out.push_str(&line(
            op.client,
            name,
            Some(key),
            input,
            output,
            (op.call, op.ret),
            op.ret.is_none(),
        ));
        out.push('\n');
    }
    out
}

/// Writes a register history in the native format (one line per operation).
pub fn write_register(history: &History<RegisterInput, RegisterOutput>) -> String {
    let mut out = String::new();
    for op in history {
        let (name, input) = match op.input {
            RegisterInput::Read => ("read", Value::Null),
            RegisterInput::Write(value) => ("write", json!(value)),
            RegisterInput::Cas { expected, new } => ("cas", json!([expected, new])),
        };
        let output = match &op.outcome {
            Outcome::Returned(RegisterOutput::Value(value)) => json!(value),
            Outcome::Returned(RegisterOutput::Swapped(swapped)) => json!(swapped),
            _ => Value::Null,
        };
        out.push_str(&line(
            op.client,
            name,
            None,
            input,
            output,
            (op.call, op.ret),
            op.ret.is_none(),
        ));
        out.push('\n');
    }
    out
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn register_and_kv_histories_round_trip() {
        let register = vec![
            Operation::returned(0, RegisterInput::Write(3), RegisterOutput::Written, 1, 5),
            Operation::returned(
                1,
                RegisterInput::Cas {
                    expected: 3,
                    new: 4,
                },
                RegisterOutput::Swapped(false),
                2,
                6,
            ),
            Operation::returned(2, RegisterInput::Read, RegisterOutput::Value(None), 3, 4),
            Operation::unknown(3, RegisterInput::Write(9), 7),
        ];
        assert_eq!(
            parse_register("r.jsonl", &write_register(&register)),
            Ok(register)
        );
        let kv = vec![
            Operation::returned(
                0,
                KvInput::Append("k".into(), "x".into()),
                KvOutput::Done,
                1,
                5,
            ),
            Operation::returned(
                1,
                KvInput::Get("k".into()),
                KvOutput::Value("x".into()),
                6,
                7,
            ),
            Operation::unknown(2, KvInput::Put("k".into(), "y".into()), 8),
        ];
        assert_eq!(parse_kv("kv.jsonl", &write_kv(&kv)), Ok(kv));
    }

    #[test]
    fn failed_operations_took_no_effect_and_are_dropped() {
        let text = r#"{"client":0,"op":"write","input":1,"call":0,"return":1,"outcome":"failed"}
{"client":1,"op":"read","output":null,"call":2,"return":3,"outcome":"ok"}"#;
        assert_eq!(parse_register("f", text).unwrap().len(), 1);
    }

    #[test]
    fn malformed_lines_get_an_error_naming_the_line() {
        let cases = [
            (
                r#"{"client":0,"op":"frob","call":0,"return":1,"outcome":"ok"}"#,
                "f:1: unknown register operation \"frob\"",
            ),
            (
                r#"{"client":0,"op":"write","input":1,"call":5,"return":1,"outcome":"ok"}"#,
                "before its call",
            ),
            (
                r#"{"client":0,"op":"write","input":1,"call":5"#,
                "not valid JSON",
            ),
            (
                r#"{"client":0,"op":"write","input":"x","call":0,"return":1,"outcome":"ok"}"#,
                "must be an integer",
            ),
            (
                r#"{"client":0,"op":"write","input":1,"call":0,"outcome":"ok"}"#,
                "needs a `return` time",
            ),
            ("", "no operations"),
        ];
        for (text, expected) in cases {
            let error = parse_register("f", text).expect_err(text);
            assert!(error.to_string().contains(expected), "{text}: {error}");
        }
        let error = parse_kv(
            "f",
            r#"{"client":0,"op":"get","output":"x","call":0,"return":1,"outcome":"ok"}"#,
        )
        .unwrap_err();
        assert!(error.to_string().contains("needs a `key`"), "{error}");
    }

    /// Each line is well-formed JSON that a lenient reader would take, with a meaning the writer
    /// did not intend: every one is refused, naming what is wrong.
    #[test]
    fn records_a_lenient_reader_would_misread_are_refused() {
        let cases = [
            (
                r#"{"client":0,"op":"read","outptu":1,"call":0,"return":1,"outcome":"ok"}"#,
                "unknown field `outptu`",
            ),
            (
                r#"{"client":0,"op":"read","call":0,"return":1,"outcome":"ok"}"#,
                "a read that returned needs an `output`",
            ),
            (
                r#"{"client":0,"op":"write","input":1,"call":0,"return":1}"#,
                "the field `outcome` is missing",
            ),
            (
                r#"{"client":0,"op":"write","input":1,"input":2,"call":0,"return":1,"outcome":"ok"}"#,
                "field `input` appears twice",
            ),
            (
                r#"{"client":0,"op":"write","output":1,"input":1,"call":0,"return":1,"outcome":"ok"}"#,
                "a write takes no `output`",
            ),
            (
                r#"{"client":0,"op":"read","input":4,"output":1,"call":0,"return":1,"outcome":"ok"}"#,
                "a read takes no `input`",
            ),
            (
                r#"{"client":0,"op":"write","input":1,"call":0,"return":1,"outcome":"unknown"}"#,
                "its `return` must be null",
            ),
            (
                r#"{"client":0,"op":"write","key":"k","input":1,"call":0,"return":1,"outcome":"ok"}"#,
                "a register operation has no `key`",
            ),
            (
                r#"{"client":0,"op":"write","input":1,"call":0,"outcome":"ok","return":9}
{"client":0,"op":"read","output":1,"call":5,"return":6,"outcome":"ok"}"#,
                "f:2: client 0 calls at 5 while its operation of line 1 is in flight until 9",
            ),
        ];
        for (text, expected) in cases {
            let error = parse_register("f", text).expect_err(text);
            assert!(error.to_string().contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn a_client_may_go_on_after_an_operation_it_gave_up_on() {
        let text = r#"{"client":0,"op":"write","input":1,"call":0,"return":null,"outcome":"unknown"}
{"client":0,"op":"read","output":1,"call":5,"return":6,"outcome":"ok"}
{"client":0,"op":"read","output":1,"call":6,"return":6,"outcome":"ok"}"#;
        assert_eq!(parse_register("f", text).unwrap().len(), 3);
    }
}
