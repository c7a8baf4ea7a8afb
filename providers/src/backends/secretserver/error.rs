//! Every failure of the Secret Server backend, mapped to [`ProviderError`] kinds in one place.
//!
//! As upstream's SDK, an error answer keeps its status and the start of its body (255 bytes;
//! Secret Server's `{"errorCode", "message"}` bodies name what failed, never a value). 401/403
//! are `PermissionDenied`, 404 `NotFound`, 429 `RateLimited`, 5xx `Unavailable`, anything else
//! `InvalidRequest`.

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError, body_excerpt};

/// How much of an error body is kept (upstream's SDK keeps as much).
const KEPT_BODY_BYTES: usize = 255;

/// Upstream's message when a name search finds nothing (upstream treats it as "not found").
pub const NO_MATCHING_SECRETS: &str = "unable to retrieve secret at this time";

/// A Secret Server error answer to `action`.
pub fn status(action: &str, status: StatusCode, body: &[u8]) -> ProviderError {
    let kind = ErrorKind::of_http_status(status.as_u16(), ErrorKind::NotFound);
    let text = body_excerpt(body, KEPT_BODY_BYTES);
    ProviderError::new(kind, format!("{action}: {status}: {text}"))
}

/// An error answer of a token endpoint: OAuth's `invalid_grant`/`invalid_client` (400) are
/// refused credentials.
pub fn token_status(action: &str, code: StatusCode, body: &[u8]) -> ProviderError {
    let refused = code == StatusCode::BAD_REQUEST
        && serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|answer| {
            matches!(
                answer["error"].as_str(),
                Some("invalid_grant" | "invalid_client")
            )
        });
    let failure = status(action, code, body);
    if refused {
        return ProviderError::permission_denied(failure.message());
    }
    failure
}

/// A name search without a match.
pub fn no_matching_secrets() -> ProviderError {
    ProviderError::not_found(NO_MATCHING_SECRETS)
}

/// A plain name several folders share, for operations that must not guess (upstream's
/// message).
pub fn ambiguous_name() -> ProviderError {
    ProviderError::invalid_request(
        "multiple secrets found with the same name across different folders; use the \
         'folderId:<id>/<name>' key format, a path-based key, or a numeric ID to disambiguate",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_and_bodies_are_truncated() {
        let kind = |code: u16| status("x", StatusCode::from_u16(code).unwrap(), b"").kind();
        assert_eq!(kind(401), ErrorKind::PermissionDenied);
        assert_eq!(kind(403), ErrorKind::PermissionDenied);
        assert_eq!(kind(404), ErrorKind::NotFound);
        assert_eq!(kind(429), ErrorKind::RateLimited);
        assert_eq!(kind(502), ErrorKind::Unavailable);
        assert_eq!(kind(400), ErrorKind::InvalidRequest);
        let long = [b'e'; 300];
        let message = status("get", StatusCode::BAD_REQUEST, &long)
            .message()
            .to_owned();
        assert_eq!(
            message,
            format!("get: 400 Bad Request: {}...", "e".repeat(255))
        );
    }
}
