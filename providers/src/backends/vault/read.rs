//! Turning a secret's data (or metadata) into what an ExternalSecret asked for (upstream's
//! `getSecretValue` and `GetSecretMap`).
//!
//! * Without a property: the whole document, as JSON.
//! * With one: a top-level key of that exact name first (so keys containing dots keep working),
//!   then a gjson-style path (see [`crate::property`]); neither is `NotFound` ("cannot find
//!   secret data for key"). Strings come back unquoted, `null` as nothing, anything else as its
//!   JSON text.
//! * Maps: the (property-selected) value must be a JSON object; its members come back as above.
//! * Metadata (`metadataPolicy: Fetch`) is a document of its own: the KV v2 system keys and the
//!   custom metadata, as a JSON object of strings encoded as Go does (HTML characters escaped).

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::value::{SecretMap, SecretValue};

/// The value `property` selects in `document` (all of it without one); `None` for a `null`.
pub(super) fn select(document: &RawValue, property: Option<&str>) -> Result<Option<Vec<u8>>> {
    let Some(property) = property else {
        return Ok(Some(document.get().as_bytes().to_vec()));
    };
    let members: BTreeMap<String, Box<RawValue>> = serde_json::from_str(document.get())
        .map_err(|_| ProviderError::invalid_data("failed to unmarshall JSON"))?;
    if let Some(member) = members.get(property) {
        return Ok(member_bytes(member));
    }
    json_property(document.get().as_bytes(), property)
        .map(Some)
        .ok_or_else(|| missing_property(property))
}

/// Upstream's error for a property the secret does not have, as `NotFound`.
pub(super) fn missing_property(property: &str) -> ProviderError {
    ProviderError::not_found(format!("cannot find secret data for key: {property:?}"))
}

/// A JSON object's members as a map.
pub(super) fn to_map(json: &[u8]) -> Result<SecretMap> {
    let members: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(json).map_err(|_| {
        ProviderError::invalid_data(
            "failed to unmarshal secret: the value is not a JSON object of key/value pairs",
        )
    })?;
    Ok(members
        .into_iter()
        .map(|(key, value)| {
            let bytes = member_bytes(&value).unwrap_or_default();
            (key, SecretValue::new(bytes))
        })
        .collect())
}

/// Metadata entries as a document.
pub(super) fn metadata_document(entries: &BTreeMap<String, String>) -> Result<Box<RawValue>> {
    let json = serde_json::to_string(entries).map_err(|error| {
        ProviderError::invalid_data(format!("failed to marshal metadata: {error}"))
    })?;
    RawValue::from_string(go_escape(&json)).map_err(|error| {
        ProviderError::invalid_data(format!("failed to marshal metadata: {error}"))
    })
}

/// One member's bytes: strings unquoted, `null` as `None`, anything else as JSON text.
fn member_bytes(member: &RawValue) -> Option<Vec<u8>> {
    let json = member.get().trim();
    if json == "null" {
        return None;
    }
    match serde_json::from_str::<String>(json) {
        Ok(text) => Some(text.into_bytes()),
        Err(_) => Some(json.as_bytes().to_vec()),
    }
}

/// Escapes what Go's `json.Marshal` escapes and serde_json does not (`<`, `>`, `&`, U+2028,
/// U+2029); these only occur inside strings of the encoded text.
fn go_escape(json: &str) -> String {
    let mut escaped = String::with_capacity(json.len());
    for character in json.chars() {
        match character {
            '<' => escaped.push_str("\\u003c"),
            '>' => escaped.push_str("\\u003e"),
            '&' => escaped.push_str("\\u0026"),
            '\u{2028}' => escaped.push_str("\\u2028"),
            '\u{2029}' => escaped.push_str("\\u2029"),
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCUMENT: &str =
        r#"{"a.b":"dotted","a":{"b":"nested"},"n":1.5,"none":null,"s":"text","list":["x"]}"#;

    fn pick(property: Option<&str>) -> Result<Option<String>> {
        let document = RawValue::from_string(DOCUMENT.to_owned()).unwrap();
        select(&document, property).map(|bytes| bytes.map(|b| String::from_utf8(b).unwrap()))
    }

    #[test]
    fn properties_prefer_exact_keys_then_paths() {
        assert_eq!(pick(None).unwrap().unwrap(), DOCUMENT);
        assert_eq!(pick(Some("a.b")).unwrap().unwrap(), "dotted");
        assert_eq!(pick(Some("a")).unwrap().unwrap(), r#"{"b":"nested"}"#);
        assert_eq!(pick(Some("n")).unwrap().unwrap(), "1.5");
        assert_eq!(pick(Some("list.0")).unwrap().unwrap(), "x");
        assert_eq!(pick(Some("none")).unwrap(), None);
        let error = pick(Some("absent")).unwrap_err();
        assert!(error.is_not_found());
        assert_eq!(
            error.message(),
            r#"cannot find secret data for key: "absent""#
        );
    }

    #[test]
    fn maps_unquote_strings_and_keep_json() {
        let map = to_map(DOCUMENT.as_bytes()).unwrap();
        let text = |key: &str| String::from_utf8(map[key].expose().to_vec()).unwrap();
        assert_eq!(text("s"), "text");
        assert_eq!(text("a"), r#"{"b":"nested"}"#);
        assert_eq!(text("none"), "");
        let error = to_map(b"\"plain\"").unwrap_err();
        assert!(!error.message().contains("plain"));
    }

    #[test]
    fn metadata_is_encoded_as_go_does() {
        let entries = BTreeMap::from([
            ("managed-by".to_owned(), "external-secrets".to_owned()),
            ("html".to_owned(), "<a&b>".to_owned()),
        ]);
        assert_eq!(
            metadata_document(&entries).unwrap().get(),
            r#"{"html":"\u003ca\u0026b\u003e","managed-by":"external-secrets"}"#
        );
    }
}
