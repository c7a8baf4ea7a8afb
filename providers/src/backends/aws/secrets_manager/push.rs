//! PushSecret and its deletion for Secrets Manager (upstream's `PushSecret` and `DeleteSecret`).
//!
//! * The metadata (`PushSecretMetadata` spec): `tags`, `description` (default
//!   `secret 'managed-by:external-secrets'`), `secretPushFormat` (`binary`, the default, or
//!   `string`), `kmsKeyId` (default `alias/aws/secretsmanager`). `resourcePolicy` and
//!   `replicationLocations` are not supported by this build (an `Unsupported` error).
//! * A new secret is created with the value, the tags plus `managed-by: external-secrets`, and
//!   the first version id `00000000-0000-0000-0000-000000000001`. An existing secret without the
//!   tag is never written ("secret not managed by external-secrets", `AlreadyExists`).
//! * With a property, the value is stored as a string at that path of the current JSON value
//!   (see `json::set`); without one it replaces the value. Nothing is written when the secret
//!   already holds the result. When the metadata has tags, the secret's tags become exactly
//!   those (plus the ownership tag).
//! * Delete: only a secret carrying the ownership tag is deleted (replicas first), with the
//!   store's `secretsManager` recovery settings; a missing, foreign or already scheduled secret
//!   is left alone. The property is not looked at: the whole secret goes, as upstream.

use std::collections::BTreeMap;

use aws_sdk_secretsmanager::operation::describe_secret::DescribeSecretOutput;
use aws_sdk_secretsmanager::primitives::Blob;
use aws_sdk_secretsmanager::types::Tag;
use serde::Deserialize;

use super::SecretsManager;
use super::read::{Version, tags};
use crate::backends::aws::error::map_sdk_error;
use crate::backends::aws::json;
use crate::backends::aws::metadata::{
    self, default_description, is_managed, owned_tags, tag_changes,
};
use crate::error::{ErrorKind, ProviderError, Result};
use crate::request::{PushRemoteRef, PushRequest};
use crate::value::SecretValue;

/// Upstream's version id of a secret's first value.
const INITIAL_VERSION: &str = "00000000-0000-0000-0000-000000000001";

/// Upstream's default KMS key of pushed secrets.
const DEFAULT_KMS_KEY: &str = "alias/aws/secretsmanager";

/// The `spec` of Secrets Manager push metadata.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PushMetadata {
    #[serde(default)]
    tags: BTreeMap<String, String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    secret_push_format: String,
    #[serde(default, rename = "kmsKeyId")]
    kms_key_id: String,
    #[serde(default)]
    resource_policy: Option<serde_json::Value>,
    #[serde(default)]
    replication_locations: Option<Vec<String>>,
}

/// How the value is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `SecretBinary` (upstream's default).
    Binary,
    /// `SecretString`.
    String,
}

/// The push metadata with upstream's defaults applied.
#[derive(Debug)]
struct Settings {
    /// The tags the secret gets, ownership tag included.
    tags: BTreeMap<String, String>,
    /// Whether the metadata named tags (only then are an existing secret's tags changed).
    manage_tags: bool,
    description: String,
    format: Format,
    kms_key_id: String,
}

impl Settings {
    fn of(request: &PushRequest) -> Result<Self> {
        let spec: PushMetadata = metadata::parse(request.metadata.as_ref())?;
        let unsupported = |field: &str| {
            ProviderError::unsupported(format!(
                "PushSecret metadata {field} is not supported by this build"
            ))
        };
        if spec.resource_policy.is_some() {
            return Err(unsupported("resourcePolicy"));
        }
        if spec.replication_locations.is_some() {
            return Err(unsupported("replicationLocations"));
        }
        let format = match spec.secret_push_format.as_str() {
            "" | "binary" => Format::Binary,
            "string" => Format::String,
            other => {
                return Err(ProviderError::invalid_request(format!(
                    "invalid secret push format: {other}"
                )));
            }
        };
        Ok(Self {
            tags: owned_tags(&spec.tags)?,
            manage_tags: !spec.tags.is_empty(),
            description: non_empty_or(spec.description, default_description()),
            format,
            kms_key_id: non_empty_or(spec.kms_key_id, DEFAULT_KMS_KEY.to_owned()),
        })
    }
}

fn non_empty_or(value: String, default: String) -> String {
    if value.is_empty() { default } else { value }
}

/// Pushes `request` to the secret it names.
pub(super) async fn push(manager: &SecretsManager, request: &PushRequest) -> Result<()> {
    let key = request.remote_ref.remote_key.as_str();
    if key.is_empty() {
        return Err(ProviderError::invalid_request("remote key must be defined"));
    }
    let settings = Settings::of(request)?;
    let value = request.value()?;
    let property = request.remote_ref.property.as_deref();
    let name = manager.name(key);
    let Some(description) = manager.describe(&name).await? else {
        let value = merged(None, property, &value)?;
        return create(manager, &name, &settings, value).await;
    };
    if !is_managed(&tags(&description)) {
        return Err(ProviderError::new(
            ErrorKind::AlreadyExists,
            "secret not managed by external-secrets",
        ));
    }
    if description.deleted_date().is_some() {
        return Err(ProviderError::invalid_request(format!(
            "secret {name:?} is scheduled for deletion: restore it, or push once AWS deleted it"
        )));
    }
    let has_versions = description
        .version_ids_to_stages()
        .is_some_and(|versions| !versions.is_empty());
    let current = if has_versions {
        let current = manager.value(&name, &Version::parse(None)).await?;
        current.ok_or_else(|| {
            ProviderError::unavailable(format!("secret {name:?} changed while it was pushed"))
        })?
    } else {
        SecretValue::default()
    };
    let merged = merged(has_versions.then_some(&current), property, &value)?;
    if settings.manage_tags {
        sync_tags(manager, &name, &description, &settings.tags).await?;
    }
    if has_versions && current == merged {
        return Ok(());
    }
    let token = (!has_versions).then(|| INITIAL_VERSION.to_owned());
    let (text, binary) = encoded(settings.format, merged);
    manager
        .client
        .put_secret_value()
        .secret_id(&name)
        .set_secret_string(text)
        .set_secret_binary(binary)
        .set_client_request_token(token)
        .send()
        .await
        .map_err(|error| map_sdk_error(error, format!("cannot push secret {name:?}")))?;
    Ok(())
}

/// Deletes the secret `remote_ref` names if this operator owns it.
pub(super) async fn delete(manager: &SecretsManager, remote_ref: &PushRemoteRef) -> Result<()> {
    let name = manager.name(&remote_ref.remote_key);
    let Some(description) = manager.describe(&name).await? else {
        return Ok(());
    };
    if description.deleted_date().is_some() || !is_managed(&tags(&description)) {
        return Ok(());
    }
    let action = format!("cannot delete secret {name:?}");
    let replicas: Vec<String> = description
        .replication_status()
        .iter()
        .filter_map(|replica| replica.region().map(str::to_owned))
        .collect();
    if !replicas.is_empty() {
        manager
            .client
            .remove_regions_from_replication()
            .secret_id(&name)
            .set_remove_replica_regions(Some(replicas))
            .send()
            .await
            .map_err(|error| map_sdk_error(error, &action))?;
    }
    let deletion = manager.deletion;
    manager
        .client
        .delete_secret()
        .secret_id(description.arn().unwrap_or(&name))
        .set_force_delete_without_recovery(deletion.force_without_recovery.then_some(true))
        .set_recovery_window_in_days(deletion.recovery_window_in_days)
        .send()
        .await
        .map_err(|error| map_sdk_error(error, &action))?;
    Ok(())
}

/// The value to store: `value` itself, or with a property `value` as a string at that path of
/// the `current` value (none yet: an empty object).
fn merged(
    current: Option<&SecretValue>,
    property: Option<&str>,
    value: &SecretValue,
) -> Result<SecretValue> {
    match property {
        None => Ok(value.clone()),
        Some(property) => {
            let current = current.map(SecretValue::expose).unwrap_or_default();
            json::set(current, property, value.expose()).map(SecretValue::new)
        }
    }
}

/// The value as `SecretString` or `SecretBinary`.
fn encoded(format: Format, value: SecretValue) -> (Option<String>, Option<Blob>) {
    match format {
        Format::Binary => (None, Some(Blob::new(value.into_bytes()))),
        Format::String => {
            let text = String::from_utf8_lossy(value.expose()).into_owned();
            (Some(text), None)
        }
    }
}

/// Creates secret `name` holding `value`, tagged as ours.
async fn create(
    manager: &SecretsManager,
    name: &str,
    settings: &Settings,
    value: SecretValue,
) -> Result<()> {
    let (text, binary) = encoded(settings.format, value);
    manager
        .client
        .create_secret()
        .name(name)
        .set_secret_string(text)
        .set_secret_binary(binary)
        .set_tags(Some(aws_tags(&settings.tags)))
        .description(&settings.description)
        .client_request_token(INITIAL_VERSION)
        .kms_key_id(&settings.kms_key_id)
        .send()
        .await
        .map_err(|error| map_sdk_error(error, format!("cannot create secret {name:?}")))?;
    Ok(())
}

/// Makes the tags of secret `name` exactly `desired`.
async fn sync_tags(
    manager: &SecretsManager,
    name: &str,
    description: &DescribeSecretOutput,
    desired: &BTreeMap<String, String>,
) -> Result<()> {
    let action = format!("cannot tag secret {name:?}");
    let (remove, set) = tag_changes(&tags(description), desired);
    if !remove.is_empty() {
        manager
            .client
            .untag_resource()
            .secret_id(name)
            .set_tag_keys(Some(remove))
            .send()
            .await
            .map_err(|error| map_sdk_error(error, &action))?;
    }
    if let Some(set) = set {
        manager
            .client
            .tag_resource()
            .secret_id(name)
            .set_tags(Some(aws_tags(&set)))
            .send()
            .await
            .map_err(|error| map_sdk_error(error, &action))?;
    }
    Ok(())
}

fn aws_tags(tags: &BTreeMap<String, String>) -> Vec<Tag> {
    tags.iter()
        .map(|(key, value)| Tag::builder().key(key).value(value).build())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(metadata: serde_json::Value) -> PushRequest {
        PushRequest {
            metadata: Some(json!({
                "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
                "kind": "PushSecretMetadata",
                "spec": metadata,
            })),
            ..PushRequest::single(
                [("k".to_owned(), SecretValue::from("v"))].into(),
                "k",
                "remote",
            )
        }
    }

    #[test]
    fn settings_default_like_upstream() {
        let settings = Settings::of(&PushRequest::single(Default::default(), "k", "r")).unwrap();
        assert_eq!(settings.format, Format::Binary);
        assert_eq!(settings.description, "secret 'managed-by:external-secrets'");
        assert_eq!(settings.kms_key_id, "alias/aws/secretsmanager");
        assert!(!settings.manage_tags);
        assert_eq!(
            settings.tags,
            BTreeMap::from([("managed-by".to_owned(), "external-secrets".to_owned())])
        );
    }

    #[test]
    fn settings_take_the_metadata() {
        let settings = Settings::of(&request(json!({
            "secretPushFormat": "string", "kmsKeyId": "alias/mine", "description": "mine",
            "tags": {"team": "a"}})))
        .unwrap();
        assert_eq!(settings.format, Format::String);
        assert_eq!(settings.kms_key_id, "alias/mine");
        assert_eq!(settings.description, "mine");
        assert!(settings.manage_tags);
        assert_eq!(settings.tags.len(), 2);
        let error = Settings::of(&request(json!({"secretPushFormat": "yaml"}))).unwrap_err();
        assert_eq!(error.message(), "invalid secret push format: yaml");
        let error = Settings::of(&request(json!({"resourcePolicy": {}}))).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Unsupported);
    }

    #[test]
    fn properties_merge_into_the_current_json() {
        let value = SecretValue::from("s3cret");
        let current = SecretValue::from(r#"{"user":"admin"}"#);
        let merged = merged(Some(&current), Some("pass"), &value).unwrap();
        assert_eq!(
            merged.expose_str(),
            Some(r#"{"pass":"s3cret","user":"admin"}"#)
        );
        assert_eq!(
            super::merged(None, Some("pass"), &value)
                .unwrap()
                .expose_str(),
            Some(r#"{"pass":"s3cret"}"#)
        );
        assert_eq!(super::merged(Some(&current), None, &value).unwrap(), value);
        let error = super::merged(Some(&SecretValue::from("text")), Some("a"), &value).unwrap_err();
        assert!(error.message().ends_with("requires a json secret"));
    }
}
