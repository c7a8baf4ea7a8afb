//! Every failure of the GitLab backend, mapped to [`ProviderError`] kinds in one place.
//!
//! GitLab answers errors with `{"message": "..."}` (or `{"error": "..."}` from its auth layer);
//! the message is kept, bounded (it names what was missing, never a value). 401/403 are
//! `PermissionDenied`, 429 `RateLimited`, 5xx `Unavailable`. A 404 is `NotFound` only when GitLab
//! says the *variable* does not exist ("404 Variable Not Found"): a missing (or invisible)
//! project or group is a configuration error, so it never drives `deletionPolicy`.

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError};

/// The message GitLab gives for a variable that does not exist.
const VARIABLE_NOT_FOUND: &str = "404 Variable Not Found";

/// Longest part of GitLab's error message kept.
const MAX_MESSAGE_CHARS: usize = 256;

/// A GitLab error answer.
pub fn status(action: &str, status: StatusCode, body: &[u8]) -> ProviderError {
    let kind = ErrorKind::of_http_status(status.as_u16(), ErrorKind::InvalidConfig);
    ProviderError::new(kind, format!("{action}: {}", message(status, body)))
}

/// Whether a 404 answer says the variable (not its project or group) is missing.
pub fn is_missing_variable(body: &[u8]) -> bool {
    gitlab_message(body).is_some_and(|message| message == VARIABLE_NOT_FOUND)
}

/// The variable exists neither in the project nor in any group searched (drives
/// `deletionPolicy`). The key is the one GitLab was asked for.
pub fn variable_not_found(key: &str) -> ProviderError {
    ProviderError::not_found(format!(
        "error getting variable {key} from GitLab: {VARIABLE_NOT_FOUND}"
    ))
}

/// An answer that is not the JSON GitLab documents.
pub fn bad_body(action: &str, failure: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_data(format!("{action}: unexpected response: {failure}"))
}

/// GitLab's message, or the status line when the body carries none.
fn message(status: StatusCode, body: &[u8]) -> String {
    gitlab_message(body).unwrap_or_else(|| {
        format!(
            "{} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("error")
        )
    })
}

/// The `message` (or `error`) text of a GitLab error body, bounded.
fn gitlab_message(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let text = match value.get("message").or_else(|| value.get("error"))? {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    Some(text.chars().take(MAX_MESSAGE_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_variable_is_not_found() {
        assert!(is_missing_variable(
            br#"{"message":"404 Variable Not Found"}"#
        ));
        assert!(!is_missing_variable(
            br#"{"message":"404 Project Not Found"}"#
        ));
        assert!(!is_missing_variable(b"<html>"));
        let error = status(
            "get",
            StatusCode::NOT_FOUND,
            br#"{"message":"404 Project Not Found"}"#,
        );
        assert_eq!(error.kind(), ErrorKind::InvalidConfig);
        assert_eq!(error.message(), "get: 404 Project Not Found");
    }

    #[test]
    fn statuses_map_to_kinds() {
        let kind = |code: u16| status("x", StatusCode::from_u16(code).unwrap(), b"{}").kind();
        assert_eq!(kind(401), ErrorKind::PermissionDenied);
        assert_eq!(kind(403), ErrorKind::PermissionDenied);
        assert_eq!(kind(429), ErrorKind::RateLimited);
        assert_eq!(kind(502), ErrorKind::Unavailable);
        assert_eq!(kind(409), ErrorKind::InvalidRequest);
        let error = status(
            "x",
            StatusCode::UNAUTHORIZED,
            br#"{"message":"401 Unauthorized"}"#,
        );
        assert_eq!(error.message(), "x: 401 Unauthorized");
        assert_eq!(
            status("x", StatusCode::BAD_GATEWAY, b"<html>").message(),
            "x: 502 Bad Gateway"
        );
    }
}
