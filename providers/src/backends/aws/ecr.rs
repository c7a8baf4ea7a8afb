//! The `ECRAuthorizationToken` generator: registry credentials from ECR
//! `GetAuthorizationToken`, signed with the generator's credentials (static keys from a
//! Secret, a ServiceAccount's web identity, or the SDK's default chain, then `role` assumed),
//! as upstream's `ecr` generator.
//!
//! Keys: `username` and `password` (the decoded `user:password` token), `proxy_endpoint` (the
//! registry URL) and `expires_at` (Unix seconds).
//!
//! Difference from upstream: `scope: public` (ECR Public) is refused as not supported by this
//! build.

use aws_config::SdkConfig;
use base64::Engine as _;
use external_secrets_crds::generators::EcrAuthorizationTokenSpec;

use super::endpoints::Endpoints;
use super::error::map_sdk_error;
use crate::credentials::CredentialResolver;
use crate::error::{ProviderError, Result};
use crate::value::{SecretMap, SecretValue};

/// An authorization token of the private registry of the account `spec`'s credentials belong
/// to (Secrets read through `credentials`), from ECR at `endpoints.ecr` (or the region's).
pub async fn generate(
    spec: &EcrAuthorizationTokenSpec,
    credentials: CredentialResolver,
    endpoints: &Endpoints,
) -> Result<SecretMap> {
    match spec.scope.as_deref() {
        None | Some("" | "private") => {}
        Some("public") => {
            return Err(ProviderError::unsupported(
                "scope: public (ECR Public) is not supported by this build",
            ));
        }
        Some(other) => {
            return Err(ProviderError::invalid_config(format!(
                "scope: must be private or public, got {other:?}"
            )));
        }
    }
    let sdk = super::auth::generator_config(
        &spec.region,
        spec.auth.as_ref(),
        spec.role.as_deref(),
        &credentials,
        endpoints,
    )
    .await?;
    let output = ecr_client(&sdk, endpoints.ecr.as_deref())
        .get_authorization_token()
        .send()
        .await
        .map_err(|error| map_sdk_error(error, "unable to get authorization token"))?;
    let [data] = output.authorization_data() else {
        return Err(ProviderError::invalid_data(format!(
            "unexpected number of authorization tokens. expected 1, found {}",
            output.authorization_data().len()
        )));
    };
    let token = data.authorization_token().unwrap_or_default();
    let (username, password) = decode_token(token)?;
    Ok([
        ("username", username),
        ("password", password),
        (
            "proxy_endpoint",
            data.proxy_endpoint().unwrap_or_default().to_owned(),
        ),
        (
            "expires_at",
            data.expires_at()
                .map(|at| at.secs().to_string())
                .unwrap_or_default(),
        ),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), SecretValue::from(value)))
    .collect())
}

/// An ECR client configured by `sdk`, at `endpoint` (or the region's).
fn ecr_client(sdk: &SdkConfig, endpoint: Option<&str>) -> aws_sdk_ecr::Client {
    let mut config = aws_sdk_ecr::config::Builder::from(sdk);
    if let Some(endpoint) = endpoint {
        config = config.endpoint_url(endpoint);
    }
    aws_sdk_ecr::Client::from_conf(config.build())
}

/// The user and password of a base64 `user:password` token (the error never shows it).
fn decode_token(token: &str) -> Result<(String, String)> {
    let unexpected = || ProviderError::invalid_data("unexpected token format");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(token)
        .map_err(|_| unexpected())?;
    let decoded = String::from_utf8(decoded).map_err(|_| unexpected())?;
    let mut parts = decoded.split(':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(user), Some(password), None) => Ok((user.to_owned(), password.to_owned())),
        _ => Err(unexpected()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_user_colon_password_and_others_are_refused_without_showing_them() {
        assert_eq!(
            decode_token("QVdTOnNlY3JldA==").unwrap(),
            ("AWS".to_owned(), "secret".to_owned())
        );
        for bad in ["bm9jb2xvbg==", "YTpiOmM=", "not base64!"] {
            let error = decode_token(bad).unwrap_err();
            assert_eq!(error.message(), "unexpected token format");
        }
    }
}
