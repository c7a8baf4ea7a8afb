//! Upstream's object hashes, reproduced byte for byte so a cluster moving from upstream ESO to
//! us finds every Secret's `data-hash` annotation and every `syncedResourceVersion` already
//! right: no refetch and no rewrite on the switch. Upstream hashes Go's `%+v` rendering of a
//! value with SHA3-224 (`esutils.ObjectHash`); this module renders the same text.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use sha3::{Digest, Sha3_224};

/// `esutils.ObjectHash` of a Secret's data (`map[string][]byte`): Go prints
/// `map[key:[1 2 3] other:[]]`, keys sorted, bytes in decimal.
pub fn data_hash<'a>(data: impl IntoIterator<Item = (&'a String, &'a [u8])>) -> String {
    let mut text = String::from("map[");
    for (index, (key, value)) in data.into_iter().enumerate() {
        if index > 0 {
            text.push(' ');
        }
        let _ = write!(text, "{key}:[");
        for (position, byte) in value.iter().enumerate() {
            if position > 0 {
                text.push(' ');
            }
            let _ = write!(text, "{byte}");
        }
        text.push(']');
    }
    text.push(']');
    object_hash(&text)
}

/// Upstream's `HashMeta`: the hash of `struct{annotations, labels}`, printed by Go as
/// `{annotations:map[k:v] labels:map[k:v]}`.
pub fn meta_hash(
    annotations: Option<&BTreeMap<String, String>>,
    labels: Option<&BTreeMap<String, String>>,
) -> String {
    let text = format!(
        "{{annotations:{} labels:{}}}",
        go_string_map(annotations),
        go_string_map(labels)
    );
    object_hash(&text)
}

/// `esutils.ObjectHash` of a generic target's content (its `spec` or `data`): the JSON value
/// as Go prints the `map[string]interface{}` it decodes to.
pub fn value_hash(value: &serde_json::Value) -> String {
    let mut text = String::new();
    go_value(value, &mut text);
    object_hash(&text)
}

/// Go's `%+v` of a decoded JSON value: maps as `map[k:v]` with sorted keys, lists as `[a b]`,
/// null as `<nil>`, floats as `%g` with the shortest digits.
fn go_value(value: &serde_json::Value, text: &mut String) {
    use serde_json::Value;
    match value {
        Value::Null => text.push_str("<nil>"),
        Value::Bool(flag) => {
            let _ = write!(text, "{flag}");
        }
        Value::Number(number) => match (number.as_i64(), number.as_u64(), number.as_f64()) {
            (Some(integer), _, _) => {
                let _ = write!(text, "{integer}");
            }
            (_, Some(integer), _) => {
                let _ = write!(text, "{integer}");
            }
            (_, _, Some(float)) => text.push_str(&go_float(float)),
            _ => {}
        },
        Value::String(string) => text.push_str(string),
        Value::Array(items) => {
            text.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    text.push(' ');
                }
                go_value(item, text);
            }
            text.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            text.push_str("map[");
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    text.push(' ');
                }
                text.push_str(key);
                text.push(':');
                go_value(item, text);
            }
            text.push(']');
        }
    }
}

/// Go's `%v` of a float64 (strconv's `%g` with the shortest digits): exponent form below 1e-4
/// or from 1e6 on.
fn go_float(float: f64) -> String {
    let shortest = format!("{float:e}");
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        return format!("{float}");
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

/// Upstream's `reconcile.external-secrets.io/created-by` label value for targets an
/// ExternalSecret owns: the hash of `namespace/name`, so its old targets can be found.
pub fn owner_label(namespace: &str, name: &str) -> String {
    object_hash(&format!("{namespace}/{name}"))
}

/// Go's `%v` of a `map[string]string` (a nil map prints as an empty one).
fn go_string_map(map: Option<&BTreeMap<String, String>>) -> String {
    let entries: Vec<String> = map
        .into_iter()
        .flatten()
        .map(|(key, value)| format!("{key}:{value}"))
        .collect();
    format!("map[{}]", entries.join(" "))
}

/// Lowercase hex of the SHA3-224 of `text`.
fn object_hash(text: &str) -> String {
    Sha3_224::digest(text.as_bytes())
        .iter()
        .fold(String::with_capacity(56), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    // Expected values: SHA3-224 of the text Go's fmt prints for the same values.
    #[test]
    fn data_hash_matches_go_object_hash() {
        let one = [("k".to_owned(), b"v".to_vec())];
        assert_eq!(
            data_hash(one.iter().map(|(k, v)| (k, v.as_slice()))),
            "a5ed8ea1c1be40fdb1975cb0a6fd52a4803c7f13cc97721399013172"
        );
        let two: BTreeMap<String, Vec<u8>> = [
            ("user".to_owned(), b"app".to_vec()),
            ("password".to_owned(), b"p1".to_vec()),
        ]
        .into();
        assert_eq!(
            data_hash(two.iter().map(|(k, v)| (k, v.as_slice()))),
            "8644942ba8b5dee6761fe07477bc5b6005f689deba81887aa0e989be"
        );
        assert_eq!(
            data_hash(std::iter::empty()),
            "74a974446e359fb3e6baff9bd0058950e6edd0f040888d9989b0a11b"
        );
    }

    #[test]
    fn generic_content_prints_as_go_prints_unstructured_values() {
        let value = serde_json::json!({
            "b": [1, "two", null, true],
            "a": {"z": 1.5, "y": -3, "x": {}},
            "c": 1e-7,
            "d": 2.5e21,
            "e": 1234567.5,
            "f": 123456.5,
        });
        let mut text = String::new();
        go_value(&value, &mut text);
        assert_eq!(
            text,
            "map[a:map[x:map[] y:-3 z:1.5] b:[1 two <nil> true] c:1e-07 d:2.5e+21 e:1.2345675e+06 f:123456.5]"
        );
        assert_eq!(value_hash(&value), object_hash(&text));
        assert_ne!(value_hash(&value), value_hash(&serde_json::json!({})));
    }

    #[test]
    fn meta_hash_matches_go_hash_meta() {
        assert_eq!(
            meta_hash(None, None),
            "f47fe3c0b255b6dd8047cdffa772587bb829efe7a1cb70febeda2eb2"
        );
        assert_eq!(
            meta_hash(
                Some(&map(&[("force-sync", "1")])),
                Some(&map(&[("team", "a"), ("app", "demo")]))
            ),
            "df55355796614d752eb71d0c4f2c59e456fc12e467533eb403977d7b"
        );
    }
}
