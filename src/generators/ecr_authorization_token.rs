//! The `ECRAuthorizationToken` generator: registry credentials from ECR
//! `GetAuthorizationToken`; the aws provider's authentication and SDK clients do the work (see
//! `external_secrets_providers::backends::aws::generate_ecr_authorization_token` for the keys), at the
//! endpoints the operator's environment sets (`AWS_ECR_ENDPOINT`, `AWS_STS_ENDPOINT`).

use external_secrets_crds::generators::EcrAuthorizationTokenSpec;
use external_secrets_providers::backends::aws::Endpoints;
use external_secrets_providers::credentials::CredentialResolver;

use super::Generated;

/// Requests an authorization token as `spec` says, reading the Secrets its `auth` names
/// through `credentials`.
pub async fn generate(
    spec: &EcrAuthorizationTokenSpec,
    credentials: CredentialResolver,
) -> Result<Generated, String> {
    let endpoints = Endpoints::from_env().map_err(|error| error.to_string())?;
    super::provided(
        external_secrets_providers::backends::aws::generate_ecr_authorization_token(
            spec,
            credentials,
            &endpoints,
        )
        .await,
    )
}
