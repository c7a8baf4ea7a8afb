//! The webhook's HTTP side: building the client (timeout, trusted CAs) and mapping responses.
//!
//! TLS is rustls with the ring provider. With `caBundle` or `caProvider` set, only those CAs are
//! trusted (as upstream replaces Go's root pool); otherwise the system roots are.
//!
//! Responses map to errors as upstream's do, with kinds for the controllers: 404 is `NotFound`
//! (the secret is gone: deletionPolicy applies), 304 is `NotModified`, other non-2xx statuses are
//! "endpoint gave error `<status>`" (401/403 permission denied; 408, 429 and 5xx temporary).
//! Connection failures and timeouts are temporary `Unavailable` errors; a failed TLS handshake
//! (an untrusted certificate) is a temporary `InvalidConfig` error, not retried within the call.
//! Messages never include the URL or headers, which may carry templated credentials.

use std::time::Duration;

use crate::error::{ErrorKind, ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};

/// What a failed call was, in upstream's words.
const ENDPOINT: &str = "failed to call endpoint";

/// Longest response body read (a webhook answers with one secret, not a download).
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Request timeout when the store sets none (upstream waits forever; a hung endpoint would block
/// a reconcile worker).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest `timeout` a store may set: a call holds a reconcile worker while it waits.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(300);

/// Builds the HTTP client of one store.
pub fn build_client(timeout: Duration, ca_pem: Option<&[u8]>) -> Result<reqwest::Client> {
    let roots = ca_pem.map_or(Roots::System, |pem| Roots::Bundle {
        pem,
        invalid: "failed to append cabundle",
    });
    https_client(
        tls_config(roots)?,
        timeout,
        None,
        "failed to build http client",
    )
}

/// One rendered request.
pub struct Request {
    /// The HTTP method.
    pub method: reqwest::Method,
    /// The rendered URL (may contain credentials: never logged).
    pub url: String,
    /// Rendered headers, in order.
    pub headers: Vec<(String, String)>,
    /// The rendered body; empty sends none.
    pub body: Vec<u8>,
}

/// What came back: a 2xx body, or the status of an error the caller may interpret.
pub enum Outcome {
    /// A 2xx answer's body.
    Body(Vec<u8>),
    /// A non-2xx status.
    Status(reqwest::StatusCode),
}

/// Sends `request` and reads the answer.
pub async fn send(client: &reqwest::Client, request: Request) -> Result<Outcome> {
    let url = reqwest::Url::parse(&request.url)
        .map_err(|error| ProviderError::invalid_config(format!("failed to parse url: {error}")))?;
    let mut builder = client.request(request.method, url);
    for (name, value) in &request.headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            ProviderError::invalid_config(format!("failed to parse header {name}: invalid name"))
        })?;
        let value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
            ProviderError::invalid_config(format!("failed to parse header {name}: invalid value"))
        })?;
        builder = builder.header(name, value);
    }
    if !request.body.is_empty() {
        builder = builder.body(request.body);
    }
    let response = builder
        .send()
        .await
        .map_err(|error| transport_error(ENDPOINT, error))?;
    let status = response.status();
    if !status.is_success() {
        return Ok(Outcome::Status(status));
    }
    let body = read_body(response, MAX_BODY_BYTES, ENDPOINT).await?;
    Ok(Outcome::Body(body))
}

/// The error for a non-2xx status other than those a caller handles itself.
pub fn status_error(prefix: &str, status: reqwest::StatusCode) -> ProviderError {
    match status.as_u16() {
        404 => ProviderError::not_found("secret does not exist (endpoint returned 404 Not Found)"),
        304 => ProviderError::new(ErrorKind::NotModified, "not modified"),
        code => {
            let kind = match code {
                401 | 403 => ErrorKind::PermissionDenied,
                429 => ErrorKind::RateLimited,
                408 | 500..=599 => ErrorKind::Unavailable,
                _ => ErrorKind::InvalidRequest,
            };
            ProviderError::new(kind, format!("{prefix} gave error {status}"))
        }
    }
}

/// Upstream's `NetworkValidate`: can a TCP connection be opened to the URL's host and port?
/// `None` when the URL's host is templated (nothing can be checked before rendering).
pub async fn reachable(url: &str, timeout: Duration) -> Option<Result<()>> {
    let parsed = match reqwest::Url::parse(url) {
        Ok(parsed) => parsed,
        Err(_) if url.contains("{{") => return None,
        Err(error) => {
            return Some(Err(ProviderError::invalid_config(format!(
                "could not parse url: {error}"
            ))));
        }
    };
    let host = parsed
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = parsed.port_or_known_default().unwrap_or(443);
    let connect = tokio::net::TcpStream::connect((host.to_owned(), port));
    Some(match tokio::time::timeout(timeout, connect).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(ProviderError::unavailable(format!(
            "error accessing external store: {error}"
        ))),
        Err(_) => Err(ProviderError::unavailable(
            "error accessing external store: connection timed out",
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds() {
        let kind =
            |code: u16| status_error("endpoint", reqwest::StatusCode::from_u16(code).unwrap());
        assert!(kind(404).is_not_found());
        assert_eq!(kind(304).kind(), ErrorKind::NotModified);
        assert_eq!(kind(403).kind(), ErrorKind::PermissionDenied);
        assert!(kind(429).is_temporary());
        assert!(kind(503).is_temporary());
        assert!(!kind(400).is_temporary());
        assert_eq!(
            kind(500).message(),
            "endpoint gave error 500 Internal Server Error"
        );
    }

    #[test]
    fn a_bundle_without_certificates_is_rejected() {
        let error = build_client(DEFAULT_TIMEOUT, Some(b"not a pem")).unwrap_err();
        assert_eq!(error.message(), "failed to append cabundle");
        assert!(build_client(DEFAULT_TIMEOUT, None).is_ok());
    }

    #[tokio::test]
    async fn reachability_is_checked_on_the_url_port() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}/x?{{{{ .remoteRef.key }}}}");
        assert!(
            reachable(&url, Duration::from_secs(5))
                .await
                .unwrap()
                .is_ok()
        );
        drop(listener);
        let error = reachable(&url, Duration::from_secs(5))
            .await
            .unwrap()
            .unwrap_err();
        assert!(
            error
                .message()
                .starts_with("error accessing external store: ")
        );
        assert!(
            reachable("http://{{ .host }}/x", Duration::from_secs(1))
                .await
                .is_none()
        );
    }
}
