//! Every failure of the Infisical backend, mapped to [`ProviderError`] kinds in one place.
//!
//! Infisical answers errors with `{"reqId", "statusCode", "message", "error"}`; the message is
//! kept (it names what was refused, never a value), cut to a bounded length. 401/403 are
//! `PermissionDenied`, 429 `RateLimited`, 5xx `Unavailable`; a 404 is only `NotFound` where the
//! caller knows it means a missing secret (the API module turns those into `None`).

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError};

/// Upstream's error for a secret that does not exist (`esv1.NoSecretErr`).
pub fn no_secret() -> ProviderError {
    ProviderError::not_found("Secret does not exist")
}

/// Upstream's message for a property missing from a secret's JSON value.
pub fn no_property(property: &str, key: &str) -> ProviderError {
    ProviderError::not_found(format!(
        "property {property} does not exist in secret {key}"
    ))
}

/// An error answer of the API.
pub fn status(action: &str, status: StatusCode, body: &[u8]) -> ProviderError {
    let kind = ErrorKind::of_http_status(status.as_u16(), ErrorKind::InvalidConfig);
    ProviderError::new(
        kind,
        format!(
            "{action}: status-code={}: {}",
            status.as_u16(),
            message(status, body)
        ),
    )
}

/// The API's error message, or the status text when the body is not its error JSON.
fn message(status: StatusCode, body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct ApiError {
        message: String,
    }
    match serde_json::from_slice::<ApiError>(body) {
        Ok(error) => error.message.chars().take(256).collect(),
        Err(_) => status.canonical_reason().unwrap_or("error").to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_and_keep_the_message() {
        let body = br#"{"statusCode":401,"message":"Invalid credentials","error":"Unauthorized"}"#;
        let denied = status("failed to authenticate", StatusCode::UNAUTHORIZED, body);
        assert_eq!(denied.kind(), ErrorKind::PermissionDenied);
        assert_eq!(
            denied.message(),
            "failed to authenticate: status-code=401: Invalid credentials"
        );
        let busy = status("x", StatusCode::TOO_MANY_REQUESTS, b"");
        assert!(busy.is_temporary());
        let down = status("x", StatusCode::BAD_GATEWAY, b"<html>");
        assert_eq!(down.kind(), ErrorKind::Unavailable);
        assert!(down.message().ends_with("Bad Gateway"));
    }
}
