//! `service: SecretsManager`: secrets of AWS Secrets Manager (upstream's `secretsmanager`).
//!
//! * Reads: the key (after the store's `prefix`) is the secret's name or ARN; `version` is a
//!   version stage (default `AWSCURRENT`), or `uuid/<id>` for a version id; the value is the
//!   secret string or, for binary secrets, the bytes; `property` selects in a JSON value (see
//!   `json::select`); `metadataPolicy: Fetch` reads the secret's tags as a JSON object instead.
//!   A missing secret or version, or a secret scheduled for deletion, is `NotFound`.
//! * Find: see the `find` module. Push and delete: see the `push` module.
//! * `secret_exists`: the secret has a current value (the property is not looked at, as
//!   upstream).

mod find;
mod push;
mod read;

use async_trait::async_trait;
use aws_config::SdkConfig;
use aws_sdk_secretsmanager::Client;

use super::config::Deletion;
use super::json;
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::request::{Find, MetadataPolicy, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// A Secrets Manager client of one store.
pub(super) struct SecretsManager {
    client: Client,
    sdk: SdkConfig,
    prefix: String,
    deletion: Deletion,
}

impl SecretsManager {
    /// A client of the API at `endpoint` (or the region's), naming secrets after `prefix`.
    pub(super) fn new(
        sdk: SdkConfig,
        endpoint: Option<&str>,
        prefix: String,
        deletion: Deletion,
    ) -> Self {
        let mut config = aws_sdk_secretsmanager::config::Builder::from(&sdk);
        if let Some(endpoint) = endpoint {
            config = config.endpoint_url(endpoint);
        }
        Self {
            client: Client::from_conf(config.build()),
            sdk,
            prefix,
            deletion,
        }
    }

    /// The secret's name in AWS: the store's prefix and the remote key.
    fn name(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// The document a read addresses: the value (of a version), or the tags.
    async fn document(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let name = self.name(&remote_ref.key);
        let missing = || ProviderError::not_found(format!("secret {name:?} does not exist"));
        if remote_ref.metadata_policy == MetadataPolicy::Fetch {
            let description = self.describe(&name).await?.ok_or_else(missing)?;
            return Ok(json::tags_document(&read::tags(&description)));
        }
        let version = read::Version::parse(remote_ref.version.as_deref());
        self.value(&name, &version).await?.ok_or_else(missing)
    }
}

#[async_trait]
impl SecretsClient for SecretsManager {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        json::selected(self.document(remote_ref).await?, remote_ref)
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let value = self.get_secret(remote_ref).await?;
        json::to_map(value.expose(), &remote_ref.key)
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        find::find(self, find).await
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        push::push(self, request).await
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        push::delete(self, remote_ref).await
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        let name = self.name(&remote_ref.remote_key);
        let current = read::Version::parse(None);
        Ok(self.value(&name, &current).await?.is_some())
    }

    async fn validate(&self) -> Result<ValidationResult> {
        super::validate_credentials(&self.sdk).await
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}
