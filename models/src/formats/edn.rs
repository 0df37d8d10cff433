//! Just enough EDN to read one flat map per line: `{:process 0, :type :ok, :key "3", :value nil}`.

use std::collections::BTreeMap;

/// A value in a flat EDN map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EdnValue {
    /// `nil`.
    Nil,
    /// A keyword, without its colon.
    Keyword(String),
    /// A string.
    Text(String),
    /// An integer.
    Integer(i64),
}

/// Parses a flat map of keyword keys to scalar values.
pub fn parse_map(line: &str) -> Result<BTreeMap<String, EdnValue>, String> {
    let body = line
        .trim()
        .strip_prefix('{')
        .and_then(|rest| rest.strip_suffix('}'))
        .ok_or_else(|| "not a map: expected {...} (truncated line?)".to_string())?;
    let mut chars = body.chars().peekable();
    let mut map = BTreeMap::new();
    loop {
        skip_separators(&mut chars);
        if chars.peek().is_none() {
            return Ok(map);
        }
        let key = match read_value(&mut chars)? {
            EdnValue::Keyword(key) => key,
            other => return Err(format!("map key {other:?} is not a keyword")),
        };
        skip_separators(&mut chars);
        if chars.peek().is_none() {
            return Err(format!("key :{key} has no value"));
        }
        let value = read_value(&mut chars)?;
        if map.insert(key.clone(), value).is_some() {
            return Err(format!("key :{key} appears twice"));
        }
    }
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_separators(chars: &mut Chars<'_>) {
    while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
        chars.next();
    }
}

fn read_value(chars: &mut Chars<'_>) -> Result<EdnValue, String> {
    match chars.peek() {
        Some('"') => {
            chars.next();
            let mut text = String::new();
            loop {
                match chars.next() {
                    None => return Err("unterminated string".to_string()),
                    Some('"') => return Ok(EdnValue::Text(text)),
                    Some('\\') => match chars.next() {
                        Some('n') => text.push('\n'),
                        Some('t') => text.push('\t'),
                        Some(c @ ('"' | '\\')) => text.push(c),
                        other => return Err(format!("unsupported escape {other:?}")),
                    },
                    Some(c) => text.push(c),
                }
            }
        }
        Some(_) => {
            let mut token = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == ',' {
                    break;
                }
                token.push(c);
                chars.next();
            }
            if token == "nil" {
                Ok(EdnValue::Nil)
            } else if let Some(keyword) = token.strip_prefix(':') {
                Ok(EdnValue::Keyword(keyword.to_string()))
            } else {
                token
                    .parse()
                    .map(EdnValue::Integer)
                    .map_err(|_| format!("unsupported value {token:?}"))
            }
        }
        None => Err("missing value".to_string()),
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn parses_flat_maps_and_rejects_broken_ones() {
        let map = parse_map(r#"{:process 0, :type :ok, :key "a \"b\"", :value nil}"#).unwrap();
        assert_eq!(map["process"], EdnValue::Integer(0));
        assert_eq!(map["type"], EdnValue::Keyword("ok".into()));
        assert_eq!(map["key"], EdnValue::Text("a \"b\"".into()));
        assert_eq!(map["value"], EdnValue::Nil);
        assert!(parse_map(r#"{:process 0, :type :ok, :key "x"#).is_err());
        assert!(parse_map(r#"{:process 0, :type"#).is_err());
        assert!(parse_map(r#"{:process}"#).is_err());
    }
}
