//! The `STSSessionToken` generator: temporary AWS credentials from STS `GetSessionToken`; the
//! aws provider's authentication and SDK clients do the work (see
//! `external_secrets_providers::backends::aws::generate_sts_session_token` for the keys), at the
//! endpoints the operator's environment sets (`AWS_STS_ENDPOINT`).

use async_trait::async_trait;
use external_secrets_crds::generators::{StsSessionToken, StsSessionTokenSpec};
use external_secrets_providers::backends::aws::Endpoints;
use external_secrets_providers::credentials::CredentialResolver;

use super::{Error, Generated, Generator, provided};

/// Requests STS session tokens.
pub struct StsSessionTokenGenerator;

#[async_trait]
impl Generator for StsSessionTokenGenerator {
    type Object = StsSessionToken;
    type Spec = StsSessionTokenSpec;
    const CLUSTER_FIELD: &'static str = "stsSessionTokenSpec";

    /// Requests a session token as `spec` says, reading the Secrets its `auth` names through
    /// `credentials`.
    async fn generate(
        &self,
        spec: StsSessionTokenSpec,
        credentials: CredentialResolver,
    ) -> Result<Generated, Error> {
        let endpoints = Endpoints::from_env().map_err(Error::Provider)?;
        provided(
            external_secrets_providers::backends::aws::generate_sts_session_token(
                &spec,
                credentials,
                &endpoints,
            )
            .await,
        )
    }
}
