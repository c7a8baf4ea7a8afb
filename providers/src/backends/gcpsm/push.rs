//! PushSecret, DeleteSecret and SecretExists as upstream's gcpsm client does them.
//!
//! * Push: a missing secret is created with the label `managed-by: external-secrets` and
//!   replication `automatic`, or `userManaged` replicas from the metadata's
//!   `replicationLocations` (or the deprecated `replicationLocation`), each with `cmekKeyName`
//!   if set; a regional store sends no replication (the location is the replica). Then, without
//!   a property, a secret that lacks the ownership label is refused, and its labels (the
//!   metadata's, plus the existing ones with `mergePolicy: Merge`, plus the ownership label),
//!   annotations (the metadata's) and topics are written when they differ (update mask
//!   `labels,annotations`, as upstream). With a property, metadata is refused, existing labels and
//!   annotations are kept and the ownership label added (upstream does not check ownership
//!   there), and the property is set inside the latest JSON payload. A version is added only
//!   when the value changed.
//! * Delete: only a secret carrying the ownership label, with its etag; a missing one is done.
//! * Exists: the secret has an enabled version (upstream's `getLatestEnabledVersion`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use super::GcpsmClient;
use super::api::Secret;
use super::error::Failure;
use crate::error::{ErrorKind, ProviderError, Result};
use crate::property::json_property;
use crate::request::{PushRemoteRef, PushRequest};

/// The ownership label's key.
pub(super) const MANAGED_BY: &str = "managed-by";
/// The ownership label's value.
pub(super) const MANAGER: &str = "external-secrets";

/// The metadata envelope's `apiVersion` and `kind`.
const API_VERSION: &str = "kubernetes.external-secrets.io/v1alpha1";
const KIND: &str = "PushSecretMetadata";

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Envelope {
    api_version: String,
    kind: String,
    #[serde(default)]
    spec: Option<MetadataSpec>,
}

/// Upstream's `PushSecretMetadataSpec` for GCP.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct MetadataSpec {
    #[serde(default)]
    annotations: BTreeMap<String, String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    topics: Vec<String>,
    #[serde(default)]
    merge_policy: Option<String>,
    #[serde(default)]
    cmek_key_name: Option<String>,
    #[serde(default)]
    replication_location: Option<String>,
    #[serde(default)]
    replication_locations: Vec<String>,
}

fn parse_metadata(metadata: Option<&Value>) -> Result<MetadataSpec> {
    let Some(value) = metadata.filter(|value| !value.is_null()) else {
        return Ok(MetadataSpec::default());
    };
    let fail = |detail: String| {
        ProviderError::invalid_request(format!("failed to parse PushSecret metadata: {detail}"))
    };
    let envelope = Envelope::deserialize(value).map_err(|error| fail(error.to_string()))?;
    if envelope.api_version != API_VERSION || envelope.kind != KIND {
        return Err(fail(format!(
            "unexpected apiVersion/kind {}/{}, expected {API_VERSION}/{KIND}",
            envelope.api_version, envelope.kind
        )));
    }
    let spec = envelope.spec.unwrap_or_default();
    if let Some(policy) = spec.merge_policy.as_deref()
        && !matches!(policy, "Replace" | "Merge")
    {
        return Err(fail(format!("unknown mergePolicy {policy:?}")));
    }
    Ok(spec)
}

impl MetadataSpec {
    /// The `replication` of a new global secret.
    fn replication(&self) -> Value {
        let locations = if self.replication_locations.is_empty() {
            self.replication_location.iter().cloned().collect()
        } else {
            self.replication_locations.clone()
        };
        if locations.is_empty() {
            return json!({"automatic": {}});
        }
        let replicas: Vec<Value> = locations
            .into_iter()
            .map(|location| match &self.cmek_key_name {
                Some(key) => json!({"location": location,
                    "customerManagedEncryption": {"kmsKeyName": key}}),
                None => json!({"location": location}),
            })
            .collect();
        json!({"userManaged": {"replicas": replicas}})
    }
}

fn is_managed(secret: &Secret) -> bool {
    secret.labels.get(MANAGED_BY).map(String::as_str) == Some(MANAGER)
}

impl GcpsmClient {
    /// Upstream's `PushSecret`.
    pub(super) async fn push(&self, request: &PushRequest) -> Result<()> {
        let api = self.api()?;
        let value = request.value()?;
        let key = &request.remote_ref.remote_key;
        let property = request.remote_ref.property.as_deref();
        let metadata = request.metadata.as_ref().filter(|value| !value.is_null());
        if property.is_some() && metadata.is_some() {
            return Err(ProviderError::invalid_request(
                "cannot specify metadata and property at the same time",
            ));
        }
        let spec = parse_metadata(metadata)?;
        let name = self.parent.secret(key);
        let secret = match api.get_secret(&name).await {
            Ok(secret) => secret,
            Err(Failure::NotFound(_)) => {
                let mut body = json!({"labels": {MANAGED_BY: MANAGER}});
                if self.parent.location().is_none() {
                    body["replication"] = spec.replication();
                }
                if !spec.topics.is_empty() {
                    let topics: Vec<Value> = spec
                        .topics
                        .iter()
                        .map(|name| json!({"name": name}))
                        .collect();
                    body["topics"] = Value::Array(topics);
                }
                api.create_secret(&self.parent.name(), key, body)
                    .await
                    .map_err(Failure::into_error)?
            }
            Err(failure) => return Err(failure.into_error()),
        };
        let existing_topics: Vec<String> = secret.topics.iter().map(|t| t.name.clone()).collect();
        let (annotations, labels, topics) = match property {
            None => {
                if !is_managed(&secret) {
                    return Err(ProviderError::new(
                        ErrorKind::AlreadyExists,
                        format!("secret {key} is not managed by external secrets"),
                    ));
                }
                let mut labels = spec.labels.clone();
                if spec.merge_policy.as_deref() == Some("Merge") {
                    labels.extend(secret.labels.clone());
                }
                labels.insert(MANAGED_BY.to_owned(), MANAGER.to_owned());
                (spec.annotations.clone(), labels, spec.topics.clone())
            }
            Some(_) => {
                let mut labels = secret.labels.clone();
                labels.insert(MANAGED_BY.to_owned(), MANAGER.to_owned());
                (secret.annotations.clone(), labels, existing_topics.clone())
            }
        };
        if annotations != secret.annotations || labels != secret.labels || topics != existing_topics
        {
            let mut body = json!({"name": secret.name, "etag": secret.etag,
                "labels": labels, "annotations": annotations});
            if let Some(location) = self.parent.location() {
                body["replication"] =
                    json!({"userManaged": {"replicas": [{"location": location}]}});
            }
            api.update_secret(&name, body, "labels,annotations")
                .await
                .map_err(Failure::into_error)?;
        }
        let current = match api.access(&self.parent.version(key, "latest")).await {
            Ok(current) => Some(current),
            Err(Failure::NotFound(_)) => None,
            Err(failure) => return Err(failure.into_error()),
        };
        let data = match property {
            None if current.as_deref() == Some(value.expose()) => return Ok(()),
            None => value.expose().to_vec(),
            Some(property) => {
                let original = current.unwrap_or_default();
                if json_property(&original, property).as_deref() == Some(value.expose()) {
                    return Ok(());
                }
                set_property(&original, property, value.expose())?
            }
        };
        api.add_version(&name, &data)
            .await
            .map_err(Failure::into_error)
    }

    /// Upstream's `DeleteSecret`.
    pub(super) async fn delete(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        let api = self.api()?;
        let name = self.parent.secret(&remote_ref.remote_key);
        let secret = match api.get_secret(&name).await {
            Ok(secret) => secret,
            Err(Failure::NotFound(_)) => return Ok(()),
            Err(failure) => return Err(failure.into_error()),
        };
        if !is_managed(&secret) {
            return Ok(());
        }
        match api.delete_secret(&name, &secret.etag).await {
            Ok(()) | Err(Failure::NotFound(_)) => Ok(()),
            Err(failure) => Err(failure.into_error()),
        }
    }

    /// Upstream's `SecretExists`.
    pub(super) async fn exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        let api = self.api()?;
        let key = &remote_ref.remote_key;
        match api.latest_enabled_version(&self.parent.secret(key)).await {
            Ok(Some(_)) => Ok(true),
            Ok(None) => match api.access(&self.parent.version(key, "latest")).await {
                Ok(_) => Ok(true),
                Err(Failure::NotFound(_)) => Ok(false),
                Err(failure) => Err(failure.into_error()),
            },
            Err(Failure::NotFound(_)) => Ok(false),
            Err(failure) => Err(failure.into_error()),
        }
    }
}

/// `document` with the string `value` stored at `property` (upstream's `sjson.SetBytes`): keys
/// split on unescaped dots, missing or non-object steps replaced by objects. An empty document
/// starts as `{}`; a document that is not JSON is an error.
fn set_property(document: &[u8], property: &str, value: &[u8]) -> Result<Vec<u8>> {
    let mut root: Value = if document.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(document)
            .map_err(|_| ProviderError::invalid_data("unable to unmarshal secret from JSON"))?
    };
    let text = String::from_utf8(value.to_vec()).map_err(|_| {
        ProviderError::invalid_request("a value pushed to a property must be UTF-8 text")
    })?;
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut characters = property.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => current.extend(characters.next()),
            '.' => segments.push(std::mem::take(&mut current)),
            other => current.push(other),
        }
    }
    segments.push(current);
    let mut node = &mut root;
    for segment in segments {
        if !node.is_object() {
            *node = json!({});
        }
        // `node` was just made an object, so `as_object_mut` cannot fail.
        let Some(object) = node.as_object_mut() else {
            return Err(ProviderError::invalid_data("unable to set property"));
        };
        node = object.entry(segment).or_insert(Value::Null);
    }
    *node = Value::String(text);
    serde_json::to_vec(&root)
        .map_err(|error| ProviderError::invalid_data(format!("unable to set property: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_are_set_inside_json() {
        let set = set_property(br#"{"a": {"b": 1}, "c": "x"}"#, "a.d", b"v").unwrap();
        let value: Value = serde_json::from_slice(&set).unwrap();
        assert_eq!(value, json!({"a": {"b": 1, "d": "v"}, "c": "x"}));
        let escaped = set_property(b"", "a\\.b", b"v").unwrap();
        assert_eq!(escaped, br#"{"a.b":"v"}"#);
        assert!(set_property(b"not json", "a", b"v").is_err());
    }

    #[test]
    fn metadata_is_upstreams_envelope() {
        let spec = parse_metadata(Some(&json!({
            "apiVersion": API_VERSION, "kind": KIND,
            "spec": {"labels": {"team": "a"}, "replicationLocations": ["europe-west1", "us-east1"],
                     "cmekKeyName": "k"}
        })))
        .unwrap();
        assert_eq!(spec.labels["team"], "a");
        assert_eq!(
            spec.replication(),
            json!({"userManaged": {"replicas": [
                {"location": "europe-west1", "customerManagedEncryption": {"kmsKeyName": "k"}},
                {"location": "us-east1", "customerManagedEncryption": {"kmsKeyName": "k"}}]}})
        );
        assert_eq!(
            MetadataSpec::default().replication(),
            json!({"automatic": {}})
        );
        let wrong_kind = json!({"apiVersion": API_VERSION, "kind": "Other"});
        assert!(parse_metadata(Some(&wrong_kind)).is_err());
        let unknown = json!({"apiVersion": API_VERSION, "kind": KIND, "spec": {"tags": {}}});
        assert!(parse_metadata(Some(&unknown)).is_err());
    }
}
