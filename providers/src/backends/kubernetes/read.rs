//! What a read returns, computed from a fetched Secret (pure, so tested without a server).
//!
//! * No property: the Secret's data as a JSON object of strings (keys sorted), or with
//!   `metadataPolicy: Fetch` `{"annotations": {...}, "labels": {...}}`.
//! * A property names a data key; if there is none, `a.b` reads the JSON path `b` inside key
//!   `a` (a key containing dots wins). With `metadataPolicy: Fetch` a property is `labels`,
//!   `annotations`, `labels.<name>` or `labels.<name>.<path into that JSON value>`.
//! * Maps: the Secret's data (or its metadata as two JSON values); with a property, that key's
//!   value parsed as a JSON object whose members are returned as JSON (strings stay quoted,
//!   as upstream).
//!
//! A missing property is `NotFound`, as for every provider of this crate. Upstream returns a
//! plain error there; `NotFound` lets the ExternalSecret's deletionPolicy apply.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use serde::Serialize;

use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::request::{MetadataPolicy, RemoteRef};
use crate::value::{SecretMap, SecretValue};

const LABELS: &str = "labels";
const ANNOTATIONS: &str = "annotations";

/// The value `get_secret` returns for `remote_ref` from `secret`.
pub(super) fn secret_value(secret: &Secret, remote_ref: &RemoteRef) -> Result<SecretValue> {
    let fetch_metadata = remote_ref.metadata_policy == MetadataPolicy::Fetch;
    let Some(property) = remote_ref.property.as_deref() else {
        return if fetch_metadata {
            Ok(SecretValue::new(metadata_json(secret)?))
        } else {
            Ok(SecretValue::new(data_json(secret)?))
        };
    };
    if fetch_metadata {
        metadata_property(secret, property)?.ok_or_else(|| {
            ProviderError::not_found(format!(
                "property {property} does not exist in metadata of secret {:?}",
                remote_ref.key
            ))
        })
    } else {
        data_property(secret, property).ok_or_else(|| {
            ProviderError::not_found(format!(
                "property {property} does not exist in data of secret {:?}",
                remote_ref.key
            ))
        })
    }
    .map(SecretValue::new)
}

/// The map `get_secret_map` returns for `remote_ref` from `secret`.
pub(super) fn secret_map(secret: &Secret, remote_ref: &RemoteRef) -> Result<SecretMap> {
    let mut map: BTreeMap<String, Vec<u8>> = if remote_ref.metadata_policy == MetadataPolicy::Fetch
    {
        BTreeMap::from([
            (LABELS.to_owned(), to_json(&secret.metadata.labels)?),
            (
                ANNOTATIONS.to_owned(),
                to_json(&secret.metadata.annotations)?,
            ),
        ])
    } else {
        data(secret)
            .map(|(key, value)| (key.clone(), value.to_vec()))
            .collect()
    };
    let Some(property) = remote_ref.property.as_deref() else {
        return Ok(into_secret_map(map));
    };
    let value = map.remove(property).ok_or_else(|| {
        ProviderError::not_found(format!(
            "property {property} does not exist in key {}",
            remote_ref.key
        ))
    })?;
    // The parser's message may quote the value: keep it out of the error.
    let members: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(&value).map_err(|_| {
            ProviderError::invalid_data("failed to unmarshal secret: invalid JSON format")
        })?;
    members
        .into_iter()
        .map(|(key, member)| Ok((key, SecretValue::new(to_json(&member)?))))
        .collect()
}

/// The data of `secret` as a JSON object of strings: what find returns per Secret.
pub(super) fn data_json(secret: &Secret) -> Result<Vec<u8>> {
    let strings: BTreeMap<&str, String> = data(secret)
        .map(|(key, value)| (key.as_str(), String::from_utf8_lossy(value).into_owned()))
        .collect();
    to_json(&strings)
}

fn metadata_json(secret: &Secret) -> Result<Vec<u8>> {
    let metadata = BTreeMap::from([
        (ANNOTATIONS, &secret.metadata.annotations),
        (LABELS, &secret.metadata.labels),
    ]);
    to_json(&metadata)
}

/// A data key, or a JSON path inside the key before the first dot.
fn data_property(secret: &Secret, property: &str) -> Option<Vec<u8>> {
    let data = secret.data.as_ref()?;
    if let Some(value) = data.get(property) {
        return Some(value.0.clone());
    }
    let (key, path) = property.split_once('.')?;
    if key.is_empty() || path.is_empty() {
        return None;
    }
    json_property(&data.get(key)?.0, path)
}

/// `labels`, `annotations`, one of them by name, or a JSON path inside one.
fn metadata_property(secret: &Secret, property: &str) -> Result<Option<Vec<u8>>> {
    let mut path = property.split('.');
    let metadata = match path.next() {
        Some(LABELS) => &secret.metadata.labels,
        Some(ANNOTATIONS) => &secret.metadata.annotations,
        _ => return Ok(None),
    };
    let Some(name) = path.next() else {
        return to_json(metadata).map(Some);
    };
    let Some(value) = metadata.as_ref().and_then(|metadata| metadata.get(name)) else {
        return Ok(None);
    };
    let rest: Vec<&str> = path.collect();
    if rest.is_empty() {
        return Ok(Some(value.clone().into_bytes()));
    }
    Ok(json_property(value.as_bytes(), &rest.join(".")))
}

fn data(secret: &Secret) -> impl Iterator<Item = (&String, &Vec<u8>)> {
    secret
        .data
        .iter()
        .flatten()
        .map(|(key, value)| (key, &value.0))
}

fn into_secret_map(map: BTreeMap<String, Vec<u8>>) -> SecretMap {
    map.into_iter()
        .map(|(key, value)| (key, SecretValue::new(value)))
        .collect()
}

/// JSON without HTML escaping, as upstream's `JSONMarshal` (serde_json never escapes HTML).
fn to_json(value: &impl Serialize) -> Result<Vec<u8>> {
    serde_json::to_vec(value)
        .map_err(|error| ProviderError::invalid_data(format!("failed to marshal secret: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn secret() -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some("mysec".into()),
                labels: Some([("dev".to_owned(), "seb".to_owned())].into()),
                annotations: Some(
                    [
                        ("date".to_owned(), "today".to_owned()),
                        ("json".to_owned(), r#"{"a":{"b":"c"}}"#.to_owned()),
                    ]
                    .into(),
                ),
                ..ObjectMeta::default()
            },
            data: Some(
                [
                    ("token".to_owned(), ByteString(b"foo".to_vec())),
                    ("file.png".to_owned(), ByteString(b"png".to_vec())),
                    (
                        "config".to_owned(),
                        ByteString(br#"{"user":"admin","port":5432,"n":{"x":1.50}}"#.to_vec()),
                    ),
                ]
                .into(),
            ),
            ..Secret::default()
        }
    }

    fn value(remote_ref: RemoteRef) -> Result<String> {
        secret_value(&secret(), &remote_ref)
            .map(|value| String::from_utf8(value.into_bytes()).unwrap())
    }

    fn fetch(key: &str) -> RemoteRef {
        RemoteRef {
            metadata_policy: MetadataPolicy::Fetch,
            ..RemoteRef::new(key)
        }
    }

    fn texts(map: SecretMap) -> Vec<(String, String)> {
        map.into_iter()
            .map(|(key, value)| (key, String::from_utf8(value.into_bytes()).unwrap()))
            .collect()
    }

    #[test]
    fn without_property_the_whole_secret_is_json() {
        assert_eq!(
            value(RemoteRef::new("mysec")).unwrap(),
            r#"{"config":"{\"user\":\"admin\",\"port\":5432,\"n\":{\"x\":1.50}}","file.png":"png","token":"foo"}"#
        );
        assert_eq!(
            value(fetch("mysec")).unwrap(),
            r#"{"annotations":{"date":"today","json":"{\"a\":{\"b\":\"c\"}}"},"labels":{"dev":"seb"}}"#
        );
        let bare = Secret::default();
        assert_eq!(
            secret_value(&bare, &fetch("x")).unwrap().expose(),
            br#"{"annotations":null,"labels":null}"#
        );
        assert_eq!(
            secret_value(&bare, &RemoteRef::new("x")).unwrap().expose(),
            b"{}"
        );
    }

    #[test]
    fn properties_are_keys_then_json_paths() {
        assert_eq!(
            value(RemoteRef::new("mysec").with_property("token")).unwrap(),
            "foo"
        );
        assert_eq!(
            value(RemoteRef::new("mysec").with_property("file.png")).unwrap(),
            "png"
        );
        assert_eq!(
            value(RemoteRef::new("mysec").with_property("config.user")).unwrap(),
            "admin"
        );
        assert_eq!(
            value(RemoteRef::new("mysec").with_property("config.n.x")).unwrap(),
            "1.50"
        );
        let error = value(RemoteRef::new("mysec").with_property("nope")).unwrap_err();
        assert!(error.is_not_found());
        assert_eq!(
            error.message(),
            r#"property nope does not exist in data of secret "mysec""#
        );
        assert!(value(RemoteRef::new("mysec").with_property("config.")).is_err());
    }

    #[test]
    fn metadata_properties() {
        assert_eq!(
            value(fetch("mysec").with_property("labels")).unwrap(),
            r#"{"dev":"seb"}"#
        );
        assert_eq!(
            value(fetch("mysec").with_property("labels.dev")).unwrap(),
            "seb"
        );
        assert_eq!(
            value(fetch("mysec").with_property("annotations.json.a.b")).unwrap(),
            "c"
        );
        let error = value(fetch("mysec").with_property("foo")).unwrap_err();
        assert_eq!(
            error.message(),
            r#"property foo does not exist in metadata of secret "mysec""#
        );
        assert!(value(fetch("mysec").with_property("labels.absent")).is_err());
    }

    #[test]
    fn maps_are_the_data_or_the_metadata() {
        let map = secret_map(&secret(), &RemoteRef::new("mysec")).unwrap();
        assert_eq!(map.len(), 3);
        assert_eq!(map["token"].expose(), b"foo");
        let metadata = secret_map(&secret(), &fetch("mysec")).unwrap();
        assert_eq!(metadata["labels"].expose(), br#"{"dev":"seb"}"#);
    }

    #[test]
    fn map_properties_are_json_objects_with_json_members() {
        let map = secret_map(&secret(), &RemoteRef::new("mysec").with_property("config")).unwrap();
        assert_eq!(
            texts(map),
            [
                ("n".to_owned(), r#"{"x":1.5}"#.to_owned()),
                ("port".to_owned(), "5432".to_owned()),
                ("user".to_owned(), r#""admin""#.to_owned()),
            ]
        );
        let labels = secret_map(&secret(), &fetch("mysec").with_property("labels")).unwrap();
        assert_eq!(texts(labels), [("dev".to_owned(), r#""seb""#.to_owned())]);
        let error =
            secret_map(&secret(), &RemoteRef::new("mysec").with_property("token")).unwrap_err();
        assert_eq!(
            error.message(),
            "failed to unmarshal secret: invalid JSON format"
        );
        assert!(!error.message().contains("foo"));
        let missing =
            secret_map(&secret(), &RemoteRef::new("mysec").with_property("x")).unwrap_err();
        assert_eq!(missing.message(), "property x does not exist in key mysec");
    }
}
