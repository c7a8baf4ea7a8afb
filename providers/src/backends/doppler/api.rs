//! The Doppler REST API (v3) as upstream's client calls it: the secrets download (one secret or
//! all, with name transformer and format, conditional on an `ETag`), the secrets update, the
//! projects list as a token check, and the OIDC token exchange. Every request carries the token
//! as HTTP Basic user with an empty password, as upstream's client sends it; bodies are bounded.
//!
//! The API is `https://api.doppler.com` unless the `DOPPLER_BASE_URL` environment variable of
//! the controller names another (upstream's override; `https://` is assumed without a scheme).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use external_secrets_crds::meta::ServiceAccountSelector;
use reqwest::{Method, StatusCode, header};
use serde::Deserialize;

use super::error;
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};
use crate::value::SecretValue;

/// Upstream's environment variable overriding the API address.
pub const BASE_URL_VARIABLE: &str = "DOPPLER_BASE_URL";
/// The API address without the override.
const DEFAULT_BASE_URL: &str = "https://api.doppler.com";
/// The `User-Agent` upstream's client sends.
const USER_AGENT: &str = "doppler-external-secrets";
/// Upstream's request timeout.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Longest answer read (a whole config's download).
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// An OIDC-issued token is renewed when it has less than this left (upstream's buffer).
const RENEW_BEFORE: Duration = Duration::from_secs(60);

/// How the client authenticates.
pub enum Credential {
    /// A service or personal token read from a Secret.
    Token(SecretValue),
    /// Tokens exchanged for ServiceAccount tokens (`auth.oidcConfig`).
    Oidc(Box<Oidc>),
}

/// The OIDC exchange: a ServiceAccount token for a Doppler API token, renewed before it expires.
pub struct Oidc {
    /// The Doppler service account identity id.
    pub identity: String,
    /// The ServiceAccount whose tokens are exchanged.
    pub service_account: ServiceAccountSelector,
    /// Validity asked for the ServiceAccount tokens.
    pub lifetime: Duration,
    /// Audiences asked for: the selector's (or the API address), then the store's own.
    pub audiences: Vec<String>,
    /// Resolves the ServiceAccount under the store's namespace rules.
    pub credentials: CredentialResolver,
    /// The current API token and when it expires.
    pub current: tokio::sync::Mutex<Option<(SecretValue, SystemTime)>>,
}

/// A download's answer.
pub enum Download {
    /// New content and its `ETag` (empty when Doppler sent none).
    Modified { body: SecretValue, etag: String },
    /// The content of the `ETag` sent is still current.
    NotModified,
}

/// A client of the Doppler API.
pub struct Api {
    http: reqwest::Client,
    base: String,
    credential: Credential,
}

/// The API address: the override of the environment, or Doppler's.
pub fn base_url() -> String {
    let base = std::env::var(BASE_URL_VARIABLE).unwrap_or_else(|_| DEFAULT_BASE_URL.to_owned());
    let base = base.trim_end_matches('/');
    if base.contains("://") {
        base.to_owned()
    } else {
        format!("https://{base}")
    }
}

impl Api {
    /// A client of the API at `base` (system trust roots, which honour `SSL_CERT_FILE`).
    pub fn new(base: String, credential: Credential) -> Result<Self> {
        reqwest::Url::parse(&base).map_err(|failure| {
            ProviderError::invalid_config(format!("unable to create DopplerClient : {failure}"))
        })?;
        let tls = tls_config(Roots::System)?;
        let http = https_client(
            tls,
            TIMEOUT,
            Some(USER_AGENT),
            "unable to create DopplerClient",
        )?;
        Ok(Self {
            http,
            base,
            credential,
        })
    }

    /// Checks the token (upstream's `Authenticate`: the projects list).
    pub async fn authenticate(&self) -> Result<()> {
        self.send(Method::GET, "/v3/projects", &[], None, None, false)
            .await
            .map(|_| ())
    }

    /// Downloads secrets; with `etag`, a 304 is [`Download::NotModified`]. `text` asks for a
    /// non-JSON format.
    pub async fn download(
        &self,
        query: &[(&str, &str)],
        etag: Option<&str>,
        text: bool,
    ) -> Result<Download> {
        let path = "/v3/configs/config/secrets/download";
        let (status, etag_sent, body) = self
            .send(Method::GET, path, query, etag, None, text)
            .await?;
        if status == StatusCode::NOT_MODIFIED {
            return Ok(Download::NotModified);
        }
        Ok(Download::Modified {
            body: SecretValue::new(body),
            etag: etag_sent.unwrap_or_default(),
        })
    }

    /// Sets or deletes secrets (`POST /v3/configs/config/secrets`).
    pub async fn update(&self, body: &serde_json::Value) -> Result<()> {
        let path = "/v3/configs/config/secrets";
        self.send(Method::POST, path, &[], None, Some(body), false)
            .await
            .map(|_| ())
    }

    /// Sends a request; an answer outside 2xx/3xx is an error (upstream's success range).
    async fn send(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        etag: Option<&str>,
        body: Option<&serde_json::Value>,
        text: bool,
    ) -> Result<(StatusCode, Option<String>, Vec<u8>)> {
        let token = self.token().await?;
        let token = token
            .expose_str()
            .ok_or_else(|| ProviderError::invalid_config("doppler token is not valid UTF-8"))?;
        let accept = if text {
            "text/plain"
        } else {
            "application/json"
        };
        let mut url = reqwest::Url::parse(&format!("{}{path}", self.base)).map_err(|failure| {
            ProviderError::invalid_config(format!("Doppler API Client Error: {failure}"))
        })?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut request = self
            .http
            .request(method, url)
            .basic_auth(token, Some(""))
            .header(header::ACCEPT, accept);
        if let Some(etag) = etag {
            request = request.header(header::IF_NONE_MATCH, etag);
        }
        if let Some(body) = body {
            request = request
                .header(header::CONTENT_TYPE, "application/json")
                .body(body.to_string());
        }
        let action = "Doppler API Client Error";
        let response = request
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let etag = response
            .headers()
            .get(header::ETAG)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let bytes = read_body(response, MAX_BODY_BYTES, action).await?;
        if status.is_success() || status.is_redirection() {
            return Ok((status, etag, bytes));
        }
        Err(error::status(status, &bytes))
    }

    /// The token to send: the configured one, or the current OIDC-issued one.
    async fn token(&self) -> Result<SecretValue> {
        match &self.credential {
            Credential::Token(token) => Ok(token.clone()),
            Credential::Oidc(oidc) => self.oidc_token(oidc).await,
        }
    }

    async fn oidc_token(&self, oidc: &Oidc) -> Result<SecretValue> {
        let mut current = oidc.current.lock().await;
        if let Some((token, expiry)) = current.as_ref()
            && expiry
                .duration_since(SystemTime::now())
                .is_ok_and(|left| left > RENEW_BEFORE)
        {
            return Ok(token.clone());
        }
        let exchanged = self
            .exchange(oidc)
            .await
            .map_err(|failure| failure.context("failed to get OIDC token"))?;
        *current = Some(exchanged.clone());
        Ok(exchanged.0)
    }

    /// Upstream's `ExchangeToken`: `POST /v3/auth/oidc` with the ServiceAccount token.
    async fn exchange(&self, oidc: &Oidc) -> Result<(SecretValue, SystemTime)> {
        let account = oidc
            .credentials
            .service_account_token(
                &oidc.service_account.name,
                oidc.service_account.namespace.as_deref(),
                &oidc.audiences,
                oidc.lifetime,
                Referent::Allowed,
            )
            .await?;
        let account_token = account.token.expose_str().unwrap_or_default();
        let body = serde_json::json!({"identity": oidc.identity, "token": account_token});
        let action = "failed to make request to Doppler";
        let response = self
            .http
            .post(format!("{}/v3/auth/oidc", self.base))
            .header(header::ACCEPT, "application/json")
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let bytes = read_body(response, 1 << 20, action).await?;
        if status != StatusCode::OK {
            return Err(error::status(status, &bytes)
                .context(format!("Doppler OIDC auth failed with status {status}")));
        }
        #[derive(Deserialize)]
        struct Answer {
            success: bool,
            token: String,
            expires_at: String,
        }
        let answer: Answer = serde_json::from_slice(&bytes)
            .map_err(|failure| error::bad_body("OIDC token", &failure))?;
        if !answer.success {
            return Err(ProviderError::permission_denied("Doppler OIDC auth failed"));
        }
        let expiry = chrono::DateTime::parse_from_rfc3339(&answer.expires_at).map_err(|_| {
            ProviderError::invalid_data("failed to parse expiration time of the OIDC token")
        })?;
        let seconds = u64::try_from(expiry.timestamp()).unwrap_or_default();
        Ok((
            SecretValue::from(answer.token),
            UNIX_EPOCH + Duration::from_secs(seconds),
        ))
    }
}
