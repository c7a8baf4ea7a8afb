//! Selecting a `property` out of a JSON value, as upstream does with gjson paths.
//!
//! Supported subset of the gjson path syntax: keys separated by `.`, a `\` escaping the next
//! character (so `a\.b` is the key `a.b`), and decimal indexes into arrays (`list.0`). Wildcards
//! (`*`, `?`), `#` queries and modifiers are not supported; such characters match literally.
//!
//! Like gjson, a selected string is returned unquoted and anything else is returned as the raw
//! JSON text of the document, with its original key order and spacing.

use std::collections::HashMap;

use serde_json::value::RawValue;

/// The value at `path` in the JSON `document`, or `None` if the document is not JSON or has
/// nothing there.
pub fn json_property(document: &[u8], path: &str) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(document).ok()?;
    let mut current: &RawValue = serde_json::from_str(text).ok()?;
    for segment in split_path(path) {
        current = child(current, &segment)?;
    }
    Some(raw_to_bytes(current))
}

/// A string as its unquoted text, anything else as its raw JSON.
pub fn raw_to_bytes(raw: &RawValue) -> Vec<u8> {
    let json = raw.get().trim();
    if json.starts_with('"')
        && let Ok(text) = serde_json::from_str::<String>(json)
    {
        return text.into_bytes();
    }
    json.as_bytes().to_vec()
}

fn child<'a>(parent: &'a RawValue, segment: &str) -> Option<&'a RawValue> {
    let json = parent.get().trim_start();
    if json.starts_with('{') {
        let object: HashMap<String, &RawValue> = serde_json::from_str(parent.get()).ok()?;
        object.get(segment).copied()
    } else if json.starts_with('[') {
        let index: usize = segment.parse().ok()?;
        let array: Vec<&RawValue> = serde_json::from_str(parent.get()).ok()?;
        array.get(index).copied()
    } else {
        None
    }
}

/// Splits a gjson path on unescaped dots, removing the escapes.
fn split_path(path: &str) -> Vec<String> {
    let mut segments = vec![String::new()];
    let mut characters = path.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => {
                if let Some(escaped) = characters.next() {
                    segments.last_mut().expect("non-empty").push(escaped);
                }
            }
            '.' => segments.push(String::new()),
            other => segments.last_mut().expect("non-empty").push(other),
        }
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(document: &str, path: &str) -> Option<String> {
        json_property(document.as_bytes(), path).map(|bytes| String::from_utf8(bytes).unwrap())
    }

    #[test]
    fn selects_like_gjson() {
        let document = r#"{"p1":"bar","p2":"bar2","n":{"deep":{"k":1.50}},"list":["a",{"b":true}],
            "a.b":"dotted","obj":{ "z": 1, "a": 2 }}"#;
        assert_eq!(get(document, "p2").as_deref(), Some("bar2"));
        assert_eq!(get(document, "n.deep.k").as_deref(), Some("1.50"));
        assert_eq!(get(document, "list.0").as_deref(), Some("a"));
        assert_eq!(get(document, "list.1.b").as_deref(), Some("true"));
        assert_eq!(get(document, r"a\.b").as_deref(), Some("dotted"));
        assert_eq!(
            get(document, "obj").as_deref(),
            Some(r#"{ "z": 1, "a": 2 }"#)
        );
    }

    #[test]
    fn missing_paths_and_non_json_are_none() {
        assert_eq!(get(r#"{"a":1}"#, "b"), None);
        assert_eq!(get(r#"{"a":1}"#, "a.b"), None);
        assert_eq!(get(r#"["x"]"#, "1"), None);
        assert_eq!(get("plain text", "a"), None);
    }
}
