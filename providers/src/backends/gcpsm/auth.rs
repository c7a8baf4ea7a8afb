//! OAuth 2.0 access tokens for Google APIs, cached per client and refreshed before expiry.
//!
//! Methods, as upstream chooses them:
//! * `auth.secretRef`: a service-account key (the JSON file Google issues) from a Secret. The
//!   key signs an RS256 JWT (`iss` the account, `scope` cloud-platform, `aud` the key's
//!   `token_uri`) exchanged at `token_uri` with the JWT-bearer grant (RFC 7523), as Google
//!   documents for server-to-server OAuth.
//! * no auth: the default chain — the key file named by `GOOGLE_APPLICATION_CREDENTIALS`, else
//!   the metadata server's token of the instance's service account (`GCE_METADATA_HOST`
//!   overrides `metadata.google.internal`, as Google's libraries honour).
//! * `auth.workloadIdentity`: GKE workload identity (see `workload_identity`).
//! * `auth.workloadIdentityFederation`: see `federation`.
//!
//! A token is reused until less than [`REFRESH_MARGIN`] of its life is left. Tokens and keys
//! never appear in errors.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use external_secrets_crds::v1::{GcpsmAuth, GcpsmAuthSecretRef, GcpsmProvider};
use reqwest::header::HeaderValue;
use serde::Deserialize;
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::config::{Endpoints, Parent};
use super::federation::Federation;
use super::workload_identity::WorkloadIdentity;
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::transport::transport_error;
use crate::value::SecretValue;

/// The scope every token asks for (upstream's `CloudPlatformRole`).
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// A token with less life left than this is replaced (Google's libraries use a few minutes).
pub const REFRESH_MARGIN: Duration = Duration::from_secs(300);

/// Longest token life believed, whatever the server says.
const MAX_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// Largest key file or token answer read.
const MAX_DOCUMENT_BYTES: usize = 64 * 1024;

/// The JWT-bearer grant type (RFC 7523), form-encoded.
const JWT_BEARER: &str = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer";

/// Upstream's prefix for a key that cannot be used.
const BAD_KEY: &str = "failed to process the provided JSON credentials";

/// How tokens are obtained.
enum Method {
    /// A service-account key.
    Key(ServiceAccountKey),
    /// The metadata server's token endpoint.
    Metadata(reqwest::Url),
    /// GKE workload identity.
    WorkloadIdentity(Box<WorkloadIdentity>),
    /// Workload identity federation.
    Federation(Box<Federation>),
}

/// The fields of a service-account key file this client uses.
#[derive(Deserialize)]
pub(super) struct ServiceAccountKey {
    client_email: String,
    private_key: String,
    #[serde(default)]
    private_key_id: String,
    #[serde(default = "default_token_uri")]
    token_uri: String,
}

fn default_token_uri() -> String {
    "https://oauth2.googleapis.com/token".to_owned()
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    expires_in: u64,
}

/// A cached token and when it stops being used.
struct Cached {
    header: HeaderValue,
    refresh_at: Instant,
}

/// Access tokens of one client.
pub(super) struct TokenSource {
    method: Method,
    http: reqwest::Client,
    cached: Mutex<Option<Cached>>,
}

impl TokenSource {
    /// The token source the store's `auth` names, reading keys through `credentials`.
    pub(super) async fn new(
        spec: &GcpsmProvider,
        parent: &Parent,
        credentials: &CredentialResolver,
        endpoints: &Endpoints,
        http: reqwest::Client,
    ) -> Result<Self> {
        let method = match spec.auth.as_ref() {
            Some(GcpsmAuth {
                workload_identity: Some(identity),
                ..
            }) => Method::WorkloadIdentity(Box::new(WorkloadIdentity::new(
                identity,
                parent.project(),
                credentials,
                endpoints,
            )?)),
            Some(GcpsmAuth {
                workload_identity_federation: Some(federation),
                ..
            }) => Method::Federation(Box::new(
                Federation::new(federation, credentials, endpoints).await?,
            )),
            Some(GcpsmAuth {
                secret_ref: Some(secret_ref),
                ..
            }) => Method::Key(read_key(secret_ref, credentials).await?),
            _ => {
                credentials.use_operator_identity("google default credentials")?;
                default_chain()?
            }
        };
        Ok(Self {
            method,
            http,
            cached: Mutex::new(None),
        })
    }

    /// The `Authorization` header value, from the cache while it is fresh.
    pub(super) async fn authorization(&self) -> Result<HeaderValue> {
        let mut cached = self.cached.lock().await;
        if let Some(token) = cached.as_ref()
            && Instant::now() < token.refresh_at
        {
            return Ok(token.header.clone());
        }
        let (token, expiry) = self.fetch().await?;
        let lifetime = Duration::from_secs(expiry.saturating_sub(now_seconds()));
        let mut header =
            HeaderValue::try_from(format!("Bearer {}", token.expose_str().unwrap_or(""))).map_err(
                |_| ProviderError::invalid_data("the token endpoint returned an unusable token"),
            )?;
        header.set_sensitive(true);
        let refresh_at = Instant::now() + lifetime.min(MAX_LIFETIME).saturating_sub(REFRESH_MARGIN);
        *cached = Some(Cached {
            header: header.clone(),
            refresh_at,
        });
        Ok(header)
    }

    /// A fresh token and when it expires, bypassing the cache (one-off callers: the generator).
    pub(super) async fn fetch(&self) -> Result<Fetched> {
        let request = match &self.method {
            Method::Key(key) => {
                let assertion = key.assertion(now_seconds())?;
                self.http
                    .post(&key.token_uri)
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(format!("grant_type={JWT_BEARER}&assertion={assertion}"))
            }
            Method::Metadata(url) => self
                .http
                .get(url.clone())
                .header("Metadata-Flavor", "Google"),
            Method::WorkloadIdentity(identity) => return identity.fetch(&self.http).await,
            Method::Federation(federation) => return federation.fetch(&self.http).await,
        };
        let answer: TokenAnswer = read_answer(request, "cannot get an access token").await?;
        Ok((
            SecretValue::new(answer.access_token),
            expires_in(answer.expires_in),
        ))
    }
}

/// Sends a token request and reads its JSON answer: 5xx is temporary, any other refusal
/// `PermissionDenied`; the answer's body (it may hold tokens) never reaches the error.
pub(super) async fn read_answer<T: serde::de::DeserializeOwned>(
    request: reqwest::RequestBuilder,
    action: &str,
) -> Result<T> {
    let response = request
        .send()
        .await
        .map_err(|error| transport_error(action, error))?;
    let status = response.status();
    let body = crate::transport::read_body(response, MAX_DOCUMENT_BYTES, action).await?;
    if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        return Err(ProviderError::unavailable(format!(
            "{action}: status {status}"
        )));
    }
    if !status.is_success() {
        return Err(ProviderError::permission_denied(format!(
            "{action}: status {status}"
        )));
    }
    serde_json::from_slice(&body)
        .map_err(|_| ProviderError::invalid_data(format!("{action}: unreadable answer")))
}

impl ServiceAccountKey {
    /// The signed JWT asking `token_uri` for a cloud-platform token, valid one hour from `now`.
    fn assertion(&self, now: u64) -> Result<String> {
        self.sign(&serde_json::json!({
            "iss": self.client_email,
            "scope": SCOPE,
            "aud": self.token_uri,
            "iat": now,
            "exp": now + 3600,
        }))
    }

    /// The service account's e-mail address.
    pub(super) fn email(&self) -> &str {
        &self.client_email
    }

    /// `claims` as an RS256 JWT signed by the key (its id as `kid`).
    pub(super) fn sign(&self, claims: &serde_json::Value) -> Result<String> {
        let header = serde_json::json!({"alg": "RS256", "typ": "JWT", "kid": self.private_key_id});
        let bad = || ProviderError::invalid_config(format!("{BAD_KEY}: invalid private key"));
        let key = crate::jwt::rsa_key_from_pem(self.private_key.as_bytes()).map_err(|_| bad())?;
        crate::jwt::sign_rs256(&key, &header, claims).ok_or_else(bad)
    }
}

/// The service-account key `secret_ref` names, read through `credentials`.
pub(super) async fn read_key(
    secret_ref: &GcpsmAuthSecretRef,
    credentials: &CredentialResolver,
) -> Result<ServiceAccountKey> {
    let selector = secret_ref.secret_access_key_secret_ref.as_ref();
    let (Some(name), Some(key)) = (
        selector.and_then(|s| s.name.as_deref()),
        selector.and_then(|s| s.key.as_deref()),
    ) else {
        return Err(ProviderError::invalid_config(
            "invalid auth secret data: secretAccessKeySecretRef name and key must be set",
        ));
    };
    let namespace = selector.and_then(|s| s.namespace.as_deref());
    let value = credentials
        .secret_key(name, key, namespace, Referent::Allowed)
        .await?;
    parse_key(value.expose())
}

/// A service-account key file, checked to be usable.
fn parse_key(json: &[u8]) -> Result<ServiceAccountKey> {
    if json.len() > MAX_DOCUMENT_BYTES {
        return Err(ProviderError::invalid_config(format!(
            "{BAD_KEY}: key file too large"
        )));
    }
    let key: ServiceAccountKey = serde_json::from_slice(json).map_err(|_| {
        ProviderError::invalid_config(format!(
            "{BAD_KEY}: not a service account key (client_email and private_key are required)"
        ))
    })?;
    super::config::parse_url(&key.token_uri, "the key's token_uri")?;
    Ok(key)
}

/// Google's default credentials as far as this build goes: a key file, else the metadata server.
fn default_chain() -> Result<Method> {
    if let Some(path) = std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS") {
        // Read once per client; the size is checked before the contents are read.
        let unreadable = |error: std::io::Error| {
            ProviderError::invalid_config(format!(
                "unable to get credentials: cannot read GOOGLE_APPLICATION_CREDENTIALS: {error}"
            ))
        };
        let size = std::fs::metadata(&path).map_err(unreadable)?.len();
        if size > MAX_DOCUMENT_BYTES as u64 {
            return Err(ProviderError::invalid_config(format!(
                "{BAD_KEY}: key file too large"
            )));
        }
        let json = std::fs::read(&path).map_err(unreadable)?;
        return Ok(Method::Key(parse_key(&json)?));
    }
    let host = std::env::var("GCE_METADATA_HOST")
        .ok()
        .filter(|host| !host.is_empty())
        .unwrap_or_else(|| "metadata.google.internal".to_owned());
    let url = format!(
        "http://{host}/computeMetadata/v1/instance/service-accounts/default/token?scopes={SCOPE}"
    );
    Ok(Method::Metadata(super::config::parse_url(
        &url,
        "GCE_METADATA_HOST",
    )?))
}

/// A token and its expiry in Unix seconds (absolute, so that no clock reading is taken twice).
pub(super) type Fetched = (SecretValue, u64);

/// The Unix time `seconds` from now (a token answer's `expires_in`).
pub(super) fn expires_in(seconds: u64) -> u64 {
    now_seconds().saturating_add(seconds)
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(super) fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_without_account_or_key_are_refused() {
        let error = parse_key(br#"{"type": "service_account"}"#).err().unwrap();
        assert!(error.message().starts_with(BAD_KEY));
        let bad_pem = br#"{"client_email": "a@p.iam.gserviceaccount.com", "private_key": "x"}"#;
        let key = parse_key(bad_pem).unwrap();
        assert_eq!(key.token_uri, "https://oauth2.googleapis.com/token");
        let error = key.assertion(0).unwrap_err();
        assert_eq!(error.message(), format!("{BAD_KEY}: invalid private key"));
    }
}
