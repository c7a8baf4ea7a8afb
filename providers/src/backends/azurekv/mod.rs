//! Azure Key Vault (`spec.provider.azurekv`), as upstream's `providers/v1/azure/keyvault`:
//! secrets, keys (public JWK) and certificates (DER) read by `secret/`, `key/`, `cert/` remote
//! keys; PushSecret writing objects tagged `managed-by: external-secrets` and never touching
//! others; deletion (Key Vault's soft delete) of managed objects only.
//!
//! Talks to Key Vault's REST API with reqwest (see `Cargo.toml` for why not Microsoft's Rust
//! crates); [`auth`] gets Entra ID tokens for the audience the vault names in its challenge.

mod acr;
mod assertion;
pub mod auth;
pub mod config;
mod error;
mod http;
mod keys;
mod object;
mod push;
mod read;

use async_trait::async_trait;
use external_secrets_crds::v1::AzureKvProvider;

pub use self::acr::generate as generate_acr_access_token;
use self::auth::{TokenSource, WorkloadEnvironment};
use self::config::{Cloud, is_referent, validate_store};
use self::http::{Vault, https_client};
use crate::client::{Capabilities, SecretsClient, SharedClient, ValidationResult};
use crate::credentials::CredentialResolver;
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::store::{StoreId, StoreKind};
use crate::value::{SecretMap, SecretValue};

/// The tag marking objects ESO wrote.
pub const MANAGED_BY: &str = "managed-by";
/// Its value.
pub const MANAGER: &str = "external-secrets";

/// The `azurekv` backend.
#[derive(Debug, Clone, Copy)]
pub struct AzureKv;

#[async_trait]
impl Provider for AzureKv {
    type Spec = AzureKvProvider;

    const NAME: &'static str = "azurekv";

    fn validate_store(&self, spec: &AzureKvProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store)
    }

    async fn new_client(
        &self,
        spec: &AzureKvProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let client =
            AzureKvClient::connect(spec, context.credentials, Endpoints::default()).await?;
        Ok(std::sync::Arc::new(client))
    }
}

/// The variable that moves the instance metadata service (set where a pod identity agent
/// stands in for it), read as Microsoft's MSAL and Azure SDKs read it.
pub const IMDS_HOST_VARIABLE: &str = "AZURE_POD_IDENTITY_AUTHORITY_HOST";
/// The variable that replaces the public cloud's Entra ID authority (azidentity's).
pub const AUTHORITY_HOST_VARIABLE: &str = "AZURE_AUTHORITY_HOST";
/// The instance metadata service's own address.
const IMDS_ORIGIN: &str = "http://169.254.169.254";

/// Where a client reaches what is not in the spec. [`Endpoints::default`] is production's: the
/// process environment's (see [`Endpoints::from_lookup`]), the system roots, the challenge
/// resource checked. Tests point them at a contract fake.
#[derive(Debug, Clone)]
pub struct Endpoints {
    /// The instance metadata service's origin.
    pub imds: String,
    /// `AZURE_AUTHORITY_HOST`: the authority used instead of the public cloud's (see
    /// [`config::Cloud::resolve`]).
    pub authority_host: Option<String>,
    /// A CA (PEM) trusted besides the system roots.
    pub extra_ca_pem: Option<Vec<u8>>,
    /// Whether the vault's challenge must name a resource covering the vault's host. Only a
    /// test against a fake on 127.0.0.1 turns this off.
    pub verify_challenge_resource: bool,
    /// `AZURE_CLIENT_ID`, `AZURE_TENANT_ID`, `AZURE_FEDERATED_TOKEN_FILE`.
    pub workload: WorkloadEnvironment,
}

impl Default for Endpoints {
    fn default() -> Self {
        Self {
            workload: WorkloadEnvironment::from_process(),
            ..Self::from_lookup(|name| std::env::var(name).ok())
        }
    }
}

impl Endpoints {
    /// The endpoints the variables `lookup` gives select: the instance metadata service at
    /// `AZURE_POD_IDENTITY_AUTHORITY_HOST` when set (else the link-local address), the
    /// authority at `AZURE_AUTHORITY_HOST` when set; no workload identity environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let read = |name: &str| {
            lookup(name)
                .map(|value| value.trim().trim_end_matches('/').to_owned())
                .filter(|value| !value.is_empty())
        };
        Self {
            imds: read(IMDS_HOST_VARIABLE).unwrap_or_else(|| IMDS_ORIGIN.to_owned()),
            authority_host: read(AUTHORITY_HOST_VARIABLE),
            extra_ca_pem: None,
            verify_challenge_resource: true,
            workload: WorkloadEnvironment::default(),
        }
    }
}

/// The HTTPS client and token source of `spec`'s credentials, Entra ID and IMDS reached as
/// `endpoints` say (shared by the vault client and the ACR generator).
async fn token_source(
    spec: &AzureKvProvider,
    credentials: CredentialResolver,
    endpoints: Endpoints,
) -> Result<(reqwest::Client, TokenSource)> {
    let http = https_client(endpoints.extra_ca_pem.as_deref())?;
    let cloud = Cloud::resolve(spec, endpoints.authority_host.as_deref())?;
    let tokens = TokenSource::resolve(
        spec,
        credentials,
        http.clone(),
        cloud.authority,
        endpoints.imds,
        &endpoints.workload,
    )
    .await?;
    Ok((http, tokens))
}

/// A client of one vault.
pub struct AzureKvClient {
    /// `None` for a ClusterSecretStore with referent credentials validated without a caller.
    vault: Option<Vault>,
}

impl AzureKvClient {
    /// Resolves the store's credentials and prepares the vault client (tokens are requested on
    /// first use, when the vault has named its audience).
    pub async fn connect(
        spec: &AzureKvProvider,
        credentials: CredentialResolver,
        endpoints: Endpoints,
    ) -> Result<Self> {
        validate_store(spec, credentials.store())?;
        if credentials.store().kind == StoreKind::ClusterSecretStore
            && credentials.caller_namespace().is_none()
            && is_referent(spec)
        {
            return Ok(Self { vault: None });
        }
        let verify_challenge_resource = endpoints.verify_challenge_resource;
        let (http, tokens) = token_source(spec, credentials, endpoints).await?;
        let vault = Vault::new(http, &spec.vault_url, tokens, verify_challenge_resource)?;
        Ok(Self { vault: Some(vault) })
    }

    fn vault(&self) -> Result<&Vault> {
        self.vault
            .as_ref()
            .ok_or_else(|| ProviderError::invalid_config("cluster scope requires namespace"))
    }
}

#[async_trait]
impl SecretsClient for AzureKvClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        read::get_secret(self.vault()?, remote_ref).await
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        read::get_secret_map(self.vault()?, remote_ref).await
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        read::get_all_secrets(self.vault()?, find).await
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        push::push_secret(self.vault()?, request).await
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        push::delete_secret(self.vault()?, remote_ref).await
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        push::secret_exists(self.vault()?, remote_ref).await
    }

    async fn validate(&self) -> Result<ValidationResult> {
        Ok(match self.vault {
            Some(_) => ValidationResult::Ready,
            None => ValidationResult::Unknown,
        })
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
    fn the_environment_moves_the_metadata_service_and_the_authority() {
        let moved = Endpoints::from_lookup(|name| match name {
            IMDS_HOST_VARIABLE => Some("https://127.0.0.1:8443/".to_owned()),
            AUTHORITY_HOST_VARIABLE => Some("https://login.example/".to_owned()),
            _ => None,
        });
        assert_eq!(moved.imds, "https://127.0.0.1:8443");
        assert_eq!(
            moved.authority_host.as_deref(),
            Some("https://login.example")
        );
        let unset = Endpoints::from_lookup(|_| None);
        assert_eq!(unset.imds, IMDS_ORIGIN);
        assert_eq!(unset.authority_host, None);
        let blank = Endpoints::from_lookup(|_| Some(" ".to_owned()));
        assert_eq!(blank.imds, IMDS_ORIGIN);
        assert_eq!(blank.authority_host, None);
    }
}
