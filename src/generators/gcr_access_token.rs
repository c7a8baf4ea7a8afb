//! The `GCRAccessToken` generator: a Google access token as registry credentials (`username`
//! `oauth2accesstoken`, `password` the token, `expiry` in Unix seconds), as upstream's. The
//! gcpsm provider's credential code does the work (see
//! `external_secrets_providers::backends::gcpsm::generate_access_token`), at the endpoints the
//! operator's environment sets (`GCP_SECURETOKEN_ENDPOINT`, `GCP_IAMCREDENTIALS_ENDPOINT`).

use async_trait::async_trait;
use external_secrets_crds::generators::{GcrAccessToken, GcrAccessTokenSpec};
use external_secrets_crds::v1::GcpsmAuth;
use external_secrets_providers::backends::gcpsm::{Endpoints, generate_access_token};
use external_secrets_providers::credentials::CredentialResolver;

use super::{Error, Generated, Generator, provided};

/// Requests Google access tokens for registries.
pub struct GcrAccessTokenGenerator;

#[async_trait]
impl Generator for GcrAccessTokenGenerator {
    type Object = GcrAccessToken;
    type Spec = GcrAccessTokenSpec;
    const CLUSTER_FIELD: &'static str = "gcrAccessTokenSpec";

    /// Requests a token as `spec.auth` says for `spec.projectID`, reading the Secrets and
    /// ServiceAccounts it names through `credentials`.
    async fn generate(
        &self,
        spec: GcrAccessTokenSpec,
        credentials: CredentialResolver,
    ) -> Result<Generated, Error> {
        // The generator's auth is the store's auth with required cluster fields; the JSON
        // shapes are the same (upstream converts the one into the other).
        let auth: GcpsmAuth = serde_json::to_value(&spec.auth)
            .and_then(serde_json::from_value)
            .map_err(Error::InvalidSpec)?;
        let endpoints = Endpoints::from_env(None).map_err(Error::Provider)?;
        provided(generate_access_token(Some(auth), &spec.project_id, credentials, &endpoints).await)
    }
}
