//! The `STSSessionToken` generator: temporary AWS credentials from STS `GetSessionToken`; the
//! aws provider's authentication and SDK clients do the work (see
//! `external_secrets_providers::backends::aws::generate_sts_session_token` for the keys), at the
//! endpoints the operator's environment sets (`AWS_STS_ENDPOINT`).

use external_secrets_crds::generators::StsSessionTokenSpec;
use external_secrets_providers::backends::aws::Endpoints;
use external_secrets_providers::credentials::CredentialResolver;

use super::Generated;

/// Requests a session token as `spec` says, reading the Secrets its `auth` names through
/// `credentials`.
pub async fn generate(
    spec: &StsSessionTokenSpec,
    credentials: CredentialResolver,
) -> Result<Generated, String> {
    let endpoints = Endpoints::from_env().map_err(|error| error.to_string())?;
    super::provided(
        external_secrets_providers::backends::aws::generate_sts_session_token(
            spec,
            credentials,
            &endpoints,
        )
        .await,
    )
}
