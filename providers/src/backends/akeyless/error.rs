//! Every failure of the Akeyless backend, mapped to [`ProviderError`] kinds in one place.
//!
//! Akeyless answers errors with a JSON body naming the failure (`{"error": "..."}`); it is kept,
//! cut to a bounded length. 401/403 are `PermissionDenied`, 429 `RateLimited`, 5xx
//! `Unavailable`; only a `describe-item` 404 means a missing item (`NotFound`).

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError};

/// Upstream's message for a gateway URL that does not parse.
pub const INVALID_URL: &str = "invalid akeyless GW API URL";

/// Upstream's `ErrItemNotExists`.
pub fn item_not_exists() -> ProviderError {
    ProviderError::not_found("item does not exist")
}

/// An error answer of the API.
pub fn status(action: &str, status: StatusCode, body: &[u8]) -> ProviderError {
    let kind = ErrorKind::of_http_status(status.as_u16(), ErrorKind::InvalidRequest);
    ProviderError::new(kind, format!("{action}: {}", message(status, body)))
}

/// The API's error text, or the status text when the body is not its error JSON.
fn message(status: StatusCode, body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct ApiError {
        error: String,
    }
    match serde_json::from_slice::<ApiError>(body) {
        Ok(error) => error.error.chars().take(256).collect(),
        Err(_) => status.canonical_reason().unwrap_or("error").to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_and_keep_the_message() {
        let denied = status(
            "authentication failed",
            StatusCode::UNAUTHORIZED,
            br#"{"error":"access denied"}"#,
        );
        assert_eq!(denied.kind(), ErrorKind::PermissionDenied);
        assert_eq!(denied.message(), "authentication failed: access denied");
        assert!(status("x", StatusCode::SERVICE_UNAVAILABLE, b"").is_temporary());
        assert!(!status("x", StatusCode::NOT_FOUND, b"").is_not_found());
    }
}
