//! The `openBao` provider: upstream's read-only OpenBao provider, served by the vault client
//! (OpenBao speaks Vault's API; upstream's `openBao` spec is a subset of `vault`'s: server,
//! path, version, namespace, caBundle/caProvider, and AppRole, token or userpass auth).
//!
//! As upstream: reads, maps and finds by name or path work; find by tags, push, delete and
//! existence checks fail with upstream's messages; the store is `ReadOnly`.

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::{OpenBaoProvider, VaultProvider};

use crate::backends::vault::VaultClient;
use crate::client::{Capabilities, SecretsClient, SharedClient, ValidationResult};
use crate::credentials::CredentialResolver;
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::store::StoreId;
use crate::value::{SecretMap, SecretValue};

/// Upstream's message for writes to this read-only provider.
const READ_ONLY: &str = "(the OpenBao provider is currently read only)";

/// The `vault` spec the `openBao` spec amounts to: every field of it has the same name and
/// meaning there.
fn vault_spec(spec: &OpenBaoProvider) -> Result<VaultProvider> {
    serde_json::to_value(spec)
        .and_then(serde_json::from_value)
        .map_err(|error| ProviderError::invalid_config(format!("invalid openBao spec: {error}")))
}

/// Upstream's `ValidateStore`, as the vault provider checks the same fields.
pub fn validate_store(spec: &OpenBaoProvider, store: &StoreId) -> Result<()> {
    crate::backends::vault::validate_store(&vault_spec(spec)?, store)
}

/// The `openBao` backend.
#[derive(Debug, Clone, Copy)]
pub struct OpenBao;

#[async_trait]
impl Provider for OpenBao {
    type Spec = OpenBaoProvider;
    const NAME: &'static str = "openBao";

    /// Read-only, as upstream's.
    fn capabilities(&self, _: &OpenBaoProvider) -> Capabilities {
        Capabilities::ReadOnly
    }

    fn validate_store(&self, spec: &OpenBaoProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store)
    }

    async fn new_client(
        &self,
        spec: &OpenBaoProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        Ok(Arc::new(
            OpenBaoClient::new(spec, context.credentials).await?,
        ))
    }
}

/// A client of one `openBao` store.
pub struct OpenBaoClient {
    vault: VaultClient,
}

impl OpenBaoClient {
    /// Logs in as the store's auth says (through the vault client).
    pub async fn new(spec: &OpenBaoProvider, credentials: CredentialResolver) -> Result<Self> {
        let vault = VaultClient::new(&vault_spec(spec)?, credentials).await?;
        Ok(Self { vault })
    }
}

#[async_trait]
impl SecretsClient for OpenBaoClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        self.vault.get_secret(remote_ref).await
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        self.vault.get_secret_map(remote_ref).await
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        if !find.tags.is_empty() {
            return Err(ProviderError::unsupported(
                "tag based search is not implemented",
            ));
        }
        self.vault.get_all_secrets(find).await
    }

    async fn push_secret(&self, _request: &PushRequest) -> Result<()> {
        Err(ProviderError::unsupported(format!(
            "push secret is not supported {READ_ONLY}"
        )))
    }

    async fn delete_secret(&self, _remote_ref: &PushRemoteRef) -> Result<()> {
        Err(ProviderError::unsupported(format!(
            "delete secret is not supported {READ_ONLY}"
        )))
    }

    async fn secret_exists(&self, _remote_ref: &PushRemoteRef) -> Result<bool> {
        Err(ProviderError::unsupported("not implemented"))
    }

    async fn validate(&self) -> Result<ValidationResult> {
        self.vault.validate().await
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadOnly
    }

    async fn close(&self) -> Result<()> {
        self.vault.close().await
    }
}
