//! Every failure of the Bitwarden Secrets Manager backend, mapped to [`ProviderError`] kinds in
//! one place.
//!
//! `bitwarden-sdk-server` answers 401 without an access token and 400 for every failure of the
//! SDK behind it (login included), with a text body that carries the Bitwarden API's own status
//! as the SDK prints it: `failed to get secret: API error: Received error message from server:
//! [404 Not Found] ...`. The kind is read from that status where there is one: 404 is
//! `NotFound`, 401/403 and failed logins `PermissionDenied`, 429 `RateLimited`, 5xx
//! `Unavailable`. Messages keep the status and the start of the body (upstream keeps all of
//! it; it names what failed, never a value).

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError};

/// How much of an error body is kept.
const KEPT_BODY_BYTES: usize = 256;

/// An SDK server error answer to `action`.
pub fn status(action: &str, status: StatusCode, body: &[u8]) -> ProviderError {
    let text = String::from_utf8_lossy(&body[..body.len().min(KEPT_BODY_BYTES)]);
    let text = text.trim_end();
    let kind = match status.as_u16() {
        401 | 403 => ErrorKind::PermissionDenied,
        429 => ErrorKind::RateLimited,
        500..=599 => ErrorKind::Unavailable,
        _ => sdk_kind(text),
    };
    let ellipsis = if body.len() > KEPT_BODY_BYTES {
        "..."
    } else {
        ""
    };
    ProviderError::new(
        kind,
        format!(
            "{action}: failed to perform http request, got response: {text}{ellipsis} with \
             status code {}",
            status.as_u16()
        ),
    )
}

/// The kind of a 400 answer, from the Bitwarden status the SDK reports in it.
fn sdk_kind(text: &str) -> ErrorKind {
    if text.starts_with("failed to login") {
        return ErrorKind::PermissionDenied;
    }
    let reported = text
        .split_once("Received error message from server: [")
        .and_then(|(_, rest)| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok());
    match reported {
        Some(404) => ErrorKind::NotFound,
        Some(401 | 403) => ErrorKind::PermissionDenied,
        Some(429) => ErrorKind::RateLimited,
        Some(500..=599) => ErrorKind::Unavailable,
        _ => ErrorKind::InvalidRequest,
    }
}

/// An answer that is not the JSON the SDK server sends.
pub fn bad_body(action: &str, failure: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_data(format!("{action}: failed to decode response: {failure}"))
}

/// A request body that could not be encoded.
pub fn encoding(action: &str, failure: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_request(format!("{action}: failed to marshal body: {failure}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(code: u16, body: &str) -> ErrorKind {
        status("x", StatusCode::from_u16(code).unwrap(), body.as_bytes()).kind()
    }

    #[test]
    fn kinds_come_from_the_status_or_the_sdks_report() {
        let reported = |inner: &str| {
            format!(
                "failed to get secret: API error: Received error message from server: [{inner}] Resource not found."
            )
        };
        assert_eq!(kind(400, &reported("404 Not Found")), ErrorKind::NotFound);
        assert_eq!(
            kind(400, &reported("403 Forbidden")),
            ErrorKind::PermissionDenied
        );
        assert_eq!(
            kind(400, &reported("429 Too Many Requests")),
            ErrorKind::RateLimited
        );
        assert_eq!(
            kind(400, &reported("503 Service Unavailable")),
            ErrorKind::Unavailable
        );
        assert_eq!(
            kind(
                400,
                "failed to login to bitwarden using access token: bitwarden login: x"
            ),
            ErrorKind::PermissionDenied
        );
        assert_eq!(kind(400, "invalid character"), ErrorKind::InvalidRequest);
        assert_eq!(
            kind(401, "Missing Warden access token"),
            ErrorKind::PermissionDenied
        );
        assert_eq!(kind(502, ""), ErrorKind::Unavailable);
    }

    #[test]
    fn messages_are_upstreams_and_bounded() {
        let error = status("failed to get secret", StatusCode::BAD_REQUEST, b"nope\n");
        assert_eq!(
            error.message(),
            "failed to get secret: failed to perform http request, got response: nope with \
             status code 400"
        );
        let long = "a".repeat(1000);
        let error = status("x", StatusCode::BAD_REQUEST, long.as_bytes());
        assert!(error.message().len() < 400, "{}", error.message());
    }
}
