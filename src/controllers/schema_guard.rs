//! Reading a watched object that may not match its schema without failing the whole list or
//! watch: [`Guarded`] decodes as the object or as its metadata and the decode error.
//!
//! kube's `DeserializeGuard` does the same, but first reads the object into a `serde_value`
//! tree and then clones that tree to try the typed decode: a B-tree node per JSON object,
//! twice. Decoding one SecretStore whose fake provider holds 10,011 entries (438 kB of JSON)
//! peaks at 15.8 MiB of heap that way (counted by a counting global allocator; the same for
//! a watch line and a list body), at every list and every watch event of that store, and
//! that set the controller's peak RSS (freed small chunks stay in it). [`Guarded`] copies
//! the object as compact JSON text instead, streamed from whatever the reader offers (so it
//! also works where serde buffers a field first, e.g. a watch event whose `object` comes
//! before its `type`), decodes the object from that text and, only if that fails, its
//! metadata: 2.4 MiB for the same store, of which the decoded store alone takes 1.9 MiB.
//! Errors of the outer reader (a truncated watch line) pass through as they are, so kube
//! still tells an incomplete line from a bad one.
//!
//! Neither of the crates made for this fits: serde_json's `RawValue` fails when serde buffers
//! the object first (that watch-line order), and `serde-transcode` turns the reader's errors
//! into the writer's, so kube would take a truncated watch line for a bad one.

use std::borrow::Cow;
use std::fmt;

use kube::Resource;
use kube::core::error_boundary::InvalidObject;
use kube::core::{ObjectMeta, PartialObjectMeta};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess};
use serde::{Deserialize, Serialize};

/// An object as a list or watch reads it: the object, or (when it does not decode as `K`)
/// its metadata and why, so the reader can log it and leave it out.
#[derive(Debug, Clone)]
pub struct Guarded<K>(pub Result<K, InvalidObject>);

impl<'de, K: DeserializeOwned + Resource> Deserialize<'de> for Guarded<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut text = Vec::new();
        Capture(&mut text).deserialize(deserializer)?;
        match serde_json::from_slice::<K>(&text) {
            Ok(object) => Ok(Self(Ok(object))),
            Err(error) => {
                let PartialObjectMeta { metadata, .. } =
                    serde_json::from_slice::<PartialObjectMeta<K>>(&text)
                        .map_err(de::Error::custom)?;
                Ok(Self(Err(InvalidObject {
                    error: error.to_string(),
                    metadata,
                })))
            }
        }
    }
}

impl<K: Resource> Resource for Guarded<K> {
    type DynamicType = K::DynamicType;
    type Scope = K::Scope;

    fn kind(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::version(dt)
    }
    fn plural(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        self.0
            .as_ref()
            .map_or_else(|invalid| &invalid.metadata, K::meta)
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.0
            .as_mut()
            .map_or_else(|invalid| &mut invalid.metadata, K::meta_mut)
    }
}

/// Writes the value it reads as compact JSON to its buffer. The depth is the reader's own
/// (serde_json stops at 128 levels), the size that of the text already read.
struct Capture<'a>(&'a mut Vec<u8>);

impl Capture<'_> {
    /// Writes one scalar as JSON (escaped strings; numbers as serde_json prints them).
    fn scalar<T: Serialize + ?Sized, E: de::Error>(self, value: &T) -> Result<(), E> {
        serde_json::to_writer(&mut *self.0, value).map_err(E::custom)
    }
}

impl<'de> DeserializeSeed<'de> for Capture<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> de::Visitor<'de> for Capture<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<(), E> {
        self.scalar(&value)
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<(), E> {
        self.scalar(&value)
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<(), E> {
        self.scalar(&value)
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<(), E> {
        self.scalar(&value)
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<(), E> {
        self.scalar(value)
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar(&())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.scalar(&())
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.deserialize(deserializer)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.deserialize(deserializer)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        items(self.0, *b"[]", |out| {
            Ok(seq.next_element_seed(Capture(out))?.is_some())
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        items(self.0, *b"{}", |out| {
            if map.next_key_seed(Capture(out))?.is_none() {
                return Ok(false);
            }
            out.push(b':');
            map.next_value_seed(Capture(out))?;
            Ok(true)
        })
    }
}

/// Writes `open`, the items `next` writes, comma-separated (it returns whether it wrote one),
/// and `close`.
fn items<E>(
    out: &mut Vec<u8>,
    [open, close]: [u8; 2],
    mut next: impl FnMut(&mut Vec<u8>) -> Result<bool, E>,
) -> Result<(), E> {
    out.push(open);
    let mut first = true;
    loop {
        let before = out.len();
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        if !next(out)? {
            out.truncate(before);
            break;
        }
    }
    out.push(close);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::v1::SecretStore;
    use kube::core::{ObjectList, WatchEvent};
    use serde_json::{Value, json};

    fn store(name: &str, provider: Value) -> Value {
        json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "SecretStore",
            "metadata": {"name": name, "namespace": "team-a", "resourceVersion": "7"},
            "spec": {"provider": provider},
        })
    }

    fn good(name: &str) -> Value {
        store(
            name,
            json!({"fake": {"data": [{"key": "k", "value": "v"}]}}),
        )
    }

    /// The name and the error of an object that did not decode.
    fn invalid(guarded: &Guarded<SecretStore>) -> Option<(&str, &str, &str)> {
        let invalid = guarded.0.as_ref().err()?;
        Some((
            invalid.metadata.name.as_deref()?,
            invalid.metadata.namespace.as_deref()?,
            &invalid.error,
        ))
    }

    #[test]
    fn a_valid_store_decodes_as_itself() {
        let text = good("a").to_string();
        let guarded: Guarded<SecretStore> = serde_json::from_str(&text).unwrap();
        assert_eq!(guarded.meta().name.as_deref(), Some("a"));
        let decoded = guarded.0.unwrap();
        assert_eq!(decoded, serde_json::from_str::<SecretStore>(&text).unwrap());
        assert_eq!(decoded.spec.provider.fake.unwrap().data.len(), 1);
    }

    #[test]
    fn a_store_off_the_schema_decodes_as_its_metadata_and_the_problem() {
        let wrong_type = store("wrong-type", json!({"fake": {"data": "not-a-list"}}));
        let guarded: Guarded<SecretStore> = serde_json::from_str(&wrong_type.to_string()).unwrap();
        let (name, namespace, error) = invalid(&guarded).unwrap();
        assert_eq!((name, namespace), ("wrong-type", "team-a"));
        assert!(error.contains("expected a sequence"), "{error}");
        assert_eq!(guarded.meta().resource_version.as_deref(), Some("7"));

        let no_provider = store("no-provider", json!(42));
        let guarded: Guarded<SecretStore> = serde_json::from_value(no_provider).unwrap();
        let (name, _, error) = invalid(&guarded).unwrap();
        assert_eq!(name, "no-provider");
        assert!(error.contains("integer `42`"), "{error}");
    }

    #[test]
    fn without_readable_metadata_the_whole_read_fails() {
        let text = json!({"metadata": {"name": 1}, "spec": {}}).to_string();
        assert!(serde_json::from_str::<Guarded<SecretStore>>(&text).is_err());
    }

    /// kube reads list bodies and watch lines with `serde_json::from_str`: one bad store
    /// among good ones is the only error, wherever serde reads the object from.
    #[test]
    fn one_bad_store_in_a_list_or_watch_is_the_only_error() {
        let bad = store("bad", json!({"fake": {"data": [{"key": 1}]}}));
        let list = json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "SecretStoreList",
            "metadata": {"resourceVersion": "9"},
            "items": [good("a"), bad, good("b")],
        });
        let list: ObjectList<Guarded<SecretStore>> =
            serde_json::from_str(&list.to_string()).unwrap();
        let names: Vec<_> = list
            .items
            .iter()
            .map(|item| (item.meta().name.as_deref(), item.0.is_ok()))
            .collect();
        assert_eq!(
            names,
            [(Some("a"), true), (Some("bad"), false), (Some("b"), true)]
        );

        let bad = store("bad", json!({"fake": "x"})).to_string();
        // The API server writes `type` first; serde buffers an `object` that comes first.
        for line in [
            format!(r#"{{"type":"MODIFIED","object":{bad}}}"#),
            format!(r#"{{"object":{bad},"type":"MODIFIED"}}"#),
        ] {
            let event: WatchEvent<Guarded<SecretStore>> = serde_json::from_str(&line).unwrap();
            let WatchEvent::Modified(guarded) = event else {
                panic!("{line}")
            };
            assert_eq!(invalid(&guarded).map(|(name, ..)| name), Some("bad"));
        }
        let line = format!(r#"{{"type":"ADDED","object":{}}}"#, good("a"));
        let event: WatchEvent<Guarded<SecretStore>> = serde_json::from_str(&line).unwrap();
        assert!(matches!(event, WatchEvent::Added(Guarded(Ok(_)))));
    }

    /// kube skips a watch line cut short (`is_eof`) instead of reporting it: the reader's
    /// own error must come through.
    #[test]
    fn a_truncated_watch_line_stays_an_end_of_input_error() {
        let line = format!(r#"{{"type":"ADDED","object":{}}}"#, good("a"));
        let cut = line.get(..line.len() / 2).unwrap();
        let error = serde_json::from_str::<WatchEvent<Guarded<SecretStore>>>(cut).unwrap_err();
        assert!(error.is_eof(), "{error}");
    }

    #[test]
    fn the_copy_is_the_same_json() {
        let value = json!({
            "escaped": "quote \" backslash \\ newline \n tab \t nul \u{0} ünïcode ☃",
            "numbers": [0, -1, 18446744073709551615u64, -9223372036854775808i64, 1.5, -2.5e-300],
            "empty": [{}, [], ""],
            "nested": {"a": [[1, [2]], {"b": null}], "t": true, "f": false},
        });
        for text in [
            value.to_string(),
            serde_json::to_string_pretty(&value).unwrap(),
        ] {
            let mut copy = Vec::new();
            Capture(&mut copy)
                .deserialize(&mut serde_json::Deserializer::from_str(&text))
                .unwrap();
            assert_eq!(serde_json::from_slice::<Value>(&copy).unwrap(), value);
            assert!(!copy.contains(&b'\n'));
        }
    }
}
