//! Every failure of the IBM backend, mapped to [`ProviderError`] kinds in one place.
//!
//! Secrets Manager answers errors with `{"errors":[{"code":..,"message":..,"status_code":..}]}`
//! and IAM with `{"errorCode":..,"errorMessage":..}`; the first message is kept, bounded (it
//! names what is wrong, never a value). A 404 from Secrets Manager is `NotFound` (the secret, or
//! the group it was asked in, does not exist); IAM's 400 (an API key or profile it does not
//! know), 401 and 403 are `PermissionDenied`; 429 is `RateLimited`; 5xx `Unavailable`.

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError};

/// Longest part of IBM's error message kept.
const MAX_MESSAGE_CHARS: usize = 256;

/// A Secrets Manager error answer to `action`.
pub fn secrets_manager(action: &str, status: StatusCode, body: &[u8]) -> ProviderError {
    let kind = ErrorKind::of_http_status(status.as_u16(), ErrorKind::NotFound);
    ProviderError::new(kind, format!("{action}: {}", message(status, body)))
}

/// An IAM token endpoint error answer.
pub fn iam(action: &str, status: StatusCode, body: &[u8]) -> ProviderError {
    let kind = match status.as_u16() {
        400 | 401 | 403 => ErrorKind::PermissionDenied,
        429 => ErrorKind::RateLimited,
        500..=599 => ErrorKind::Unavailable,
        _ => ErrorKind::InvalidRequest,
    };
    ProviderError::new(kind, format!("{action}: {}", message(status, body)))
}

/// An answer that is not the JSON IBM documents.
pub fn bad_body(action: &str, failure: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_data(format!(
        "{action}: unexpected response: {}",
        crate::redact::json_error(failure)
    ))
}

/// Upstream's message for a field the fetched secret does not have.
pub fn missing_key(key: &str, secret: &str) -> ProviderError {
    ProviderError::not_found(format!("key {key} does not exist in secret {secret}"))
}

/// IBM's message, or the status line when the body carries none.
fn message(status: StatusCode, body: &[u8]) -> String {
    ibm_message(body).unwrap_or_else(|| {
        format!(
            "{} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("error")
        )
    })
}

/// The first `errors[].message` (Secrets Manager) or `errorMessage` (IAM), bounded.
fn ibm_message(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let text = value
        .pointer("/errors/0/message")
        .or_else(|| value.get("errorMessage"))
        .and_then(serde_json::Value::as_str)?;
    Some(text.chars().take(MAX_MESSAGE_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_with_ibm_messages() {
        let kind =
            |code: u16| secrets_manager("x", StatusCode::from_u16(code).unwrap(), b"{}").kind();
        assert_eq!(kind(404), ErrorKind::NotFound);
        assert_eq!(kind(401), ErrorKind::PermissionDenied);
        assert_eq!(kind(403), ErrorKind::PermissionDenied);
        assert_eq!(kind(429), ErrorKind::RateLimited);
        assert_eq!(kind(503), ErrorKind::Unavailable);
        assert_eq!(kind(400), ErrorKind::InvalidRequest);
        let body = br#"{"errors":[{"code":"not_found","message":"Secret not found"}]}"#;
        let error = secrets_manager("get", StatusCode::NOT_FOUND, body);
        assert_eq!(error.message(), "get: Secret not found");
        let body =
            br#"{"errorCode":"BXNIM0415E","errorMessage":"Provided API key could not be found."}"#;
        let error = iam("token", StatusCode::BAD_REQUEST, body);
        assert_eq!(error.kind(), ErrorKind::PermissionDenied);
        assert_eq!(
            error.message(),
            "token: Provided API key could not be found."
        );
        assert_eq!(
            iam("token", StatusCode::BAD_GATEWAY, b"<html>").message(),
            "token: 502 Bad Gateway"
        );
    }
}
