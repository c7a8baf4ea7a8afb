//! Temporary credentials from STS `AssumeRole` and `AssumeRoleWithWebIdentity`, as credentials
//! providers the SDK calls (and caches until shortly before they expire) whenever it needs
//! credentials.
//!
//! Each assumed role signs its `AssumeRole` call with the credentials of the step before it
//! (static keys, the default chain, or the previous role), which is how upstream chains
//! `additionalRoles` and then `role`. Sessions last 15 minutes (upstream's SDK default) and are
//! named `external-secrets-provider-aws`.

use std::fmt;
use std::time::{Duration, SystemTime};

use aws_config::SdkConfig;
use aws_credential_types::Credentials;
use aws_credential_types::provider::error::CredentialsError;
use aws_credential_types::provider::{ProvideCredentials, future};
use aws_sdk_sts::types::{Credentials as StsCredentials, Tag};

use super::error::map_sdk_error;
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};

/// The session name of every role this provider assumes.
pub(super) const SESSION_NAME: &str = "external-secrets-provider-aws";

/// How long an assumed role's credentials last.
const SESSION_SECONDS: i32 = 900;

/// What to ask STS for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct RoleRequest {
    /// The role's ARN.
    pub role_arn: String,
    /// `externalID`.
    pub external_id: Option<String>,
    /// Session tags (key, value).
    pub tags: Vec<(String, String)>,
    /// Tags that pass on to roles assumed from this session.
    pub transitive_tag_keys: Vec<String>,
}

/// A role assumed with the credentials of `sdk`.
pub(super) struct AssumeRole {
    client: aws_sdk_sts::Client,
    request: RoleRequest,
}

impl fmt::Debug for AssumeRole {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("AssumeRole")
            .field("role_arn", &self.request.role_arn)
            .finish_non_exhaustive()
    }
}

impl AssumeRole {
    /// Assumes `request` through STS (at `endpoint`, or the region's), signing with `sdk`'s
    /// credentials.
    pub(super) fn new(sdk: &SdkConfig, endpoint: Option<&str>, request: RoleRequest) -> Self {
        Self {
            client: sts_client(sdk, endpoint),
            request,
        }
    }

    async fn assume(&self) -> Result<Credentials> {
        let request = &self.request;
        let action = format!("cannot assume role {:?}", request.role_arn);
        let tags = request
            .tags
            .iter()
            .map(|(key, value)| Tag::builder().key(key).value(value).build())
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|error| ProviderError::invalid_config(format!("{action}: {error}")))?;
        let output = self
            .client
            .assume_role()
            .role_arn(&request.role_arn)
            .role_session_name(SESSION_NAME)
            .duration_seconds(SESSION_SECONDS)
            .set_external_id(request.external_id.clone())
            .set_tags((!tags.is_empty()).then_some(tags))
            .set_transitive_tag_keys(
                (!request.transitive_tag_keys.is_empty())
                    .then(|| request.transitive_tag_keys.clone()),
            )
            .send()
            .await
            .map_err(|error| map_sdk_error(error, &action))?;
        let credentials = output.credentials().ok_or_else(|| {
            ProviderError::invalid_data(format!("{action}: STS returned no credentials"))
        })?;
        Ok(temporary_credentials(credentials, "AssumeRole"))
    }
}

impl ProvideCredentials for AssumeRole {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        provide(self.assume())
    }
}

/// How long the ServiceAccount tokens exchanged with STS are requested for (upstream's).
const WEB_IDENTITY_TOKEN_LIFETIME: Duration = Duration::from_secs(600);

/// The ServiceAccount a web identity comes from, and the role it is exchanged for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct WebIdentityRequest {
    /// The role's ARN (the ServiceAccount's `eks.amazonaws.com/role-arn` annotation).
    pub role_arn: String,
    /// The ServiceAccount's name.
    pub service_account: String,
    /// Its namespace as the store names it (`None`: the store's, or the caller's).
    pub namespace: Option<String>,
    /// The token's audiences.
    pub audiences: Vec<String>,
}

/// A role assumed with a fresh ServiceAccount token (IRSA): every time the SDK needs
/// credentials, a token is requested from the API server and exchanged at STS, which needs no
/// AWS credentials for that call.
pub(super) struct WebIdentity {
    client: aws_sdk_sts::Client,
    credentials: CredentialResolver,
    request: WebIdentityRequest,
}

impl fmt::Debug for WebIdentity {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("WebIdentity")
            .field("role_arn", &self.request.role_arn)
            .field("service_account", &self.request.service_account)
            .finish_non_exhaustive()
    }
}

impl WebIdentity {
    /// Exchanges tokens `credentials` obtains for `request`'s role, through STS at `endpoint`
    /// (or the region of `sdk`).
    pub(super) fn new(
        sdk: &SdkConfig,
        endpoint: Option<&str>,
        credentials: CredentialResolver,
        request: WebIdentityRequest,
    ) -> Self {
        Self {
            client: sts_client(sdk, endpoint),
            credentials,
            request,
        }
    }

    async fn assume(&self) -> Result<Credentials> {
        let request = &self.request;
        let token = self
            .credentials
            .service_account_token(
                &request.service_account,
                request.namespace.as_deref(),
                &request.audiences,
                WEB_IDENTITY_TOKEN_LIFETIME,
                Referent::Allowed,
            )
            .await?;
        let token = String::from_utf8(token.token.into_bytes()).map_err(|_| {
            ProviderError::invalid_data("the service account token is not UTF-8 text")
        })?;
        let action = format!(
            "cannot assume role {:?} with web identity",
            request.role_arn
        );
        let output = self
            .client
            .assume_role_with_web_identity()
            .role_arn(&request.role_arn)
            .role_session_name(SESSION_NAME)
            .web_identity_token(token)
            .send()
            .await
            .map_err(|error| map_sdk_error(error, &action))?;
        let credentials = output.credentials().ok_or_else(|| {
            ProviderError::invalid_data(format!("{action}: STS returned no credentials"))
        })?;
        Ok(temporary_credentials(credentials, "WebIdentity"))
    }
}

impl ProvideCredentials for WebIdentity {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        provide(self.assume())
    }
}

/// An STS client configured by `sdk`, at `endpoint` (or the region's).
pub(super) fn sts_client(sdk: &SdkConfig, endpoint: Option<&str>) -> aws_sdk_sts::Client {
    let mut config = aws_sdk_sts::config::Builder::from(sdk);
    if let Some(endpoint) = endpoint {
        config = config.endpoint_url(endpoint);
    }
    aws_sdk_sts::Client::from_conf(config.build())
}

/// The SDK's credentials future of an STS exchange (errors as the provider reports them).
fn provide<'a>(
    exchange: impl std::future::Future<Output = Result<Credentials>> + Send + 'a,
) -> future::ProvideCredentials<'a> {
    future::ProvideCredentials::new(async move {
        exchange.await.map_err(CredentialsError::provider_error)
    })
}

/// STS credentials as SDK credentials, expiring when STS says.
pub(super) fn temporary_credentials(
    credentials: &StsCredentials,
    provider: &'static str,
) -> Credentials {
    Credentials::new(
        credentials.access_key_id(),
        credentials.secret_access_key(),
        Some(credentials.session_token().to_owned()),
        SystemTime::try_from(*credentials.expiration()).ok(),
        provider,
    )
}
