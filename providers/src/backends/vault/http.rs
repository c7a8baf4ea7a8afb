//! The HTTP side of the Vault API: one `reqwest` client per store (trusted CAs, client
//! certificate, timeout), the headers every request carries, and Vault's answers mapped to
//! provider errors in one place.
//!
//! Every request carries `X-Vault-Request: true` (as the Go client), the store's `headers`,
//! `X-Vault-Inconsistent: forward-active-node` when both `readYourWrites` and
//! `forwardInconsistent` are set (upstream's rule), the replication states of
//! [`ReplicationStates`] when either is set, the namespace (`X-Vault-Namespace`) and the token
//! (`X-Vault-Token`, marked sensitive). Paths are percent-encoded segment by segment under
//! `<server>/v1/`.
//!
//! Answers: 2xx is the body; 404 is [`Reply::Missing`], for the caller to interpret. Other
//! statuses become errors carrying Vault's `errors` list: 401/403 `PermissionDenied`; 412 (a
//! standby not yet caught up), 429 and 5xx temporary (`Unavailable`, `RateLimited`); other 4xx
//! `InvalidRequest`, except a check-and-set mismatch, a temporary `AlreadyExists`. Transport
//! failures are temporary `Unavailable`; a failed TLS handshake is a temporary `InvalidConfig`
//! (a CA fix is needed, but the CA may come from a Secret that changes). Messages never contain
//! the token, headers or request bodies.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;

use super::consistency::{INDEX_HEADER, ReplicationStates};
use crate::error::{ErrorKind, ProviderError, Result};
use crate::transport::{self, Roots, https_client, tls_builder, transport_error};
use crate::value::SecretValue;

/// Request timeout, the Go Vault client's default.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Longest answer read: Vault's own default maximum request size.
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// What the transport is built from.
pub(super) struct Settings {
    /// The server address.
    pub server: reqwest::Url,
    /// CA bundle (PEM) to trust instead of the system roots.
    pub ca_pem: Option<Vec<u8>>,
    /// Client certificate chain and key (PEM), presented when the server asks for one.
    pub identity: Option<(Vec<u8>, SecretValue)>,
    /// The store's `headers`.
    pub headers: HeaderMap,
    /// `readYourWrites || forwardInconsistent`.
    pub read_your_writes: bool,
    /// `readYourWrites && forwardInconsistent`.
    pub forward_inconsistent: bool,
}

/// One store's connection to its Vault server.
pub(super) struct Transport {
    http: reqwest::Client,
    server: reqwest::Url,
    headers: HeaderMap,
    replication: Option<ReplicationStates>,
}

/// One API request.
#[derive(Clone)]
pub(super) struct Call<'a> {
    /// The method (a LIST is a GET with `list=true`, as the Go client sends it).
    pub method: Method,
    /// The path under `/v1/`.
    pub path: &'a str,
    /// Query parameters.
    pub query: Vec<(String, String)>,
    /// A JSON body.
    pub body: Option<serde_json::Value>,
    /// The Vault namespace, if any.
    pub namespace: Option<&'a str>,
    /// The token, if any.
    pub token: Option<&'a SecretValue>,
}

impl<'a> Call<'a> {
    /// A request without query, body, namespace or token.
    pub(super) fn new(method: Method, path: &'a str) -> Self {
        Self {
            method,
            path,
            query: Vec::new(),
            body: None,
            namespace: None,
            token: None,
        }
    }
}

/// A successful answer.
#[derive(Debug)]
pub(super) enum Reply {
    /// A 2xx answer's body (empty for 204).
    Body(Vec<u8>),
    /// A 404 answer (KV v2 answers 404 for a deleted version too, with metadata not needed here).
    Missing,
}

impl Transport {
    /// Builds the HTTP client.
    pub(super) fn new(settings: Settings) -> Result<Self> {
        let tls = tls_config(settings.ca_pem.as_deref(), settings.identity.as_ref())?;
        let http = https_client(tls, TIMEOUT, None, "cannot setup new vault client")?;
        let mut headers = HeaderMap::new();
        headers.insert("X-Vault-Request", HeaderValue::from_static("true"));
        headers.extend(settings.headers);
        if settings.forward_inconsistent {
            headers.insert(
                "X-Vault-Inconsistent",
                HeaderValue::from_static("forward-active-node"),
            );
        }
        Ok(Self {
            http,
            server: settings.server,
            headers,
            replication: settings.read_your_writes.then(ReplicationStates::default),
        })
    }

    /// Sends `call`; `action` names what was being done in errors.
    pub(super) async fn send(&self, call: Call<'_>, action: &str) -> Result<Reply> {
        let mut url = self.server.clone();
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|()| ProviderError::invalid_config("invalid server: not a base url"))?;
            segments.pop_if_empty().push("v1");
            segments.extend(call.path.split('/').filter(|segment| !segment.is_empty()));
        }
        if !call.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in &call.query {
                pairs.append_pair(name, value);
            }
        }
        let mut request = self
            .http
            .request(call.method, url)
            .headers(self.headers.clone());
        if let Some(namespace) = call.namespace.filter(|namespace| !namespace.is_empty()) {
            let value = HeaderValue::from_str(namespace).map_err(|_| {
                ProviderError::invalid_config(format!("invalid vault namespace {namespace:?}"))
            })?;
            request = request.header("X-Vault-Namespace", value);
        }
        if let Some(token) = call.token {
            let mut value = HeaderValue::from_bytes(token.expose()).map_err(|_| {
                ProviderError::invalid_config("the vault token is not a valid header value")
            })?;
            value.set_sensitive(true);
            request = request.header("X-Vault-Token", value);
        }
        if let Some(replication) = &self.replication {
            for state in replication.current() {
                if let Ok(value) = HeaderValue::from_str(&state) {
                    request = request.header(HeaderName::from_static("x-vault-index"), value);
                }
            }
        }
        if let Some(body) = &call.body {
            let bytes = serde_json::to_vec(body).map_err(|error| {
                ProviderError::invalid_request(format!("{action}: cannot encode request: {error}"))
            })?;
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes);
        }
        let response = request
            .send()
            .await
            .map_err(|error| transport_error(action, error))?;
        if let Some(replication) = &self.replication {
            let state = response.headers().get(INDEX_HEADER);
            replication.record(state.and_then(|value| value.to_str().ok()));
        }
        let status = response.status();
        let body = read_body(response, action).await?;
        if status.is_success() {
            Ok(Reply::Body(body))
        } else if status == StatusCode::NOT_FOUND && !names_no_route(&body) {
            Ok(Reply::Missing)
        } else if status == StatusCode::NOT_FOUND {
            Err(no_route(action))
        } else {
            Err(status_error(action, status, &body))
        }
    }
}

/// Builds the rustls configuration: only `ca_pem` (or the system roots) trusted, `identity`
/// presented when the server requests a client certificate.
fn tls_config(
    ca_pem: Option<&[u8]>,
    identity: Option<&(Vec<u8>, SecretValue)>,
) -> Result<rustls::ClientConfig> {
    let roots = ca_pem.map_or(Roots::System, |pem| Roots::Bundle {
        pem,
        invalid: "cannot set Vault CA certificate: failed to parse certificates from CertPool",
    });
    let builder = tls_builder(roots)?;
    match identity {
        None => Ok(builder.with_no_client_auth()),
        Some((certificate_pem, key_pem)) => {
            let chain = CertificateDer::pem_slice_iter(certificate_pem)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|_| client_tls_error("cannot parse the client certificate"))?;
            if chain.is_empty() {
                return Err(client_tls_error("no certificate in the client certificate"));
            }
            let key = PrivateKeyDer::from_pem_slice(key_pem.expose())
                .map_err(|_| client_tls_error("cannot parse the client private key"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|error| client_tls_error(&error.to_string()))
        }
    }
}

fn client_tls_error(detail: &str) -> ProviderError {
    ProviderError::invalid_config(format!("error from Client TLS Auth: {detail}"))
}

/// Reads an answer's body, up to [`MAX_BODY_BYTES`].
async fn read_body(response: reqwest::Response, action: &str) -> Result<Vec<u8>> {
    transport::read_body(response, MAX_BODY_BYTES, action).await
}

/// Vault's error answer.
#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    errors: Vec<String>,
}

/// Whether a 404 answer says no engine is mounted at the path (`no handler for route ...`), as
/// opposed to a missing secret in a mounted engine (no errors, or a deleted version's metadata).
fn names_no_route(body: &[u8]) -> bool {
    serde_json::from_slice::<ErrorBody>(body).is_ok_and(|answer| {
        answer
            .errors
            .iter()
            .any(|error| error.starts_with("no handler for route"))
    })
}

/// A path whose mount is gone or moved: not a deleted secret. Upstream's client reads it as
/// "not found", which would let `deletionPolicy: Delete` empty the target Secret while an
/// operator moves a mount; here it is a temporary error (the target stays, retries back off).
fn no_route(action: &str) -> ProviderError {
    ProviderError::unavailable(format!(
        "{action}: no secrets engine is mounted at this path (404 Not Found, no handler for route)"
    ))
}

/// The error of a non-2xx, non-404 answer.
pub(super) fn status_error(action: &str, status: StatusCode, body: &[u8]) -> ProviderError {
    let errors = serde_json::from_slice::<ErrorBody>(body)
        .map(|body| body.errors.join("; "))
        .unwrap_or_default();
    let detail = if errors.is_empty() {
        status.to_string()
    } else {
        format!("{errors} ({status})")
    };
    let message = format!("{action}: {detail}");
    match status.as_u16() {
        401 | 403 => ProviderError::permission_denied(message),
        400 if errors.contains("check-and-set parameter did not match") => {
            ProviderError::new(ErrorKind::AlreadyExists, message).with_temporary(true)
        }
        412 => ProviderError::unavailable(message),
        429 => ProviderError::new(ErrorKind::RateLimited, message),
        500..=599 => ProviderError::unavailable(message),
        _ => ProviderError::invalid_request(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(code: u16, body: &str) -> ProviderError {
        status_error(
            "read secret",
            StatusCode::from_u16(code).unwrap(),
            body.as_bytes(),
        )
    }

    #[test]
    fn statuses_map_to_kinds() {
        let denied = error(403, r#"{"errors":["permission denied"]}"#);
        assert_eq!(denied.kind(), ErrorKind::PermissionDenied);
        assert!(!denied.is_temporary());
        assert_eq!(
            denied.message(),
            "read secret: permission denied (403 Forbidden)"
        );
        let cas = error(
            400,
            r#"{"errors":["check-and-set parameter did not match the current version"]}"#,
        );
        assert_eq!(cas.kind(), ErrorKind::AlreadyExists);
        assert!(cas.is_temporary());
        let required = error(
            400,
            r#"{"errors":["check-and-set parameter required for this call"]}"#,
        );
        assert_eq!(required.kind(), ErrorKind::InvalidRequest);
        assert_eq!(error(400, "{}").kind(), ErrorKind::InvalidRequest);
        assert!(!error(400, "{}").is_temporary());
        assert_eq!(error(429, "").kind(), ErrorKind::RateLimited);
        assert!(error(429, "").is_temporary());
        for code in [412, 500, 503] {
            assert_eq!(error(code, "").kind(), ErrorKind::Unavailable, "{code}");
            assert!(error(code, "").is_temporary(), "{code}");
        }
        assert_eq!(
            error(503, "not json").message(),
            "read secret: 503 Service Unavailable"
        );
    }

    #[test]
    fn bad_tls_material_is_a_config_error() {
        let error = tls_config(Some(b"not a pem"), None).unwrap_err();
        assert!(
            error
                .message()
                .starts_with("cannot set Vault CA certificate")
        );
        let identity = (b"not a pem".to_vec(), SecretValue::from("nor this"));
        let error = tls_config(None, Some(&identity)).unwrap_err();
        assert_eq!(
            error.message(),
            "error from Client TLS Auth: no certificate in the client certificate"
        );
        assert!(tls_config(None, None).is_ok());
    }
}
