//! What a push or delete writes, decided from the current remote Secret (pure, so tested
//! without a server). Upstream's rules:
//!
//! * With a `property`, that data key of the remote Secret is set: to the source key's value,
//!   or with no `secretKey` to the whole source Secret as a JSON object of strings. Other keys
//!   stay. Without a `property` the remote data is replaced by the whole source Secret; a
//!   `secretKey` without `property` is refused.
//! * The remote Secret's type becomes the source Secret's (default `Opaque`); labels and
//!   annotations merge as the `metadata` module says.
//! * Nothing is written when nothing changes.
//! * Delete removes the pushed property (and the Secret once it was its last key), or without
//!   property the whole Secret. A property or Secret already gone is success.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::metadata::{self, Metadata, PushMetadata};
use crate::error::{ProviderError, Result};
use crate::request::PushRequest;

/// The type of a pushed Secret whose source has none.
const DEFAULT_TYPE: &str = "Opaque";

/// Refuses a `secretKey` without `property` (upstream's message).
pub(super) fn check_request(request: &PushRequest) -> Result<()> {
    if request.remote_ref.property.is_none() && request.secret_key.is_some() {
        return Err(ProviderError::invalid_request(
            "requires property in RemoteRef to push secret value if secret key is defined",
        ));
    }
    Ok(())
}

/// The Secret `namespace/name` as the push wants it, starting from `existing` (if any).
pub(super) fn desired_secret(
    existing: Option<&Secret>,
    namespace: &str,
    request: &PushRequest,
    push_metadata: Option<&PushMetadata>,
) -> Result<Secret> {
    let mut secret = existing.cloned().unwrap_or_else(|| Secret {
        metadata: ObjectMeta {
            name: Some(request.remote_ref.remote_key.clone()),
            namespace: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    });
    secret.type_ = Some(
        request
            .source_metadata
            .secret_type
            .clone()
            .unwrap_or_else(|| DEFAULT_TYPE.to_owned()),
    );
    let remote = Metadata {
        labels: secret.metadata.labels.take().unwrap_or_default(),
        annotations: secret.metadata.annotations.take().unwrap_or_default(),
    };
    let merged = metadata::merge(remote, &request.source_metadata, push_metadata)?;
    secret.metadata.labels = Some(merged.labels).filter(|labels| !labels.is_empty());
    secret.metadata.annotations =
        Some(merged.annotations).filter(|annotations| !annotations.is_empty());
    match &request.remote_ref.property {
        None => {
            let data: BTreeMap<String, ByteString> = request
                .secret_data
                .iter()
                .map(|(key, value)| (key.clone(), ByteString(value.expose().to_vec())))
                .collect();
            secret.data = Some(data);
        }
        Some(property) => {
            let value = request.value()?;
            secret
                .data
                .get_or_insert_with(BTreeMap::new)
                .insert(property.clone(), ByteString(value.into_bytes()));
        }
    }
    // `stringData` is write-only; a read Secret never has it, but never send one.
    secret.string_data = None;
    Ok(secret)
}

/// Whether writing `desired` over `existing` would change nothing (missing and empty maps are
/// the same, as in upstream's semantic comparison).
pub(super) fn unchanged(existing: &Secret, desired: &Secret) -> bool {
    fn or_empty<T: Clone>(map: &Option<BTreeMap<String, T>>) -> BTreeMap<String, T> {
        map.clone().unwrap_or_default()
    }
    existing.type_ == desired.type_
        && or_empty(&existing.metadata.labels) == or_empty(&desired.metadata.labels)
        && or_empty(&existing.metadata.annotations) == or_empty(&desired.metadata.annotations)
        && or_empty(&existing.data) == or_empty(&desired.data)
}

/// What deleting `property` (or the whole Secret) from `existing` takes.
#[derive(Debug)]
pub(super) enum Deletion {
    /// Nothing to do: the property is not there.
    Nothing,
    /// Write back the Secret without the property.
    Update(Box<Secret>),
    /// Delete the whole Secret.
    Delete,
}

/// Decides a deletion, as upstream's `DeleteSecret`.
pub(super) fn deletion(existing: &Secret, property: Option<&str>) -> Deletion {
    let Some(property) = property else {
        return Deletion::Delete;
    };
    let data = existing.data.as_ref();
    if !data.is_some_and(|data| data.contains_key(property)) {
        return Deletion::Nothing;
    }
    if data.is_some_and(|data| data.len() > 1) {
        let mut updated = existing.clone();
        if let Some(data) = updated.data.as_mut() {
            data.remove(property);
        }
        return Deletion::Update(Box::new(updated));
    }
    Deletion::Delete
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{PushRemoteRef, SourceMetadata};
    use crate::value::SecretValue;

    fn request(secret_key: Option<&str>, property: Option<&str>) -> PushRequest {
        PushRequest {
            secret_data: [
                ("user".to_owned(), SecretValue::from("admin")),
                ("pass".to_owned(), SecretValue::from("s3cret")),
            ]
            .into(),
            source_metadata: SourceMetadata {
                labels: [("app".to_owned(), "db".to_owned())].into(),
                annotations: BTreeMap::new(),
                secret_type: None,
            },
            secret_key: secret_key.map(str::to_owned),
            remote_ref: PushRemoteRef {
                remote_key: "remote".into(),
                property: property.map(str::to_owned),
            },
            metadata: None,
        }
    }

    fn existing() -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some("remote".into()),
                namespace: Some("target".into()),
                resource_version: Some("7".into()),
                labels: Some([("owner".to_owned(), "team".to_owned())].into()),
                ..ObjectMeta::default()
            },
            type_: Some("Opaque".into()),
            data: Some([("other".to_owned(), ByteString(b"kept".to_vec()))].into()),
            ..Secret::default()
        }
    }

    fn data(secret: &Secret) -> Vec<(String, String)> {
        secret
            .data
            .iter()
            .flatten()
            .map(|(key, value)| (key.clone(), String::from_utf8(value.0.clone()).unwrap()))
            .collect()
    }

    #[test]
    fn a_secret_key_needs_a_property() {
        let error = check_request(&request(Some("user"), None)).unwrap_err();
        assert_eq!(
            error.message(),
            "requires property in RemoteRef to push secret value if secret key is defined"
        );
        assert!(check_request(&request(Some("user"), Some("u"))).is_ok());
        assert!(check_request(&request(None, None)).is_ok());
    }

    #[test]
    fn a_property_push_sets_one_key_and_keeps_the_others() {
        let current = existing();
        let desired = desired_secret(
            Some(&current),
            "target",
            &request(Some("user"), Some("username")),
            None,
        )
        .unwrap();
        assert_eq!(
            data(&desired),
            [
                ("other".into(), "kept".into()),
                ("username".into(), "admin".into())
            ]
        );
        assert_eq!(desired.metadata.resource_version.as_deref(), Some("7"));
        assert_eq!(
            desired.metadata.labels,
            Some(
                [
                    ("app".to_owned(), "db".to_owned()),
                    ("owner".to_owned(), "team".to_owned())
                ]
                .into()
            )
        );
        let whole =
            desired_secret(Some(&current), "target", &request(None, Some("all")), None).unwrap();
        assert_eq!(
            data(&whole)[0],
            ("all".into(), r#"{"pass":"s3cret","user":"admin"}"#.into())
        );
    }

    #[test]
    fn a_push_without_property_replaces_the_data() {
        let desired = desired_secret(None, "target", &request(None, None), None).unwrap();
        assert_eq!(
            data(&desired),
            [
                ("pass".into(), "s3cret".into()),
                ("user".into(), "admin".into())
            ]
        );
        assert_eq!(desired.metadata.name.as_deref(), Some("remote"));
        assert_eq!(desired.metadata.namespace.as_deref(), Some("target"));
        assert_eq!(desired.type_.as_deref(), Some("Opaque"));
    }

    #[test]
    fn the_source_type_is_copied() {
        let mut typed = request(None, None);
        typed.source_metadata.secret_type = Some("kubernetes.io/tls".into());
        let desired = desired_secret(None, "target", &typed, None).unwrap();
        assert_eq!(desired.type_.as_deref(), Some("kubernetes.io/tls"));
    }

    #[test]
    fn pushing_the_same_again_changes_nothing() {
        let first = desired_secret(
            Some(&existing()),
            "target",
            &request(Some("user"), Some("u")),
            None,
        )
        .unwrap();
        let again = desired_secret(
            Some(&first),
            "target",
            &request(Some("user"), Some("u")),
            None,
        )
        .unwrap();
        assert!(unchanged(&first, &again));
        assert!(!unchanged(&existing(), &first));
    }

    #[test]
    fn deletion_removes_only_the_property() {
        let mut two = existing();
        two.data
            .as_mut()
            .unwrap()
            .insert("pushed".into(), ByteString(b"v".to_vec()));
        match deletion(&two, Some("pushed")) {
            Deletion::Update(updated) => {
                assert_eq!(data(&updated), [("other".into(), "kept".into())])
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(deletion(&two, Some("absent")), Deletion::Nothing));
        assert!(matches!(
            deletion(&existing(), Some("other")),
            Deletion::Delete
        ));
        assert!(matches!(deletion(&existing(), None), Deletion::Delete));
    }
}
