//! The Bitwarden Secrets Manager client: secrets by UUID or by name within the store's
//! project, find, and PushSecret with upstream's rules (never overwrite a secret that differs
//! in anything but its value; create instead).

use async_trait::async_trait;

use super::api::{Identifier, SdkServer, Secret, Write};
use super::map::secret_map;
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// The PushSecret metadata key whose (string) value becomes the secret's note.
const NOTE_METADATA_KEY: &str = "note";

/// A client of one organization and project through one SDK server.
pub struct BitwardenClient {
    server: SdkServer,
    organization: String,
    project: String,
}

impl BitwardenClient {
    /// A client of `organization`'s `project` through `server`.
    pub fn new(server: SdkServer, organization: String, project: String) -> Self {
        Self {
            server,
            organization,
            project,
        }
    }

    /// The organization's secret identifiers.
    async fn identifiers(&self) -> Result<Vec<Identifier>> {
        self.server
            .list(&self.organization)
            .await
            .map_err(|failure| failure.context("failed to get all secrets"))
    }

    /// The one secret of the store's project named `key`, if any (upstream's `findSecretByRef`:
    /// two of that name in the project are an error).
    async fn by_name(&self, key: &str) -> Result<Option<Secret>> {
        let mut found: Option<Secret> = None;
        for identifier in self.identifiers().await? {
            if identifier.key != key {
                continue;
            }
            let secret = self.server.get(&identifier.id).await?;
            if secret.project_id.as_deref() != Some(self.project.as_str()) {
                continue;
            }
            if found.is_some() {
                return Err(ProviderError::invalid_request(format!(
                    "more than one secret found for project {} with key {key}",
                    self.project
                )));
            }
            found = Some(secret);
        }
        Ok(found)
    }

    /// The secret `key` names: a UUID, or a name within the store's project.
    async fn secret(&self, key: &str) -> Result<Secret> {
        if is_uuid(key) {
            return self.server.get(key).await;
        }
        self.by_name(key)
            .await
            .map_err(|failure| failure.context("failed to get secret"))?
            .ok_or_else(|| {
                ProviderError::not_found(format!(
                    "no secret found for project id {} and name {key}",
                    self.project
                ))
            })
    }
}

/// Whether `key` is a UUID as go-openapi's `strfmt.IsUUID` accepts one (dashed, or 32 hex
/// digits; any case).
fn is_uuid(key: &str) -> bool {
    let hex = |part: &str| part.bytes().all(|byte| byte.is_ascii_hexdigit());
    if key.len() == 32 {
        return hex(key);
    }
    let parts: Vec<&str> = key.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(part, length)| part.len() == length && hex(part))
}

/// The string value at `key` anywhere in PushSecret metadata, as upstream's
/// `FetchValueFromMetadata` digs for it (top level first, then nested objects); anything else
/// is the empty note.
fn metadata_note(metadata: Option<&serde_json::Value>) -> String {
    fn dig(object: &serde_json::Map<String, serde_json::Value>) -> Option<&str> {
        if let Some(value) = object.get(NOTE_METADATA_KEY) {
            return value.as_str();
        }
        object
            .values()
            .filter_map(serde_json::Value::as_object)
            .find_map(dig)
    }
    metadata
        .and_then(serde_json::Value::as_object)
        .and_then(dig)
        .unwrap_or_default()
        .to_owned()
}

#[async_trait]
impl SecretsClient for BitwardenClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let secret = self.secret(&remote_ref.key).await?;
        match remote_ref.property.as_deref().filter(|p| !p.is_empty()) {
            None => Ok(SecretValue::from(secret.value)),
            Some(property) => json_property(secret.value.as_bytes(), property)
                .map(SecretValue::new)
                .ok_or_else(|| {
                    ProviderError::not_found(format!(
                        "property {property} does not exist in secret {}",
                        remote_ref.key
                    ))
                }),
        }
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let secret = self.secret(&remote_ref.key).await?;
        secret_map(secret.value.as_bytes())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        if !find.tags.is_empty() || find.path.is_some() {
            return Err(ProviderError::unsupported(
                "Bitwarden Secrets Manager secrets have no tags or paths: find by name only",
            ));
        }
        let matcher = find.name.as_ref().map(|name| name.matcher()).transpose()?;
        let mut found = SecretMap::new();
        for identifier in self.identifiers().await? {
            if matcher
                .as_ref()
                .is_some_and(|matcher| !matcher.is_match(&identifier.key))
            {
                continue;
            }
            let secret = self.server.get(&identifier.id).await?;
            found.insert(identifier.id, SecretValue::from(secret.value));
        }
        Ok(found)
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        let key = request.remote_ref.remote_key.as_str();
        if key.is_empty() {
            return Err(ProviderError::invalid_request("remote key must be defined"));
        }
        let value = request.value()?;
        // Go strings carry any bytes; its JSON encoder writes invalid UTF-8 as U+FFFD.
        let value = String::from_utf8_lossy(value.expose());
        let note = metadata_note(request.metadata.as_ref());
        let mut write = Write {
            id: None,
            key,
            note: &note,
            organization_id: &self.organization,
            project_ids: [&self.project],
            value: &value,
        };
        for identifier in self.identifiers().await? {
            if identifier.key != key {
                continue;
            }
            let secret = self.server.get(&identifier.id).await?;
            let same_place = secret.key == key
                && secret.note == note
                && secret.project_id.as_deref() == Some(self.project.as_str());
            if !same_place {
                continue;
            }
            if secret.value == value {
                return Ok(());
            }
            write.id = Some(&identifier.id);
            self.server.write(&write).await?;
            return Ok(());
        }
        self.server.write(&write).await?;
        Ok(())
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        let key = remote_ref.remote_key.as_str();
        let id = if is_uuid(key) {
            key.to_owned()
        } else {
            match self
                .by_name(key)
                .await
                .map_err(|failure| failure.context("failed to get secret"))?
            {
                Some(secret) => secret.id,
                // Already gone: nothing to delete.
                None => return Ok(()),
            }
        };
        let results = match self.server.delete(&[id.as_str()]).await {
            Ok(results) => results,
            Err(gone) if gone.is_not_found() => return Ok(()),
            Err(failure) => return Err(failure.context("error deleting secret")),
        };
        let failures: Vec<String> = results
            .iter()
            .filter_map(|result| {
                let error = result.error.as_deref()?;
                Some(format!(
                    "error deleting secret with id {}: {error}",
                    result.id
                ))
            })
            .collect();
        if failures.is_empty() {
            return Ok(());
        }
        Err(ProviderError::invalid_request(format!(
            "there were one or more errors deleting secrets: {}",
            failures.join("\n")
        )))
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        match self.secret(&remote_ref.remote_key).await {
            Ok(_) => Ok(true),
            Err(missing) if missing.is_not_found() => Ok(false),
            Err(failure) => Err(failure),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        self.identifiers().await?;
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_recognised_as_strfmt_does() {
        assert!(is_uuid("d8f29773-3019-4973-9bbc-66327d077fe2"));
        assert!(is_uuid("D8F29773-3019-4973-9BBC-66327D077FE2"));
        assert!(is_uuid("d8f2977330194973a9bc66327d077fe2"));
        assert!(!is_uuid("this-is-a-name"));
        assert!(!is_uuid("d8f29773-3019-4973-9bbc-66327d077fe"));
        assert!(!is_uuid("g8f29773-3019-4973-9bbc-66327d077fe2"));
    }

    #[test]
    fn the_note_is_dug_out_of_the_metadata() {
        let note = |metadata: serde_json::Value| metadata_note(Some(&metadata));
        assert_eq!(note(serde_json::json!({"note": "top"})), "top");
        assert_eq!(
            note(serde_json::json!({"apiVersion": "v1", "spec": {"note": "nested"}})),
            "nested"
        );
        assert_eq!(note(serde_json::json!({"spec": {"note": 5}})), "");
        assert_eq!(metadata_note(None), "");
    }
}
