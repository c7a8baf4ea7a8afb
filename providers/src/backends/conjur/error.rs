//! Every failure of the Conjur backend, mapped to [`ProviderError`] kinds in one place.
//!
//! Conjur answers errors with `{"error": {"code": "...", "message": "..."}}` (authenticators
//! answer 401 with an empty body); the message is kept (it names what was refused, never a
//! value), cut to a bounded length. 401/403 are `PermissionDenied`, 429 `RateLimited`, 5xx
//! `Unavailable`; a 404 is only `NotFound` where the caller knows it means a missing variable.

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError};

/// Longest Conjur error message kept.
const MAX_MESSAGE_CHARS: usize = 256;

/// Upstream's error for a `property` missing from a variable's JSON value.
pub fn no_property(property: &str) -> ProviderError {
    ProviderError::not_found(format!("cannot find secret data for key: {property:?}"))
}

/// An error answer of the API to `action`.
pub fn status(action: &str, status: StatusCode, body: &[u8]) -> ProviderError {
    let kind = ErrorKind::of_http_status(status.as_u16(), ErrorKind::InvalidConfig);
    ProviderError::new(
        kind,
        format!("{action}: {}: {}", status.as_u16(), message(status, body)),
    )
}

/// A 2xx answer that is not what the API documents.
pub fn unexpected(action: &str, error: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_data(format!(
        "{action}: unexpected response: {}",
        crate::redact::json_error(error)
    ))
}

/// Conjur's error message, or the status text when the body is not its error JSON.
fn message(status: StatusCode, body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Answer {
        error: Detail,
    }
    #[derive(serde::Deserialize)]
    struct Detail {
        message: String,
    }
    match serde_json::from_slice::<Answer>(body) {
        Ok(answer) => answer
            .error
            .message
            .chars()
            .take(MAX_MESSAGE_CHARS)
            .collect(),
        Err(_) => status.canonical_reason().unwrap_or("error").to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_and_keep_conjurs_message() {
        let body = br#"{"error":{"code":"forbidden","message":"Forbidden"}}"#;
        let denied = status("failed to read variable", StatusCode::FORBIDDEN, body);
        assert_eq!(denied.kind(), ErrorKind::PermissionDenied);
        assert_eq!(denied.message(), "failed to read variable: 403: Forbidden");
        let refused = status("failed to authenticate", StatusCode::UNAUTHORIZED, b"");
        assert_eq!(
            refused.message(),
            "failed to authenticate: 401: Unauthorized"
        );
        assert!(status("x", StatusCode::TOO_MANY_REQUESTS, b"").is_temporary());
        let down = status("x", StatusCode::BAD_GATEWAY, b"<html>");
        assert_eq!(down.kind(), ErrorKind::Unavailable);
        assert_eq!(
            status("x", StatusCode::NOT_FOUND, b"").kind(),
            ErrorKind::InvalidConfig
        );
    }
}
