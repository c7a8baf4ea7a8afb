//! Every failure of the KeeperSecurity backend, mapped to [`ProviderError`] kinds in one place.
//!
//! The server answers errors with JSON `{"result_code" or "error": ..., "message": ...}`, kept in
//! the SDKs' form `Error: <code>, message=<message>`: 401/403 are `PermissionDenied` (403
//! `throttled`, and 429, `RateLimited`), 5xx `Unavailable`, `invalid_client_version` and a
//! requested key rotation (`key`) `InvalidConfig`, other answers `InvalidRequest`. Messages
//! never hold record data: the server's message is cut short and values are never quoted.

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError};

/// Longest part of the server's message kept.
const MAX_MESSAGE_CHARS: usize = 256;

/// A non-200 answer of `status` with `body`.
pub fn status(status: StatusCode, body: &[u8]) -> ProviderError {
    #[derive(serde::Deserialize)]
    struct Answer {
        result_code: Option<String>,
        error: Option<String>,
        message: Option<String>,
        additional_info: Option<String>,
    }
    let answer = serde_json::from_slice::<Answer>(body).ok();
    let code = answer
        .as_ref()
        .and_then(|answer| answer.result_code.clone().or_else(|| answer.error.clone()))
        .unwrap_or_default();
    let kind = match (status.as_u16(), code.as_str()) {
        (403, "throttled") | (429, _) => ErrorKind::RateLimited,
        (_, "invalid_client_version" | "key") => ErrorKind::InvalidConfig,
        (401 | 403, _) => ErrorKind::PermissionDenied,
        (500..=599, _) => ErrorKind::Unavailable,
        _ => ErrorKind::InvalidRequest,
    };
    let message = match answer {
        Some(answer) => {
            let detail = answer
                .message
                .or(answer.additional_info)
                .unwrap_or_else(|| "NA".to_owned());
            format!("Error: {code}, message={detail}")
        }
        None => format!(
            "HTTPError: status {}; {} bytes",
            status.as_u16(),
            body.len()
        ),
    };
    let message: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
    ProviderError::new(kind, format!("POST Error: {message}"))
}

/// A cryptographic step that failed (a wrong key, altered data, a broken configuration key).
pub fn crypto(step: &str) -> ProviderError {
    ProviderError::invalid_data(format!(
        "KeeperSecurity: unable to encrypt or decrypt the {step}"
    ))
}

/// The server answered an unbound configuration without binding it.
pub fn not_bound() -> ProviderError {
    ProviderError::permission_denied(
        "KeeperSecurity: the configuration has no appKey and the one-time token was not bound \
         (already used or expired)",
    )
}

/// A decrypted answer that is not the JSON the protocol defines.
pub fn bad_answer(command: &str) -> ProviderError {
    ProviderError::invalid_data(format!(
        "KeeperSecurity: unable to read the {command} answer"
    ))
}

/// The server refused to delete record `uid`.
pub fn delete_refused(uid: &str, code: &str, message: Option<&str>) -> ProviderError {
    let detail = message
        .map(|message| format!(": {message}"))
        .unwrap_or_default();
    let text: String = format!("unable to delete record {uid}: {code}{detail}")
        .chars()
        .take(MAX_MESSAGE_CHARS)
        .collect();
    ProviderError::invalid_request(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_map_to_kinds_with_the_sdks_message() {
        let denied = status(
            StatusCode::UNAUTHORIZED,
            br#"{"result_code":"access_denied","message":"Signature is invalid"}"#,
        );
        assert_eq!(denied.kind(), ErrorKind::PermissionDenied);
        assert_eq!(
            denied.to_string(),
            "POST Error: Error: access_denied, message=Signature is invalid"
        );
        let throttled = status(StatusCode::FORBIDDEN, br#"{"error":"throttled"}"#);
        assert_eq!(throttled.kind(), ErrorKind::RateLimited);
        assert!(throttled.is_temporary());
        let version = status(
            StatusCode::BAD_REQUEST,
            br#"{"result_code":"invalid_client_version","additional_info":"old"}"#,
        );
        assert_eq!(version.kind(), ErrorKind::InvalidConfig);
        let down = status(StatusCode::BAD_GATEWAY, b"<html>");
        assert!(down.is_temporary());
        assert_eq!(
            down.to_string(),
            "POST Error: HTTPError: status 502; 6 bytes"
        );
        assert_eq!(
            status(StatusCode::BAD_REQUEST, b"{}").kind(),
            ErrorKind::InvalidRequest
        );
    }
}
