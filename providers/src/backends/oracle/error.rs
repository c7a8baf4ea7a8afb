//! Every failure of the Oracle backend, mapped to [`ProviderError`] kinds in one place.
//!
//! OCI answers errors with `{"code": "...", "message": "..."}`; the message keeps upstream's
//! shape (`<service> service failed to <operation>, HTTP status code <n>: <message>`, bounded).
//! 404 is `NotFound` (OCI's `NotAuthorizedOrNotFound`: upstream reads it as "does not exist" too);
//! 401 and 403 `PermissionDenied`; 429 `RateLimited`; 5xx `Unavailable`; the rest
//! `InvalidRequest`.

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError};

/// Longest part of OCI's error message kept.
const MAX_MESSAGE_CHARS: usize = 256;

/// An OCI error answer to `operation` of `service`, with OCI's error code.
pub fn status(
    service: &str,
    operation: &str,
    status: StatusCode,
    body: &[u8],
) -> (ProviderError, String) {
    let kind = ErrorKind::of_http_status(status.as_u16(), ErrorKind::NotFound);
    let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let text = |name: &str| {
        value
            .get(name)
            .and_then(serde_json::Value::as_str)
            .map(|text| text.chars().take(MAX_MESSAGE_CHARS).collect::<String>())
            .unwrap_or_default()
    };
    let error = ProviderError::new(
        kind,
        format!(
            "{service} service failed to {operation}, HTTP status code {}: {}",
            status.as_u16(),
            text("message")
        ),
    );
    (error, text("code"))
}

/// An answer that is not the JSON OCI documents.
pub fn bad_body(operation: &str, failure: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_data(format!(
        "{operation}: unexpected response: {}",
        crate::redact::json_error(failure)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_with_upstreams_message() {
        let body = br#"{"code":"NotAuthorizedOrNotFound","message":"Secret not found"}"#;
        let (error, code) = status(
            "Secrets",
            "GetSecretBundleByName",
            StatusCode::NOT_FOUND,
            body,
        );
        assert_eq!(error.kind(), ErrorKind::NotFound);
        assert_eq!(code, "NotAuthorizedOrNotFound");
        assert_eq!(
            error.message(),
            "Secrets service failed to GetSecretBundleByName, HTTP status code 404: Secret not found"
        );
        let kind = |code: u16| {
            status("s", "o", StatusCode::from_u16(code).unwrap(), b"")
                .0
                .kind()
        };
        assert_eq!(kind(401), ErrorKind::PermissionDenied);
        assert_eq!(kind(429), ErrorKind::RateLimited);
        assert_eq!(kind(503), ErrorKind::Unavailable);
        assert_eq!(kind(409), ErrorKind::InvalidRequest);
    }
}
