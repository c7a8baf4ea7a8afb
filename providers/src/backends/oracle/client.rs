//! The OCI Vault client: secret bundles by name (with a `stage` as the version), `property` by
//! gjson path, find by name or free-form tags across the vault's list, push into the vault with
//! the store's encryption key, deletion scheduled, and the vault read as the store's check.

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use super::api::{Api, Bundle, Summary};
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// The stages `GetSecretBundleByName` accepts as `version`.
const STAGES: [&str; 5] = ["CURRENT", "PENDING", "LATEST", "PREVIOUS", "DEPRECATED"];

/// A client of one vault.
pub struct OracleClient {
    api: Api,
    vault: String,
    compartment: String,
    encryption_key: String,
}

impl OracleClient {
    /// A client of `vault`, listing in and creating into `compartment` with `encryption_key`.
    pub fn new(api: Api, vault: String, compartment: String, encryption_key: String) -> Self {
        Self {
            api,
            vault,
            compartment,
            encryption_key,
        }
    }

    /// The bundle of `name` (at `stage`), or `NotFound`.
    async fn bundle(&self, name: &str, stage: Option<&str>) -> Result<Bundle> {
        self.api
            .bundle(&self.vault, name, stage)
            .await?
            .ok_or_else(|| {
                ProviderError::not_found(format!(
                    "Secrets service failed to GetSecretBundleByName, HTTP status code 404: secret {name} not found"
                ))
            })
    }

    /// The current value of `name`, as `GetSecret` without property.
    async fn value(&self, name: &str, stage: Option<&str>) -> Result<Vec<u8>> {
        decode(&self.bundle(name, stage).await?)
    }
}

/// The bytes of a bundle's base64 content.
fn decode(bundle: &Bundle) -> Result<Vec<u8>> {
    let content = bundle
        .secret_bundle_content
        .as_ref()
        .filter(|content| content.get("contentType").and_then(|t| t.as_str()) == Some("BASE64"))
        .and_then(|content| content.get("content"))
        .and_then(|content| content.as_str())
        .ok_or_else(|| ProviderError::invalid_data("unexpected secret bundle content"))?;
    STANDARD
        .decode(content)
        .map_err(|_| ProviderError::invalid_data("the secret bundle content is not valid base64"))
}

/// Whether a summary matches `find` as upstream's `matchesRef`: the name expression when
/// given, otherwise any one of the tags.
fn matches(summary: &Summary, find: &Find, regex: Option<&regex::Regex>) -> bool {
    if let Some(regex) = regex {
        return regex.is_match(&summary.secret_name);
    }
    find.tags
        .iter()
        .any(|(key, value)| summary.freeform_tags.get(key) == Some(value))
}

#[async_trait]
impl SecretsClient for OracleClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let stage = remote_ref.version.as_deref().filter(|v| !v.is_empty());
        if let Some(stage) = stage
            && !STAGES.contains(&stage)
        {
            return Err(ProviderError::invalid_request(format!(
                "unsupported enum value for Stage: {stage}"
            )));
        }
        let payload = self.value(&remote_ref.key, stage).await?;
        let Some(property) = remote_ref.property.as_deref().filter(|p| !p.is_empty()) else {
            return Ok(SecretValue::new(payload));
        };
        json_property(&payload, property)
            .map(SecretValue::new)
            .ok_or_else(|| {
                ProviderError::not_found(format!("missing Key in secret: {}", remote_ref.key))
            })
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let data = self.get_secret(remote_ref).await?;
        let object: std::collections::BTreeMap<String, String> =
            serde_json::from_slice(data.expose()).map_err(|failure| {
                ProviderError::invalid_data(format!(
                    "unable to unmarshal secret from JSON: {}",
                    crate::redact::json_error(&failure)
                ))
            })?;
        Ok(object
            .into_iter()
            .map(|(key, value)| (key, SecretValue::from(value)))
            .collect())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        let regex = find.name.as_ref().map(|name| name.matcher()).transpose()?;
        let summaries = self.api.list(&self.compartment, &self.vault).await?;
        let mut found = SecretMap::new();
        for summary in summaries {
            if summary.time_of_deletion.is_some() || !matches(&summary, find, regex.as_ref()) {
                continue;
            }
            let value = self.value(&summary.secret_name, None).await?;
            found.insert(summary.secret_name, SecretValue::new(value));
        }
        Ok(found)
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        if self.encryption_key.is_empty() {
            return Err(ProviderError::invalid_config(
                "SecretStore must reference encryption key",
            ));
        }
        let value = request.value()?;
        let name = &request.remote_ref.remote_key;
        let content = json!({"contentType": "BASE64", "content": STANDARD.encode(value.expose())});
        match self.api.bundle(&self.vault, name, None).await? {
            None => {
                let details = json!({
                    "compartmentId": self.compartment,
                    "keyId": self.encryption_key,
                    "secretContent": content,
                    "secretName": name,
                    "vaultId": self.vault,
                });
                self.api.create(&details).await
            }
            Some(bundle) => {
                if decode(&bundle)? == value.expose() {
                    return Ok(());
                }
                self.api
                    .update(&bundle.secret_id, &json!({"secretContent": content}))
                    .await
            }
        }
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        match self
            .api
            .bundle(&self.vault, &remote_ref.remote_key, None)
            .await?
        {
            None => Ok(()),
            Some(bundle) if bundle.time_of_deletion.is_some() => Ok(()),
            Some(bundle) => self.api.schedule_deletion(&bundle.secret_id).await,
        }
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        Ok(self
            .api
            .bundle(&self.vault, &remote_ref.remote_key, None)
            .await?
            .is_some())
    }

    async fn validate(&self) -> Result<ValidationResult> {
        match self.api.vault(&self.vault).await {
            Ok(()) => Ok(ValidationResult::Ready),
            Err((error, code)) if code == "NotAuthorizedOrNotFound" => {
                Ok(ValidationResult::Undetermined(error.message().to_owned()))
            }
            Err((error, _)) => Err(error),
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}
