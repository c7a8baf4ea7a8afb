//! The `gcpsm` provider: secrets of Google Cloud Secret Manager.
//!
//! Behaviour follows upstream's `providers/v1/gcp/secretmanager`:
//!
//! * The store addresses project `projectID` (else workload identity's `clusterProjectID`), and
//!   with `location` that region's regional secrets (see `config`).
//! * Authentication: see `auth` (service-account key from a Secret, workload identity, or the
//!   default chain), `workload_identity` and `federation` (with `subject`).
//!   A ClusterSecretStore whose key reference has no namespace resolves it in the namespace of
//!   the object using it (referent auth); validating such a store without one is `Unknown`.
//! * `access_token`: the same credentials as a one-off token, for the `GCRAccessToken`
//!   generator; `vault_jwt`: the signed JWT of the vault provider's `gcp` auth.
//! * Reads, find: see `read`. Push, delete, exists: see `push`.
//! * `validate`: credentials were checked when the client was built (a token was obtained, as
//!   upstream's `NewClient` does), so a built client is `Ready`. Capabilities: ReadWrite.
//!
//! Client library: Google's REST API through `reqwest` rather than the official
//! `google-cloud-secretmanager-v1` crate; `providers/Cargo.toml` says why.

mod access_token;
mod api;
mod auth;
mod config;
mod error;
mod federation;
mod push;
mod read;
mod subject;
mod vault_jwt;
mod workload_identity;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::GcpsmProvider;

use self::api::Api;
use self::auth::TokenSource;
use self::config::Parent;
use crate::client::{Capabilities, SecretsClient, SharedClient, ValidationResult};
use crate::credentials::CredentialResolver;
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::store::{StoreId, StoreKind};
use crate::value::{SecretMap, SecretValue};

pub use self::access_token::{REGISTRY_USERNAME, generate_access_token};
pub use self::config::{
    ENDPOINT_VARIABLE, Endpoints, IAM_CREDENTIALS_VARIABLE, SECURE_TOKEN_VARIABLE, STS_VARIABLE,
    validate_store,
};
pub use self::vault_jwt::{VaultGcpCredentials, vault_login_jwt};

/// The `gcpsm` backend.
#[derive(Debug, Clone, Copy)]
pub struct Gcpsm;

#[async_trait]
impl Provider for Gcpsm {
    type Spec = GcpsmProvider;
    const NAME: &'static str = "gcpsm";

    fn validate_store(&self, spec: &GcpsmProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store)
    }

    async fn new_client(
        &self,
        spec: &GcpsmProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let endpoints = Endpoints::from_env(spec.location.as_deref())?;
        Ok(Arc::new(
            GcpsmClient::new(spec, context.credentials, endpoints).await?,
        ))
    }
}

/// A client of one gcpsm store.
pub struct GcpsmClient {
    /// `None` for a ClusterSecretStore with referent auth validated without a caller.
    api: Option<Api>,
    parent: Parent,
    selection_policy: String,
}

impl GcpsmClient {
    /// Builds the client against `endpoints` and obtains a first token, so broken credentials
    /// fail here (as upstream's `NewClient`).
    pub async fn new(
        spec: &GcpsmProvider,
        credentials: CredentialResolver,
        endpoints: Endpoints,
    ) -> Result<Self> {
        validate_store(spec, credentials.store())?;
        let parent = Parent::of(spec)?;
        let referent_without_caller = credentials.store().kind == StoreKind::ClusterSecretStore
            && credentials.caller_namespace().is_none()
            && is_referent(spec);
        let api = if referent_without_caller {
            None
        } else {
            let http = api::http_client()?;
            let tokens =
                TokenSource::new(spec, &parent, &credentials, &endpoints, http.clone()).await?;
            let api = Api::new(http, endpoints.secret_manager, Arc::new(tokens));
            api.check_credentials().await?;
            Some(api)
        };
        Ok(Self {
            api,
            parent,
            selection_policy: spec.secret_version_selection_policy.clone(),
        })
    }

    fn api(&self) -> Result<&Api> {
        self.api.as_ref().ok_or_else(|| {
            ProviderError::invalid_config(
                "cluster scope requires namespace: this store resolves its credentials in the \
                 namespace of the object using it",
            )
        })
    }
}

/// Upstream's `isReferentSpec`: a key or ServiceAccount reference without a namespace.
fn is_referent(spec: &GcpsmProvider) -> bool {
    let Some(auth) = spec.auth.as_ref() else {
        return false;
    };
    let key_referent = auth.secret_ref.as_ref().is_some_and(|secret_ref| {
        secret_ref
            .secret_access_key_secret_ref
            .as_ref()
            .is_none_or(|selector| selector.namespace.is_none())
    });
    let identity_referent = auth
        .workload_identity
        .as_ref()
        .is_some_and(|identity| identity.service_account_ref.namespace.is_none());
    key_referent || identity_referent
}

#[async_trait]
impl SecretsClient for GcpsmClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        self.read(remote_ref).await
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let value = self.read(remote_ref).await?;
        read::to_map(value.expose())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        self.find(find).await
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        self.push(request).await
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        self.delete(remote_ref).await
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        self.exists(remote_ref).await
    }

    async fn validate(&self) -> Result<ValidationResult> {
        Ok(match self.api {
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
