//! Jepsen etcd logs: a single register with read, write and compare-and-set.
//!
//! ```text
//! INFO  jepsen.util - 2    :invoke    :cas    [3 0]
//! INFO  jepsen.util - 2    :ok    :cas    [3 0]
//! INFO  jepsen.util - 4    :info    :write    :timed-out
//! ```
//! Fields are separated by tabs or runs of spaces. Time is the line number. `:ok` took effect;
//! `:fail` took no effect (a failed cas still says the register did not hold its expected value;
//! a failed read or write constrains nothing); `:info` is an unknown outcome, as is a call that
//! never returns.

use super::{require_operations, InFlight, ParseError};
use crate::history::{History, Operation};
use crate::register::{RegisterInput, RegisterOutput};

/// Reads a Jepsen etcd log.
pub fn parse(file: &str, text: &str) -> Result<History<RegisterInput, RegisterOutput>, ParseError> {
    let mut in_flight = InFlight::new();
    let mut operations = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let number = number + 1;
        let time = number as u64;
        if line.trim().is_empty() {
            continue;
        }
        let error = |message: String| ParseError::at(file, number, message);
        let Some((_, event)) = line.split_once("jepsen.util - ") else {
            return Err(error(format!("not a Jepsen event line: {line:?}")));
        };
        let fields: Vec<&str> = event.split_whitespace().collect();
        if fields.len() < 3 {
            return Err(error(format!(
                "truncated event {event:?}: expected process, type, function and value"
            )));
        }
        let client: u64 = fields[0]
            .parse()
            .map_err(|_| error(format!("bad process number {:?}", fields[0])))?;
        let (kind, function) = (fields[1], fields[2]);
        let value = fields[3..].join(" ");
        match kind {
            ":invoke" => {
                let input = parse_input(function, &value).map_err(error)?;
                in_flight.call(file, number, client, function, input, time)?;
            }
            ":ok" => {
                let (input, call) = in_flight.complete(file, number, client, function)?;
                let output = match input {
                    RegisterInput::Read => {
                        RegisterOutput::Value(parse_value(&value).map_err(error)?)
                    }
                    RegisterInput::Write(_) => RegisterOutput::Written,
                    RegisterInput::Cas { .. } => RegisterOutput::Swapped(true),
                };
                operations.push(Operation::returned(client, input, output, call, time));
            }
            ":fail" => {
                let (input, call) = in_flight.complete(file, number, client, function)?;
                if let RegisterInput::Cas { .. } = input {
                    operations.push(Operation::returned(
                        client,
                        input,
                        RegisterOutput::Swapped(false),
                        call,
                        time,
                    ));
                }
            }
            ":info" => {
                let (input, call) = in_flight.complete(file, number, client, function)?;
                if input != RegisterInput::Read {
                    operations.push(Operation::unknown(client, input, call));
                }
            }
            other => {
                return Err(error(format!(
                    "unknown event type {other:?} (expected :invoke, :ok, :fail or :info)"
                )))
            }
        }
    }
    for (client, input, call) in in_flight.into_pending() {
        if input != RegisterInput::Read {
            operations.push(Operation::unknown(client, input, call));
        }
    }
    require_operations(file, operations)
}

fn parse_input(function: &str, value: &str) -> Result<RegisterInput, String> {
    match function {
        ":read" => Ok(RegisterInput::Read),
        ":write" => Ok(RegisterInput::Write(parse_int(value)?)),
        ":cas" => {
            let inner = value
                .strip_prefix('[')
                .and_then(|v| v.strip_suffix(']'))
                .ok_or_else(|| format!("cas argument {value:?} is not [expected new]"))?;
            let parts: Vec<&str> = inner.split_whitespace().collect();
            match parts.as_slice() {
                [expected, new] => Ok(RegisterInput::Cas {
                    expected: parse_int(expected)?,
                    new: parse_int(new)?,
                }),
                _ => Err(format!("cas argument {value:?} is not [expected new]")),
            }
        }
        other => Err(format!(
            "unknown operation {other:?} (expected :read, :write or :cas)"
        )),
    }
}

fn parse_value(value: &str) -> Result<Option<i64>, String> {
    if value == "nil" {
        Ok(None)
    } else {
        parse_int(value).map(Some)
    }
}

fn parse_int(text: &str) -> Result<i64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("expected an integer, got {text:?}"))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn reads_calls_returns_failures_and_unknowns() {
        let log = "INFO  jepsen.util - 0\t:invoke\t:write\t3\n\
                   INFO  jepsen.util - 1\t:invoke\t:cas\t[3 4]\n\
                   INFO  jepsen.util - 0\t:ok\t:write\t3\n\
                   INFO  jepsen.util - 1\t:fail\t:cas\t[3 4]\n\
                   INFO  jepsen.util - 2\t:invoke\t:read\tnil\n\
                   INFO  jepsen.util - 2\t:ok\t:read\t3\n\
                   INFO  jepsen.util - 3\t:invoke\t:write\t9\n\
                   INFO  jepsen.util - 3\t:info\t:write\t:timed-out\n\
                   INFO  jepsen.util - 4\t:invoke\t:cas\t[1 2]\n";
        let history = parse("log", log).expect("valid");
        assert_eq!(history.len(), 5);
        assert_eq!(
            history[0],
            Operation::returned(0, RegisterInput::Write(3), RegisterOutput::Written, 1, 3)
        );
        assert_eq!(
            history[1].outcome,
            crate::history::Outcome::Returned(RegisterOutput::Swapped(false))
        );
        assert_eq!(
            history[3],
            Operation::unknown(3, RegisterInput::Write(9), 7)
        );
        assert_eq!(
            history[4],
            Operation::unknown(
                4,
                RegisterInput::Cas {
                    expected: 1,
                    new: 2
                },
                9
            )
        );
    }

    #[test]
    fn malformed_logs_get_an_error_naming_the_line() {
        let cases = [
            ("", "no operations"),
            ("INFO  jepsen.util - 0\t:invoke\t:frob\t3\n", "unknown operation \":frob\""),
            ("INFO  jepsen.util - 0\t:ok\t:write\t3\n", "without a call"),
            ("INFO  jepsen.util - 0\t:invoke\n", "truncated"),
            ("INFO  jepsen.util - 0\t:invoke\t:write\t3\nINFO  jepsen.util - 0\t:invoke\t:read\tnil\n", "still in flight"),
            ("INFO  jepsen.util - 0\t:invoke\t:write\tx\n", "expected an integer"),
            ("garbage\n", "not a Jepsen event line"),
        ];
        for (log, expected) in cases {
            let error = parse("f.log", log).expect_err(log);
            assert!(error.to_string().contains(expected), "{log:?}: {error}");
            assert!(error.to_string().starts_with("f.log:"), "{error}");
        }
    }
}
