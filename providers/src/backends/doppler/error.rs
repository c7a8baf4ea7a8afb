//! Every failure of the Doppler backend, mapped to [`ProviderError`] kinds in one place.
//!
//! Doppler answers errors with `{"messages": [...], "success": false}`; the messages are kept
//! (they name what was refused, never a value) in upstream's form
//! `Doppler API Client Error (HTTP N): message`. 401/403 are `PermissionDenied`, 429
//! `RateLimited`, 5xx `Unavailable`, other answers `InvalidRequest`. A 404 names a project or
//! config that does not exist: a configuration error, never `NotFound` (only a secret missing
//! from a download is).

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError};

/// Longest part of Doppler's error message kept.
const MAX_MESSAGE_CHARS: usize = 256;

/// A Doppler error answer of `status` whose body is `body`.
pub fn status(status: StatusCode, body: &[u8]) -> ProviderError {
    let kind = ErrorKind::of_http_status(status.as_u16(), ErrorKind::InvalidConfig);
    ProviderError::new(
        kind,
        format!(
            "Doppler API Client Error (HTTP {}): {}",
            status.as_u16(),
            message(status, body)
        ),
    )
}

/// Doppler's messages joined, or upstream's text for an answer without them.
fn message(status: StatusCode, body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Answer {
        messages: Vec<String>,
    }
    match serde_json::from_slice::<Answer>(body) {
        Ok(answer) => answer
            .messages
            .join("\n")
            .chars()
            .take(MAX_MESSAGE_CHARS)
            .collect(),
        Err(_) => format!(
            "unable to load response: {} status code; {} bytes",
            status.as_u16(),
            body.len()
        ),
    }
}

/// The download answered without the secret asked for (drives `deletionPolicy`).
pub fn secret_not_found(name: &str) -> ProviderError {
    ProviderError::not_found(format!(
        "Doppler API Client Error: secret '{name}' not found"
    ))
}

/// An answer that is not the JSON Doppler documents (the body is never quoted: it holds values).
pub fn bad_body(what: &str, error: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_data(format!(
        "Doppler API Client Error: unable to unmarshal {what} payload: {error}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_and_keep_dopplers_messages() {
        let body = br#"{"messages":["Invalid Auth token"],"success":false}"#;
        let error = status(StatusCode::UNAUTHORIZED, body);
        assert_eq!(error.kind(), ErrorKind::PermissionDenied);
        assert_eq!(
            error.to_string(),
            "Doppler API Client Error (HTTP 401): Invalid Auth token"
        );
        assert_eq!(
            status(StatusCode::NOT_FOUND, body).kind(),
            ErrorKind::InvalidConfig
        );
        let unavailable = status(StatusCode::BAD_GATEWAY, b"<html>");
        assert!(unavailable.is_temporary());
        assert!(
            unavailable
                .to_string()
                .ends_with("502 status code; 6 bytes")
        );
        assert!(status(StatusCode::TOO_MANY_REQUESTS, b"").is_temporary());
    }
}
