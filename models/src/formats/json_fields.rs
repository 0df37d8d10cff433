//! One line of the native format as a JSON object whose fields are all known and all distinct.
//!
//! `serde_json::Value` keeps the last of two equal keys and any key it is given, so a misspelt
//! `output` or a field written twice would change a verdict without a word. [`Fields`] refuses
//! both: it reads the object itself, field by field.

use serde::de::{Deserialize, Deserializer, Error, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// The fields a line of the native format may have.
pub(crate) const KNOWN_FIELDS: &[&str] = &[
    "client", "op", "key", "input", "output", "call", "return", "outcome",
];

/// A JSON object's fields, each named once, in the order written.
#[derive(Debug)]
pub(crate) struct Fields(Vec<(String, Value)>);

impl Fields {
    /// Reads one line: a JSON object with distinct keys, or a message saying what is wrong.
    pub(crate) fn parse(line: &str) -> Result<Fields, String> {
        serde_json::from_str(line).map_err(|error| match error.classify() {
            serde_json::error::Category::Data => error.to_string(),
            _ => format!("not valid JSON ({error})"),
        })
    }

    /// The first field not in [`KNOWN_FIELDS`], if any.
    pub(crate) fn unknown_field(&self) -> Option<&str> {
        self.0
            .iter()
            .map(|(name, _)| name.as_str())
            .find(|name| !KNOWN_FIELDS.contains(name))
    }

    /// The fields as a JSON object (each named once, so none is lost).
    pub(crate) fn into_object(self) -> serde_json::Map<String, Value> {
        self.0.into_iter().collect()
    }

    /// Takes the field `name` out (`None` when the line does not have it).
    pub(crate) fn take(&mut self, name: &str) -> Option<Value> {
        let at = self.0.iter().position(|(field, _)| field == name)?;
        Some(self.0.remove(at).1)
    }
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Fields, D::Error> {
        deserializer.deserialize_map(FieldsVisitor)
    }
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = Fields;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
        let mut fields: Vec<(String, Value)> = Vec::new();
        while let Some((name, value)) = map.next_entry::<String, Value>()? {
            if fields.iter().any(|(field, _)| *field == name) {
                return Err(A::Error::custom(format!("field `{name}` appears twice")));
            }
            fields.push((name, value));
        }
        Ok(Fields(fields))
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::Fields;

    #[test]
    fn a_field_written_twice_is_refused() {
        let error = Fields::parse(r#"{"call":1,"call":2}"#).unwrap_err();
        assert!(error.contains("field `call` appears twice"), "{error}");
    }

    #[test]
    fn a_line_that_is_not_an_object_is_refused() {
        let error = Fields::parse("[1,2]").unwrap_err();
        assert!(error.contains("expected a JSON object"), "{error}");
        let error = Fields::parse(r#"{"call":"#).unwrap_err();
        assert!(error.starts_with("not valid JSON"), "{error}");
    }

    #[test]
    fn fields_are_taken_once_and_unknown_ones_are_named() {
        let mut fields = Fields::parse(r#"{"call":1,"outptu":null}"#).unwrap();
        assert_eq!(fields.unknown_field(), Some("outptu"));
        assert_eq!(fields.take("call"), Some(serde_json::json!(1)));
        assert_eq!(fields.take("call"), None);
    }
}
