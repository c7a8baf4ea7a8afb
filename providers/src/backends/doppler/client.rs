//! The Doppler client: reads through the secrets download (answered from the [`EtagCache`] on
//! `304 Not Modified`), find over the whole config, and push/delete through the secrets update
//! (see the module doc of the backend for the rules).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;

use super::api::{Api, Download};
use super::cache::{CacheKey, Cached, EtagCache};
use super::error;
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::property::{json_property, raw_to_bytes};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::store::StoreId;
use crate::value::{SecretMap, SecretValue};

/// The key of the one entry a download in a `format` yields (upstream's).
pub const SECRETS_FILE_KEY: &str = "DOPPLER_SECRETS_FILE";

/// Where the client reads and writes, as the store says.
pub struct Scope {
    /// The project (empty: the service token's).
    pub project: String,
    /// The config (empty: the service token's).
    pub config: String,
    /// The `nameTransformer` for find.
    pub name_transformer: Option<&'static str>,
    /// The `format` for find.
    pub format: Option<&'static str>,
}

/// A client of one store.
pub struct DopplerClient {
    api: Api,
    scope: Scope,
    cache: Arc<EtagCache>,
    store: StoreId,
    caller: Option<String>,
}

impl DopplerClient {
    /// A client of `store` acting for `caller`, sharing the registry's download cache.
    pub fn new(
        api: Api,
        scope: Scope,
        cache: Arc<EtagCache>,
        store: StoreId,
        caller: Option<String>,
    ) -> Self {
        Self {
            api,
            scope,
            cache,
            store,
            caller,
        }
    }

    /// The project and config parameters (only those the store sets).
    fn target(&self) -> Vec<(&'static str, &str)> {
        let mut query = Vec::new();
        if !self.scope.project.is_empty() {
            query.push(("project", self.scope.project.as_str()));
        }
        if !self.scope.config.is_empty() {
            query.push(("config", self.scope.config.as_str()));
        }
        query
    }

    /// Downloads with `query`, sending the cached `ETag` and serving a 304 from the cache.
    async fn download(&self, query: &[(&str, &str)], text: bool) -> Result<SecretValue> {
        let key = CacheKey {
            store: self.store.clone(),
            caller: self.caller.clone(),
            query: query
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>()
                .join("&"),
        };
        let cached = self.cache.get(&key);
        let etag = cached.as_ref().map(|cached| cached.etag.as_str());
        match (self.api.download(query, etag, text).await?, cached) {
            (Download::NotModified, Some(cached)) => Ok(cached.body),
            (Download::NotModified, None) => Err(ProviderError::invalid_data(
                "Doppler API Client Error: not modified without a cached download",
            )),
            (Download::Modified { body, etag }, _) => {
                if !etag.is_empty() {
                    self.cache.set(
                        key,
                        Cached {
                            etag,
                            body: body.clone(),
                        },
                    );
                }
                Ok(body)
            }
        }
    }

    /// Upstream's `GetSecret` without the property: the value of secret `name`.
    async fn secret(&self, name: &str) -> Result<SecretValue> {
        let mut query = self.target();
        query.push(("secrets", name));
        let body = self.download(&query, false).await?;
        let secrets: std::collections::HashMap<String, String> =
            serde_json::from_slice(body.expose())
                .map_err(|failure| error::bad_body("secret", &failure))?;
        secrets
            .get(name)
            .map(|value| SecretValue::from(value.as_str()))
            .ok_or_else(|| error::secret_not_found(name))
    }

    /// Every secret of the config as the store's transformer and format ask (upstream's
    /// `secrets`): names to values, or one `DOPPLER_SECRETS_FILE` entry with the file.
    async fn all(&self) -> Result<SecretMap> {
        let mut query = self.target();
        if let Some(transformer) = self.scope.name_transformer {
            query.push(("name_transformer", transformer));
        }
        if let Some(format) = self.scope.format {
            query.push(("format", format));
        }
        let text = self.scope.format.is_some_and(|format| format != "json");
        let body = self.download(&query, text).await?;
        if self.scope.format.is_some() {
            return Ok(SecretMap::from([(SECRETS_FILE_KEY.to_owned(), body)]));
        }
        let secrets: std::collections::BTreeMap<String, String> =
            serde_json::from_slice(body.expose())
                .map_err(|failure| error::bad_body("secrets", &failure))?;
        Ok(secrets
            .into_iter()
            .map(|(name, value)| (name, SecretValue::from(value)))
            .collect())
    }

    /// Whether secret `name` exists (a conditional download, like a read).
    async fn exists(&self, name: &str) -> Result<bool> {
        match self.secret(name).await {
            Ok(_) => Ok(true),
            Err(missing) if missing.is_not_found() => Ok(false),
            Err(failure) => Err(failure),
        }
    }

    /// Sends an update and forgets the store's cached downloads.
    async fn update(&self, mut body: serde_json::Value) -> Result<()> {
        for (name, value) in self.target() {
            body[name] = json!(value);
        }
        self.api.update(&body).await?;
        self.cache.invalidate(&self.store);
        Ok(())
    }
}

#[async_trait]
impl SecretsClient for DopplerClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let get = || async {
            let value = self.secret(&remote_ref.key).await?;
            match remote_ref.property.as_deref().filter(|p| !p.is_empty()) {
                None => Ok(value),
                Some(property) => json_property(value.expose(), property)
                    .map(SecretValue::new)
                    .ok_or_else(|| {
                        ProviderError::not_found(format!("property {property} not found in secret"))
                    }),
            }
        };
        get()
            .await
            .map_err(|failure| failure.context(format!("could not get secret {}", remote_ref.key)))
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let value = self.get_secret(remote_ref).await?;
        let object: std::collections::BTreeMap<String, Box<serde_json::value::RawValue>> =
            serde_json::from_slice(value.expose()).map_err(|failure| {
                ProviderError::invalid_data(format!(
                    "unable to unmarshal secret {}: {failure}",
                    remote_ref.key
                ))
            })?;
        Ok(object
            .into_iter()
            .map(|(key, raw)| (key, SecretValue::new(raw_to_bytes(&raw))))
            .collect())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        let name = find.name.as_ref().map(|name| name.matcher()).transpose()?;
        let all = self
            .all()
            .await
            .map_err(|failure| failure.context("could not get secrets"))?;
        Ok(all
            .into_iter()
            .filter(|(key, _)| name.as_ref().is_none_or(|regex| regex.is_match(key)))
            .filter(|(key, _)| {
                find.path
                    .as_deref()
                    .is_none_or(|path| key.starts_with(path))
            })
            .collect())
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        let remote_key = &request.remote_ref.remote_key;
        let value = String::from_utf8(request.value()?.into_bytes()).map_err(|_| {
            ProviderError::invalid_request("Doppler secret values must be UTF-8 text")
        })?;
        self.update(json!({"secrets": {remote_key: value}}))
            .await
            .map_err(|failure| failure.context(format!("could not push secrets {remote_key}")))
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        let name = &remote_ref.remote_key;
        let delete = || async {
            if !self.exists(name).await? {
                return Ok(());
            }
            let change = json!({
                "name": name, "originalName": name, "value": null, "shouldDelete": true,
            });
            self.update(json!({"change_requests": [change]})).await
        };
        delete()
            .await
            .map_err(|failure| failure.context(format!("could not delete secrets {name}")))
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        self.exists(&remote_ref.remote_key).await
    }

    async fn validate(&self) -> Result<ValidationResult> {
        self.api.authenticate().await?;
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}
