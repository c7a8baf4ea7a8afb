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
