//! The output contract: every JSON document and NDJSON line aeplens prints carries
//! `schema_version`, and its shape is the JSON Schema of the same name in `schema/`
//! (`check`, `findings`, `show`, `chains`, `envelope`).

use serde::Serialize;
use serde_json::Value;

/// The version of every JSON output. Adding a field keeps it; renaming, removing or
/// retyping a field, or changing a field's meaning, bumps it (and the schemas in `schema/`).
pub const SCHEMA_VERSION: &str = "1";

/// `value` as a versioned document: an object gets `schema_version` as its first member;
/// anything else (a list) becomes `{"schema_version": …, key: value}`.
pub fn versioned<T: Serialize>(key: &str, value: &T) -> Value {
    let version = Value::String(SCHEMA_VERSION.into());
    match serde_json::to_value(value).unwrap_or(Value::Null) {
        Value::Object(mut map) => {
            map.shift_insert(0, "schema_version".into(), version);
            Value::Object(map)
        }
        other => {
            let mut map = serde_json::Map::new();
            map.insert("schema_version".into(), version);
            map.insert(key.into(), other);
            Value::Object(map)
        }
    }
}

/// A versioned document, pretty-printed with a final newline.
pub fn document<T: Serialize>(key: &str, value: &T) -> String {
    let mut s = serde_json::to_string_pretty(&versioned(key, value)).unwrap_or_default();
    s.push('\n');
    s
}

/// A list as a versioned document, `{"schema_version": …, key: items}`, pretty-printed
/// with a final newline: what [`document`] gives for a list, written straight from the
/// items (no [`Value`] tree in between: a million findings print in a fraction of the
/// time).
pub fn list_document<T: Serialize>(key: &str, items: &[T]) -> String {
    /// The document's two members, in order.
    struct Listed<'a, T>(&'a str, &'a [T]);
    impl<T: Serialize> Serialize for Listed<'_, T> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut map = s.serialize_map(Some(2))?;
            map.serialize_entry("schema_version", SCHEMA_VERSION)?;
            map.serialize_entry(self.0, self.1)?;
            map.end()
        }
    }
    let mut s = serde_json::to_string_pretty(&Listed(key, items)).unwrap_or_default();
    s.push('\n');
    s
}

/// A versioned NDJSON line, with its newline.
pub fn ndjson_line<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string(&versioned("value", value)).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_get_the_version_first_and_lists_are_wrapped() {
        let doc = versioned("x", &serde_json::json!({"a": 1}));
        assert_eq!(
            doc.as_object().unwrap().keys().next().unwrap(),
            "schema_version"
        );
        assert_eq!(doc["a"], 1);
        let doc = versioned("findings", &[1, 2]);
        assert_eq!(doc["schema_version"], SCHEMA_VERSION);
        assert_eq!(doc["findings"], serde_json::json!([1, 2]));
        assert!(
            ndjson_line(&serde_json::json!({"b": true})).starts_with("{\"schema_version\":\"1\",")
        );
    }

    #[test]
    fn a_list_document_is_the_document_of_the_list() {
        let items = [
            serde_json::json!({"z": 1.5, "a": [1, {"k": null}], "s": "é\u{1}\\"}),
            serde_json::json!("x"),
            serde_json::json!(1e300),
        ];
        for n in 0..=items.len() {
            assert_eq!(
                list_document("xs", &items[..n]),
                document("xs", &&items[..n])
            );
        }
    }
}
