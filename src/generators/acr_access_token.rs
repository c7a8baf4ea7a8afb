//! The `ACRAccessToken` generator: Azure Container Registry refresh or access tokens; the
//! azurekv provider's Entra ID credentials and the registry exchange do the work (see
//! `external_secrets_providers::backends::azurekv::generate_acr_access_token` for the keys),
//! with the instance metadata service and workload identity environment of the operator's
//! process.

use async_trait::async_trait;
use external_secrets_crds::generators::{AcrAccessToken, AcrAccessTokenSpec};
use external_secrets_providers::backends::azurekv::{Endpoints, generate_acr_access_token};
use external_secrets_providers::credentials::CredentialResolver;

use super::{Error, Generated, Generator, provided};

/// Requests ACR tokens.
pub struct AcrAccessTokenGenerator;

#[async_trait]
impl Generator for AcrAccessTokenGenerator {
    type Object = AcrAccessToken;
    type Spec = AcrAccessTokenSpec;
    const CLUSTER_FIELD: &'static str = "acrAccessTokenSpec";

    /// Requests a registry token as `spec` says, reading the Secrets and ServiceAccount its
    /// `auth` names through `credentials`.
    async fn generate(
        &self,
        spec: AcrAccessTokenSpec,
        credentials: CredentialResolver,
    ) -> Result<Generated, Error> {
        provided(generate_acr_access_token(&spec, credentials, Endpoints::default()).await)
    }
}
