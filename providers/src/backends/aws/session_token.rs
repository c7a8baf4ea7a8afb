//! The `STSSessionToken` generator: temporary credentials from STS `GetSessionToken`, signed
//! with the generator's credentials (static keys from a Secret, or the SDK's default chain,
//! then `role` assumed), as upstream's `sts` generator.
//!
//! Keys: `access_key_id`, `secret_access_key`, `session_token` and `expiration` (Unix seconds).
//! `requestParameters` pass `sessionDuration`, `serialNumber` and `tokenCode` (MFA) through.
//! `auth.jwt` is refused, as upstream refuses it.

use external_secrets_crds::generators::StsSessionTokenSpec;

use super::endpoints::Endpoints;
use super::error::map_sdk_error;
use super::sts::sts_client;
use crate::credentials::CredentialResolver;
use crate::error::{ProviderError, Result};
use crate::value::{SecretMap, SecretValue};

/// A session token for the credentials `spec` names (Secrets read through `credentials`),
/// from STS at `endpoints.sts` (or the region's).
pub async fn generate(
    spec: &StsSessionTokenSpec,
    credentials: CredentialResolver,
    endpoints: &Endpoints,
) -> Result<SecretMap> {
    let auth = spec.auth.as_ref();
    if auth.is_some_and(|auth| auth.jwt.is_some()) {
        return Err(ProviderError::invalid_config(
            "auth.jwt: jwt auth cannot be used for STS Session Token generation",
        ));
    }
    let sdk = super::auth::generator_config(
        &spec.region,
        auth,
        spec.role.as_deref(),
        &credentials,
        endpoints,
    )
    .await?;
    let parameters = spec.request_parameters.as_ref();
    let output = sts_client(&sdk, endpoints.sts.as_deref())
        .get_session_token()
        .set_duration_seconds(parameters.and_then(|p| p.session_duration))
        .set_serial_number(parameters.and_then(|p| p.serial_number.clone()))
        .set_token_code(parameters.and_then(|p| p.token_code.clone()))
        .send()
        .await
        .map_err(|error| map_sdk_error(error, "unable to get authorization token"))?;
    let issued = output
        .credentials()
        .ok_or_else(|| ProviderError::invalid_data("no credentials found"))?;
    Ok([
        ("access_key_id", issued.access_key_id().to_owned()),
        ("secret_access_key", issued.secret_access_key().to_owned()),
        ("session_token", issued.session_token().to_owned()),
        ("expiration", issued.expiration().secs().to_string()),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), SecretValue::from(value)))
    .collect())
}
