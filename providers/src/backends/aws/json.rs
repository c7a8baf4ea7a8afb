//! The JSON handling both AWS services share, with upstream's gjson/sjson semantics:
//!
//! * [`select`]: a `property` of a value. A property containing dots is first tried as one
//!   literal top-level key (upstream escapes the dots), then as a path (see [`crate::property`]).
//!   Strings come back unquoted, `null` as nothing, anything else as its JSON text.
//! * [`set`]: the value with a string stored at a property path (upstream's `sjson.SetBytes`),
//!   creating the objects on the way; the value must be empty or JSON.
//! * [`to_map`]: a JSON object's members (upstream's `GetSecretMap`).
//! * [`tags_document`]: tags as the JSON object `metadataPolicy: Fetch` returns.
//!
//! Unlike sjson, the rewritten value's object keys come out sorted (serde_json without
//! `preserve_order`); the JSON is equivalent.

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::request::RemoteRef;
use crate::value::{SecretMap, SecretValue};

/// The value `property` selects in `document`, or `None` when there is nothing there (or the
/// document is not JSON).
fn select(document: &[u8], property: &str) -> Option<Vec<u8>> {
    let found = if property.contains('.') {
        json_property(document, &property.replace('.', "\\."))
            .or_else(|| json_property(document, property))
    } else {
        json_property(document, property)
    };
    found.map(|bytes| if bytes == b"null" { Vec::new() } else { bytes })
}

/// What a read of `remote_ref` returns from the `document` it addresses: all of it, or its
/// property (missing: `NotFound`, with upstream's message).
pub(super) fn selected(document: SecretValue, remote_ref: &RemoteRef) -> Result<SecretValue> {
    let Some(property) = remote_ref.property.as_deref() else {
        return Ok(document);
    };
    select(document.expose(), property)
        .map(SecretValue::new)
        .ok_or_else(|| {
            ProviderError::not_found(format!(
                "key {property} does not exist in secret {}",
                remote_ref.key
            ))
        })
}

/// `current` (empty or a JSON document) with the string `value` at `property`.
pub(super) fn set(current: &[u8], property: &str, value: &[u8]) -> Result<Vec<u8>> {
    let mut document: Value = if current.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Map::new())
    } else {
        serde_json::from_slice(current).map_err(|_| not_json())?
    };
    let text = Value::String(String::from_utf8_lossy(value).into_owned());
    let mut slot = &mut document;
    for segment in split_path(property) {
        slot = match slot {
            Value::Array(items) => match segment.parse::<usize>() {
                Ok(index) if index < items.len() => &mut items[index],
                Ok(index) if index == items.len() => {
                    items.push(Value::Null);
                    &mut items[index]
                }
                _ => {
                    return Err(ProviderError::invalid_request(format!(
                        "cannot set property {property:?}: {segment:?} is not an index of the \
                         array there"
                    )));
                }
            },
            other => {
                // A scalar on the way is replaced by an object, as sjson does; indexing `null`
                // by a key makes it an object.
                if !other.is_object() {
                    *other = Value::Null;
                }
                &mut other[segment.as_str()]
            }
        };
    }
    *slot = text;
    serde_json::to_vec(&document).map_err(|_| not_json())
}

/// Upstream's error for a property push into a value that is not JSON.
fn not_json() -> ProviderError {
    ProviderError::invalid_request(
        "PushSecret for aws secrets manager with a pushSecretData property requires a json secret",
    )
}

/// The members of the JSON object `json` (the value of remote key `key`): strings unquoted,
/// `null` empty, anything else as JSON text.
pub(super) fn to_map(json: &[u8], key: &str) -> Result<SecretMap> {
    let members: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(json).map_err(|_| {
        ProviderError::invalid_data(format!(
            "unable to unmarshal secret {key}: the value is not a JSON object"
        ))
    })?;
    Ok(members
        .into_iter()
        .map(|(name, member)| {
            let raw = member.get().trim();
            let bytes = match serde_json::from_str::<Option<String>>(raw) {
                Ok(text) => text.unwrap_or_default().into_bytes(),
                Err(_) => raw.as_bytes().to_vec(),
            };
            (name, SecretValue::new(bytes))
        })
        .collect())
}

/// Tags as a JSON object (keys sorted), what `metadataPolicy: Fetch` reads.
pub(super) fn tags_document(tags: &BTreeMap<String, String>) -> SecretValue {
    SecretValue::new(serde_json::to_vec(tags).unwrap_or_default())
}

/// Splits a path on unescaped dots, removing the escapes (gjson/sjson path syntax).
fn split_path(path: &str) -> Vec<String> {
    let mut segments = vec![String::new()];
    let mut characters = path.chars();
    while let Some(character) = characters.next() {
        let last = segments.last_mut().expect("never empty");
        match character {
            '\\' => last.extend(characters.next()),
            '.' => segments.push(String::new()),
            other => last.push(other),
        }
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: Option<Vec<u8>>) -> Option<String> {
        bytes.map(|bytes| String::from_utf8(bytes).unwrap())
    }

    #[test]
    fn dotted_properties_prefer_a_literal_key() {
        let document = br#"{"a.b":"literal","a":{"b":"nested","c":"deep"},"n":null,"o":{"x":1}}"#;
        assert_eq!(text(select(document, "a.b")).as_deref(), Some("literal"));
        assert_eq!(text(select(document, "a.c")).as_deref(), Some("deep"));
        assert_eq!(text(select(document, "n")).as_deref(), Some(""));
        assert_eq!(text(select(document, "o")).as_deref(), Some(r#"{"x":1}"#));
        assert_eq!(select(document, "absent"), None);
        assert_eq!(select(b"plain text", "a"), None);
    }

    #[test]
    fn set_stores_strings_along_paths() {
        let set_text = |current: &str, property: &str, value: &str| {
            String::from_utf8(set(current.as_bytes(), property, value.as_bytes()).unwrap()).unwrap()
        };
        assert_eq!(set_text("", "user", "admin"), r#"{"user":"admin"}"#);
        assert_eq!(
            set_text(r#"{"user":"admin","n":1}"#, "pass", "s3cret"),
            r#"{"n":1,"pass":"s3cret","user":"admin"}"#
        );
        assert_eq!(set_text(r#"{"a":"x"}"#, "a.b", "v"), r#"{"a":{"b":"v"}}"#);
        assert_eq!(set_text("{}", r"a\.b", "v"), r#"{"a.b":"v"}"#);
        assert_eq!(set_text(r#"{"l":["x"]}"#, "l.1", "y"), r#"{"l":["x","y"]}"#);
        let error = set(b"not json: hunter2", "a", b"v").unwrap_err();
        assert!(!error.message().contains("hunter2"));
    }

    #[test]
    fn maps_unquote_strings_and_keep_other_json() {
        let map = to_map(br#"{"s":"text","n":1.5,"o":{"a":1},"z":null}"#, "key").unwrap();
        let text = |name: &str| String::from_utf8(map[name].expose().to_vec()).unwrap();
        assert_eq!(text("s"), "text");
        assert_eq!(text("n"), "1.5");
        assert_eq!(text("o"), r#"{"a":1}"#);
        assert_eq!(text("z"), "");
        let error = to_map(b"hunter2", "db").unwrap_err();
        assert_eq!(
            error.message(),
            "unable to unmarshal secret db: the value is not a JSON object"
        );
    }
}
