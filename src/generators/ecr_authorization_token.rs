//! The `ECRAuthorizationToken` generator: registry credentials from ECR
//! `GetAuthorizationToken`; the aws provider's authentication and SDK clients do the work (see
//! `external_secrets_providers::backends::aws::generate_ecr_authorization_token` for the keys), at the
//! endpoints the operator's environment sets (`AWS_ECR_ENDPOINT`, `AWS_STS_ENDPOINT`).

use async_trait::async_trait;
use external_secrets_crds::generators::{EcrAuthorizationToken, EcrAuthorizationTokenSpec};
use external_secrets_providers::backends::aws::Endpoints;
use external_secrets_providers::credentials::CredentialResolver;

use super::{Error, Generated, Generator, provided};

/// Requests ECR authorization tokens.
pub struct EcrAuthorizationTokenGenerator;

#[async_trait]
impl Generator for EcrAuthorizationTokenGenerator {
    type Object = EcrAuthorizationToken;
    type Spec = EcrAuthorizationTokenSpec;
    const CLUSTER_FIELD: &'static str = "ecrAuthorizationTokenSpec";

    /// Requests an authorization token as `spec` says, reading the Secrets its `auth` names
    /// through `credentials`.
    async fn generate(
        &self,
        spec: EcrAuthorizationTokenSpec,
        credentials: CredentialResolver,
    ) -> Result<Generated, Error> {
        let endpoints = Endpoints::from_env().map_err(Error::Provider)?;
        provided(
            external_secrets_providers::backends::aws::generate_ecr_authorization_token(
                &spec,
                credentials,
                &endpoints,
            )
            .await,
        )
    }
}
