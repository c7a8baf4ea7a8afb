//! The `aws` provider: AWS Secrets Manager (`service: SecretsManager`) and Systems Manager
//! Parameter Store (`service: ParameterStore`), through the official AWS SDK.
//!
//! Behaviour follows upstream's aws provider:
//!
//! * Credentials: see the `auth` module (static keys from Secrets, or the SDK's default chain,
//!   then `additionalRoles` and `role` assumed through STS). A ClusterSecretStore whose
//!   credentials resolve in the namespace of the object using it (referent auth) validates as
//!   `Unknown` without that namespace, as upstream.
//! * Endpoints: the region's, unless upstream's environment variables say otherwise (see the
//!   `endpoints` module); [`AwsClient::with_endpoints`] sets them explicitly.
//! * `prefix` is prepended to every remote key read, pushed or deleted (not to find results).
//! * Reads, finds, pushes and deletes: see the `secrets_manager` and `parameter_store` modules.
//!   A pushed secret carries the tag `managed-by: external-secrets`; one without it is never
//!   overwritten nor deleted.
//! * Errors: see the `error` module. `validate` obtains credentials (assuming the roles).
//! * The `STSSessionToken` and `ECRAuthorizationToken` generators: see the `session_token` and
//!   `ecr` modules; they authenticate as a store would.
//!
//! Differences from upstream: `service: CertificateManager` is not supported (a permanent
//! `Unsupported` error); no client-side cache of read values (clients live as long
//! as their store, not one reconcile); the SDK does not retry by itself (the store's retry
//! settings apply to every call); a missing property is `NotFound`.

mod auth;
mod config;
mod ecr;
mod endpoints;
mod error;
mod json;
mod metadata;
mod parameter_store;
mod sdk;
mod secrets_manager;
mod session_token;
mod sts;

use std::sync::Arc;

use async_trait::async_trait;
use aws_config::SdkConfig;
use external_secrets_crds::v1::AwsProvider;

use self::config::{Deletion, Service};
use self::parameter_store::ParameterStore;
use self::secrets_manager::SecretsManager;
use crate::client::{Capabilities, SecretsClient, SharedClient, ValidationResult};
use crate::credentials::CredentialResolver;
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::store::{StoreId, StoreKind};
use crate::value::{SecretMap, SecretValue};

pub use self::config::validate_store;
pub use self::ecr::generate as generate_ecr_authorization_token;
pub use self::endpoints::{
    ECR_ENDPOINT, Endpoints, SECRETS_MANAGER_ENDPOINT, SSM_ENDPOINT, STS_ENDPOINT,
};
pub use self::session_token::generate as generate_sts_session_token;

/// The `aws` backend.
#[derive(Debug, Clone, Copy)]
pub struct Aws;

#[async_trait]
impl Provider for Aws {
    type Spec = AwsProvider;
    const NAME: &'static str = "aws";

    fn validate_store(&self, spec: &AwsProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store)
    }

    async fn new_client(
        &self,
        spec: &AwsProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        Ok(Arc::new(AwsClient::new(spec, context.credentials).await?))
    }
}

/// A client of one aws store.
pub struct AwsClient {
    /// `None` for a ClusterSecretStore with referent auth built without a caller: it cannot know
    /// whose credentials to use.
    service: Option<Box<dyn SecretsClient>>,
}

impl AwsClient {
    /// Builds the client, reaching AWS where the operator's environment says (upstream's
    /// endpoint variables) or at the region's endpoints.
    pub async fn new(spec: &AwsProvider, credentials: CredentialResolver) -> Result<Self> {
        Self::with_endpoints(spec, credentials, Endpoints::from_env()?).await
    }

    /// Builds the client, reaching AWS at `endpoints` (a local emulator, a VPC endpoint). Reads
    /// the referenced credentials now, so a missing Secret fails here; roles are assumed on the
    /// first call (and by `validate`).
    pub async fn with_endpoints(
        spec: &AwsProvider,
        credentials: CredentialResolver,
        endpoints: Endpoints,
    ) -> Result<Self> {
        validate_store(spec, credentials.store())?;
        let service = Service::of(spec)?;
        let referent_without_caller = credentials.store().kind == StoreKind::ClusterSecretStore
            && credentials.caller_namespace().is_none()
            && config::is_referent(spec.auth.as_ref());
        if referent_without_caller {
            return Ok(Self { service: None });
        }
        let sdk = auth::configure(spec, &credentials, &endpoints).await?;
        let prefix = spec.prefix.clone().unwrap_or_default();
        let service: Box<dyn SecretsClient> = match service {
            Service::SecretsManager => Box::new(SecretsManager::new(
                sdk,
                endpoints.secrets_manager.as_deref(),
                prefix,
                Deletion::of(spec.secrets_manager.as_ref())?,
            )),
            Service::ParameterStore => {
                Box::new(ParameterStore::new(sdk, endpoints.ssm.as_deref(), prefix))
            }
        };
        Ok(Self {
            service: Some(service),
        })
    }

    fn service(&self) -> Result<&dyn SecretsClient> {
        self.service.as_deref().ok_or_else(|| {
            ProviderError::invalid_config(
                "cluster scope requires namespace: this store resolves its credentials in the \
                 namespace of the object using it",
            )
        })
    }
}

#[async_trait]
impl SecretsClient for AwsClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        self.service()?.get_secret(remote_ref).await
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        self.service()?.get_secret_map(remote_ref).await
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        self.service()?.get_all_secrets(find).await
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        self.service()?.push_secret(request).await
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        self.service()?.delete_secret(remote_ref).await
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        self.service()?.secret_exists(remote_ref).await
    }

    async fn validate(&self) -> Result<ValidationResult> {
        match &self.service {
            Some(service) => service.validate().await,
            // Referent auth: whose credentials is only known per ExternalSecret.
            None => Ok(ValidationResult::Unknown),
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

/// The regular expression of `find.name` (upstream's message when it does not compile).
fn name_pattern(regexp: &str) -> Result<regex::Regex> {
    regex::Regex::new(regexp).map_err(|error| {
        ProviderError::invalid_request(format!(
            "could not compile find.name.regexp [{regexp}]: {error}"
        ))
    })
}

/// Upstream's validation of both services: credentials can be obtained (roles assumed).
async fn validate_credentials(sdk: &SdkConfig) -> Result<ValidationResult> {
    let provider = sdk.credentials_provider().ok_or_else(|| {
        ProviderError::invalid_config("no AWS credentials are configured for this store")
    })?;
    aws_credential_types::provider::ProvideCredentials::provide_credentials(&provider)
        .await
        .map_err(|error| error::map_credentials_error(&error))?;
    Ok(ValidationResult::Ready)
}
