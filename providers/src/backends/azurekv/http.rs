//! The Key Vault data plane over HTTPS: one `reqwest` client per store (rustls + ring, the
//! system roots or a given CA), `api-version` on every call, and Key Vault's challenge-based
//! authentication: the first request goes out without a token (and without its body), the
//! vault answers `401` with `WWW-Authenticate: Bearer authorization=..., resource=...`, and the
//! resource named there (checked against the vault's host, as the Azure SDKs do) is the
//! audience tokens are requested for from then on.

use std::time::Duration;

use reqwest::{Method, StatusCode, Url};
use tokio::sync::Mutex;

use super::auth::TokenSource;
use super::error::{key_vault_error, read_body};
use crate::error::{ProviderError, Result};
use crate::transport::{self, Roots, tls_config, transport_error};

/// The REST API version sent (the one upstream's azsecrets/azkeys clients use).
pub const API_VERSION: &str = "7.4";
/// Request timeout.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A Key Vault answer that was not an error.
pub(super) enum Reply {
    /// 2xx with its body.
    Found(Vec<u8>),
    /// 404: the object (or version) does not exist.
    Missing,
}

/// A Key Vault error answer the caller may want to look at (its code).
pub(super) struct Refused {
    /// Key Vault's (inner) error code, e.g. `ObjectIsDeletedButRecoverable`.
    pub code: String,
    /// The mapped error.
    pub error: ProviderError,
}

/// One store's vault.
pub(super) struct Vault {
    http: reqwest::Client,
    base: Url,
    tokens: TokenSource,
    resource: Mutex<Option<String>>,
    verify_challenge_resource: bool,
}

/// The HTTPS client: `extra_ca_pem` trusted besides the system roots.
pub(super) fn https_client(extra_ca_pem: Option<&[u8]>) -> Result<reqwest::Client> {
    let tls = tls_config(Roots::SystemAnd(extra_ca_pem))?;
    transport::https_client(tls, TIMEOUT, None, "http client setup failed")
}

impl Vault {
    /// A vault at `vault_url`.
    pub fn new(
        http: reqwest::Client,
        vault_url: &str,
        tokens: TokenSource,
        verify_challenge_resource: bool,
    ) -> Result<Self> {
        let base = Url::parse(vault_url)
            .ok()
            .filter(|url| url.scheme() == "https" && url.host_str().is_some())
            .ok_or_else(|| ProviderError::invalid_config("vaultUrl must be an https URL"))?;
        Ok(Self {
            http,
            base,
            tokens,
            resource: Mutex::new(None),
            verify_challenge_resource,
        })
    }

    /// The URL of `segments` under the vault, each percent-encoded.
    pub fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url.query_pairs_mut()
            .append_pair("api-version", API_VERSION);
        url
    }

    /// Whether `link` (a `nextLink`) points into this vault: tokens are never sent elsewhere.
    pub fn owns(&self, link: &Url) -> bool {
        link.scheme() == self.base.scheme()
            && link.host_str() == self.base.host_str()
            && link.port_or_known_default() == self.base.port_or_known_default()
    }

    /// One call; `Err(Refused)` carries Key Vault's code for callers that handle one.
    pub async fn call(
        &self,
        action: &str,
        method: Method,
        url: Url,
        body: Option<&serde_json::Value>,
    ) -> std::result::Result<Reply, Refused> {
        let plain = |error: ProviderError| Refused {
            code: String::new(),
            error,
        };
        let resource = self.resource(action, &method, &url).await.map_err(plain)?;
        let token = self.tokens.token(&resource).await.map_err(plain)?;
        let mut request = self
            .http
            .request(method, url)
            .bearer_auth(token.expose_str().unwrap_or_default());
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .map_err(|error| plain(transport_error(action, error)))?;
        let status = response.status();
        let bytes = read_body(response).await.map_err(plain)?;
        match status {
            status if status.is_success() => Ok(Reply::Found(bytes)),
            StatusCode::NOT_FOUND => Ok(Reply::Missing),
            status => {
                let (code, error) = key_vault_error(action, status, &bytes);
                Err(Refused { code, error })
            }
        }
    }

    /// Like [`Vault::call`], for callers without special codes.
    pub async fn send(
        &self,
        action: &str,
        method: Method,
        url: Url,
        body: Option<&serde_json::Value>,
    ) -> Result<Reply> {
        self.call(action, method, url, body)
            .await
            .map_err(|refused| refused.error)
    }

    /// The audience learned from the vault's challenge, asking for it on first use.
    async fn resource(&self, action: &str, method: &Method, url: &Url) -> Result<String> {
        let mut known = self.resource.lock().await;
        if let Some(resource) = known.as_ref() {
            return Ok(resource.clone());
        }
        let response = self
            .http
            .request(method.clone(), url.clone())
            .send()
            .await
            .map_err(|error| transport_error(action, error))?;
        let challenge = response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let status = response.status();
        let (Some(challenge), StatusCode::UNAUTHORIZED) = (challenge, status) else {
            let bytes = read_body(response).await?;
            let (_, error) = key_vault_error(action, status, &bytes);
            return Err(error.context("expected an authentication challenge"));
        };
        let resource = challenge_resource(&challenge).ok_or_else(|| {
            ProviderError::unavailable(format!(
                "{action}: no scope or resource in the vault's authentication challenge"
            ))
        })?;
        if self.verify_challenge_resource {
            verify_resource(&resource, &self.base)?;
        }
        *known = Some(resource.clone());
        Ok(resource)
    }
}

/// The `resource` (or `scope` without `/.default`) parameter of a Bearer challenge.
fn challenge_resource(challenge: &str) -> Option<String> {
    let parameters = challenge.trim().strip_prefix("Bearer")?;
    let mut resource = None;
    for parameter in parameters.split(',') {
        let Some((name, value)) = parameter.trim().split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"');
        match name.trim() {
            "resource" if !value.is_empty() => resource = Some(value.to_owned()),
            "scope" if resource.is_none() && !value.is_empty() => {
                resource = Some(value.trim_end_matches("/.default").to_owned());
            }
            _ => {}
        }
    }
    resource
}

/// The challenge's resource must be the vault's host or a parent domain of it, so a rogue
/// server cannot obtain tokens for another audience.
fn verify_resource(resource: &str, vault: &Url) -> Result<()> {
    let resource_host = Url::parse(resource)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned));
    let vault_host = vault.host_str().unwrap_or_default();
    let matches = resource_host
        .is_some_and(|host| vault_host == host || vault_host.ends_with(&format!(".{host}")));
    if matches {
        Ok(())
    } else {
        Err(ProviderError::invalid_config(format!(
            "challenge resource '{resource}' doesn't match the requested domain '{vault_host}'"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_name_their_resource() {
        let legacy = r#"Bearer authorization="https://login.microsoftonline.com/t", resource="https://vault.azure.net""#;
        assert_eq!(
            challenge_resource(legacy).as_deref(),
            Some("https://vault.azure.net")
        );
        let scoped =
            r#"Bearer authorization="https://login/t", scope="https://vault.azure.net/.default""#;
        assert_eq!(
            challenge_resource(scoped).as_deref(),
            Some("https://vault.azure.net")
        );
        assert_eq!(challenge_resource("Basic realm=x"), None);
    }

    #[test]
    fn resources_must_cover_the_vault_host() {
        let vault = Url::parse("https://team.vault.azure.net").unwrap();
        assert!(verify_resource("https://vault.azure.net", &vault).is_ok());
        assert!(verify_resource("https://evil.example", &vault).is_err());
        assert!(verify_resource("https://azure.net.evil", &vault).is_err());
    }
}
