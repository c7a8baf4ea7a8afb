//! `service: ParameterStore`: parameters of AWS Systems Manager Parameter Store (upstream's
//! `parameterstore`).
//!
//! * Reads: the key (after the store's `prefix`) is the parameter's name; `version` is a version
//!   number or a label (`name:version`, AWS's selector syntax); `SecureString`s are decrypted;
//!   `property` selects in a JSON value (see `json::select`); `metadataPolicy: Fetch` reads the
//!   parameter's tags as a JSON object instead. A missing parameter, version or label is
//!   `NotFound`.
//! * Find: see the `find` module. Push and delete: see the `push` module.
//! * `secret_exists`: the parameter exists.

mod find;
mod push;

use std::collections::BTreeMap;

use async_trait::async_trait;
use aws_config::SdkConfig;
use aws_sdk_ssm::Client;
use aws_sdk_ssm::error::ProvideErrorMetadata;
use aws_sdk_ssm::types::ResourceTypeForTagging;

use super::error::map_sdk_error;
use super::json;
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::request::{Find, MetadataPolicy, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// Codes of a parameter (or version, or label) that does not exist.
const MISSING: &[&str] = &["ParameterNotFound", "ParameterVersionNotFound"];

/// A Parameter Store client of one store.
pub(super) struct ParameterStore {
    client: Client,
    sdk: SdkConfig,
    prefix: String,
}

impl ParameterStore {
    /// A client of the API at `endpoint` (or the region's), naming parameters after `prefix`.
    pub(super) fn new(sdk: SdkConfig, endpoint: Option<&str>, prefix: String) -> Self {
        let mut config = aws_sdk_ssm::config::Builder::from(&sdk);
        if let Some(endpoint) = endpoint {
            config = config.endpoint_url(endpoint);
        }
        Self {
            client: Client::from_conf(config.build()),
            sdk,
            prefix,
        }
    }

    /// The parameter's name in AWS: the store's prefix and the remote key.
    fn name(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// The decrypted value of parameter `selector` (a name, optionally with `:version`),
    /// `None` if it does not exist.
    async fn value(&self, selector: &str) -> Result<Option<String>> {
        let answer = self
            .client
            .get_parameter()
            .name(selector)
            .with_decryption(true)
            .send()
            .await;
        match answer {
            Ok(output) => Ok(Some(
                output
                    .parameter()
                    .and_then(|parameter| parameter.value())
                    .unwrap_or_default()
                    .to_owned(),
            )),
            Err(error) if error.code().is_some_and(|code| MISSING.contains(&code)) => Ok(None),
            Err(error) => Err(map_sdk_error(
                error,
                format!("cannot get parameter {selector:?}"),
            )),
        }
    }

    /// The tags of parameter `name` (which must exist).
    async fn tags(&self, name: &str) -> Result<BTreeMap<String, String>> {
        let output = self
            .client
            .list_tags_for_resource()
            .resource_type(ResourceTypeForTagging::Parameter)
            .resource_id(name)
            .send()
            .await
            .map_err(|error| map_sdk_error(error, format!("error listing tags of {name:?}")))?;
        Ok(output
            .tag_list()
            .iter()
            .map(|tag| (tag.key().to_owned(), tag.value().to_owned()))
            .collect())
    }

    /// The document a read addresses: the value (of a version), or the tags.
    async fn document(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let name = self.name(&remote_ref.key);
        if remote_ref.metadata_policy == MetadataPolicy::Fetch {
            return Ok(json::tags_document(&self.tags(&name).await?));
        }
        let selector = match remote_ref.version.as_deref() {
            Some(version) => format!("{name}:{version}"),
            None => name,
        };
        let value = self.value(&selector).await?.ok_or_else(|| {
            ProviderError::not_found(format!("parameter {selector:?} does not exist"))
        })?;
        Ok(SecretValue::from(value))
    }
}

#[async_trait]
impl SecretsClient for ParameterStore {
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
        Ok(self.value(&name).await?.is_some())
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
