//! PushSecret and its deletion for Parameter Store (upstream's `PushSecret` and `DeleteSecret`).
//!
//! * The metadata (`PushSecretMetadata` spec): `secretType` (`String`, the default,
//!   `StringList` or `SecureString`), `kmsKeyID` (for `SecureString`s, default `alias/aws/ssm`),
//!   `tier` (`type`: `Standard`, the default, or `Advanced` with its `policies`),
//!   `encodeAsDecoded`, `tags` and `description` (default `secret
//!   'managed-by:external-secrets'`).
//! * The value: the selected key's; without a key the whole Secret as a JSON object whose values
//!   are base64-encoded, or plain text with `encodeAsDecoded`. A parameter has no properties:
//!   a `remoteRef.property` is an error (upstream ignores it and overwrites the parameter).
//! * A new parameter is created with the tags plus `managed-by: external-secrets`. An existing
//!   one without that tag is never written ("secret not managed by external-secrets",
//!   `AlreadyExists`); one already holding the value is left alone; otherwise it is
//!   overwritten and its tags become exactly the metadata's (plus the ownership tag).
//! * Delete: only a parameter carrying the ownership tag is deleted; a missing or foreign one is
//!   left alone.

use std::collections::BTreeMap;

use aws_sdk_ssm::error::ProvideErrorMetadata;
use aws_sdk_ssm::types::{ParameterTier, ParameterType, ResourceTypeForTagging, Tag};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use super::ParameterStore;
use crate::backends::aws::error::map_sdk_error;
use crate::backends::aws::metadata::{
    self, default_description, is_managed, owned_tags, tag_changes,
};
use crate::error::{ErrorKind, ProviderError, Result};
use crate::request::{PushRemoteRef, PushRequest};

/// Upstream's default KMS key of pushed `SecureString`s.
const DEFAULT_KMS_KEY: &str = "alias/aws/ssm";

/// What AWS returns instead of a `SecureString`'s value when it is not decrypted.
const UNDECRYPTED: &str = "sensitive";

/// The `spec` of Parameter Store push metadata.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PushMetadata {
    #[serde(default)]
    secret_type: String,
    #[serde(default, rename = "kmsKeyID")]
    kms_key_id: String,
    #[serde(default)]
    tier: Tier,
    #[serde(default)]
    encode_as_decoded: bool,
    #[serde(default)]
    tags: BTreeMap<String, String>,
    #[serde(default)]
    description: String,
}

/// The parameter tier and its policies.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tier {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    policies: Option<serde_json::Value>,
}

/// Everything a `PutParameter` of the push sends.
#[derive(Debug)]
struct Parameter {
    name: String,
    value: String,
    kind: ParameterType,
    description: String,
    kms_key_id: Option<String>,
    advanced_policies: Option<Option<String>>,
    tags: BTreeMap<String, String>,
}

impl Parameter {
    /// The parameter `request` asks for, named `name`.
    fn of(request: &PushRequest, name: String) -> Result<Self> {
        if request.remote_ref.property.is_some() {
            return Err(ProviderError::invalid_request(
                "remoteRef.property is not supported by the AWS Parameter Store: a parameter \
                 holds one value",
            ));
        }
        let spec: PushMetadata = metadata::parse(request.metadata.as_ref())?;
        let kind = match spec.secret_type.as_str() {
            "" | "String" => ParameterType::String,
            "StringList" => ParameterType::StringList,
            "SecureString" => ParameterType::SecureString,
            other => {
                return Err(ProviderError::invalid_request(format!(
                    "invalid secretType in metadata: {other:?}"
                )));
            }
        };
        let kms_key_id = (kind == ParameterType::SecureString).then(|| {
            if spec.kms_key_id.is_empty() {
                DEFAULT_KMS_KEY.to_owned()
            } else {
                spec.kms_key_id.clone()
            }
        });
        let advanced_policies = match spec.tier.kind.as_str() {
            "Advanced" => Some(spec.tier.policies.as_ref().map(ToString::to_string)),
            _ => None,
        };
        Ok(Self {
            name,
            value: value_of(request, spec.encode_as_decoded)?,
            kind,
            description: if spec.description.is_empty() {
                default_description()
            } else {
                spec.description
            },
            kms_key_id,
            advanced_policies,
            tags: owned_tags(&spec.tags)?,
        })
    }
}

/// The text pushed: the selected key's value, or the whole Secret as JSON.
fn value_of(request: &PushRequest, encode_as_decoded: bool) -> Result<String> {
    if request.secret_key.is_some() {
        let value = request.value()?;
        return Ok(String::from_utf8_lossy(value.expose()).into_owned());
    }
    let object: BTreeMap<&str, String> = request
        .secret_data
        .iter()
        .map(|(key, value)| {
            let text = if encode_as_decoded {
                String::from_utf8_lossy(value.expose()).into_owned()
            } else {
                STANDARD.encode(value.expose())
            };
            (key.as_str(), text)
        })
        .collect();
    serde_json::to_string(&object).map_err(|error| {
        ProviderError::invalid_request(format!(
            "failed to serialize secret content as JSON: {error}"
        ))
    })
}

/// Pushes `request` to the parameter it names.
pub(super) async fn push(store: &ParameterStore, request: &PushRequest) -> Result<()> {
    let key = request.remote_ref.remote_key.as_str();
    if key.is_empty() {
        return Err(ProviderError::invalid_request("remote key must be defined"));
    }
    let parameter = Parameter::of(request, store.name(key))?;
    let Some(current) = store.value(&parameter.name).await? else {
        return put(store, &parameter, false).await;
    };
    let current_tags = store.tags(&parameter.name).await?;
    if !is_managed(&current_tags) {
        return Err(ProviderError::new(
            ErrorKind::AlreadyExists,
            "secret not managed by external-secrets",
        ));
    }
    if current == UNDECRYPTED {
        return Err(ProviderError::invalid_data(
            "unable to compare 'sensitive' result, ensure to request a decrypted value",
        ));
    }
    if current == parameter.value {
        return Ok(());
    }
    put(store, &parameter, true).await?;
    sync_tags(store, &parameter.name, &current_tags, &parameter.tags).await
}

/// Writes `parameter`: a new one with its tags, or over an existing one (AWS takes no tags then).
async fn put(store: &ParameterStore, parameter: &Parameter, overwrite: bool) -> Result<()> {
    let name = &parameter.name;
    let tags = if overwrite {
        None
    } else {
        Some(ssm_tags(&parameter.tags)?)
    };
    let (tier, policies) = match &parameter.advanced_policies {
        Some(policies) => (Some(ParameterTier::Advanced), policies.clone()),
        None => (None, None),
    };
    store
        .client
        .put_parameter()
        .name(name)
        .value(&parameter.value)
        .r#type(parameter.kind.clone())
        .overwrite(overwrite)
        .description(&parameter.description)
        .set_key_id(parameter.kms_key_id.clone())
        .set_tier(tier)
        .set_policies(policies)
        .set_tags(tags)
        .send()
        .await
        .map_err(|error| {
            map_sdk_error(
                error,
                format!("unexpected error pushing parameter {name:?}"),
            )
        })?;
    Ok(())
}

/// Deletes the parameter `remote_ref` names if this operator owns it.
pub(super) async fn delete(store: &ParameterStore, remote_ref: &PushRemoteRef) -> Result<()> {
    let name = store.name(&remote_ref.remote_key);
    if store.value(&name).await?.is_none() || !is_managed(&store.tags(&name).await?) {
        return Ok(());
    }
    match store.client.delete_parameter().name(&name).send().await {
        Ok(_) => Ok(()),
        Err(error) if error.code() == Some("ParameterNotFound") => Ok(()),
        Err(error) => Err(map_sdk_error(
            error,
            format!("could not delete parameter {name:?}"),
        )),
    }
}

/// Makes the tags of parameter `name` exactly `desired`.
async fn sync_tags(
    store: &ParameterStore,
    name: &str,
    current: &BTreeMap<String, String>,
    desired: &BTreeMap<String, String>,
) -> Result<()> {
    let action = format!("cannot tag parameter {name:?}");
    let (remove, set) = tag_changes(current, desired);
    if !remove.is_empty() {
        store
            .client
            .remove_tags_from_resource()
            .resource_type(ResourceTypeForTagging::Parameter)
            .resource_id(name)
            .set_tag_keys(Some(remove))
            .send()
            .await
            .map_err(|error| map_sdk_error(error, &action))?;
    }
    if let Some(set) = set {
        store
            .client
            .add_tags_to_resource()
            .resource_type(ResourceTypeForTagging::Parameter)
            .resource_id(name)
            .set_tags(Some(ssm_tags(&set)?))
            .send()
            .await
            .map_err(|error| map_sdk_error(error, &action))?;
    }
    Ok(())
}

fn ssm_tags(tags: &BTreeMap<String, String>) -> Result<Vec<Tag>> {
    tags.iter()
        .map(|(key, value)| {
            Tag::builder()
                .key(key)
                .value(value)
                .build()
                .map_err(|error| {
                    ProviderError::invalid_request(format!("invalid tag {key:?}: {error}"))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::SecretValue;
    use serde_json::json;

    fn request(secret_key: Option<&str>, spec: serde_json::Value) -> PushRequest {
        PushRequest {
            secret_key: secret_key.map(str::to_owned),
            metadata: Some(json!({
                "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
                "kind": "PushSecretMetadata",
                "spec": spec,
            })),
            ..PushRequest::single(
                [
                    ("user".to_owned(), SecretValue::from("admin")),
                    ("pass".to_owned(), SecretValue::from("s3cret")),
                ]
                .into(),
                "user",
                "remote",
            )
        }
    }

    #[test]
    fn defaults_follow_upstream() {
        let parameter = Parameter::of(&request(Some("user"), json!({})), "/p".into()).unwrap();
        assert_eq!(parameter.value, "admin");
        assert_eq!(parameter.kind, ParameterType::String);
        assert_eq!(parameter.kms_key_id, None);
        assert_eq!(parameter.advanced_policies, None);
        assert_eq!(
            parameter.description,
            "secret 'managed-by:external-secrets'"
        );
        assert_eq!(
            parameter.tags.get("managed-by").unwrap(),
            "external-secrets"
        );
    }

    #[test]
    fn secure_strings_get_a_key_and_advanced_tiers_their_policies() {
        let parameter = Parameter::of(
            &request(
                Some("pass"),
                json!({"secretType": "SecureString", "tier": {"type": "Advanced",
                    "policies": [{"Type": "Expiration"}]}}),
            ),
            "/p".into(),
        )
        .unwrap();
        assert_eq!(parameter.kind, ParameterType::SecureString);
        assert_eq!(parameter.kms_key_id.as_deref(), Some("alias/aws/ssm"));
        assert_eq!(
            parameter.advanced_policies,
            Some(Some(r#"[{"Type":"Expiration"}]"#.to_owned()))
        );
        let error = Parameter::of(&request(None, json!({"secretType": "Binary"})), "/p".into())
            .unwrap_err();
        assert_eq!(
            error.message(),
            r#"invalid secretType in metadata: "Binary""#
        );
    }

    #[test]
    fn whole_secrets_are_base64_unless_encoded_as_decoded() {
        let encoded = Parameter::of(&request(None, json!({})), "/p".into()).unwrap();
        assert_eq!(encoded.value, r#"{"pass":"czNjcmV0","user":"YWRtaW4="}"#);
        let decoded = Parameter::of(
            &request(None, json!({"encodeAsDecoded": true})),
            "/p".into(),
        )
        .unwrap();
        assert_eq!(decoded.value, r#"{"pass":"s3cret","user":"admin"}"#);
    }

    #[test]
    fn properties_are_refused() {
        let mut with_property = request(Some("user"), json!({}));
        with_property.remote_ref.property = Some("field".into());
        let error = Parameter::of(&with_property, "/p".into()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidRequest);
    }
}
