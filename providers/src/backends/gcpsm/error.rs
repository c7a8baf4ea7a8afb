//! Google API answers mapped to provider errors, in one place.
//!
//! Google's REST error body is `{"error": {"code", "message", "status"}}` (the canonical gRPC
//! status name). Mapping: `NOT_FOUND` (404) is [`Failure::NotFound`] for the caller to interpret
//! (a secret that does not exist); 401/403 `PermissionDenied`; 429 `RateLimited`; 5xx
//! `Unavailable` (temporary); `FAILED_PRECONDITION` keeps its message (a disabled or destroyed
//! version, see [`Failure::is_disabled_or_destroyed`]); other 4xx `InvalidRequest`. Google's
//! messages name resources, never payloads, so they are kept.

use reqwest::StatusCode;
use serde::Deserialize;

use crate::error::{ErrorKind, ProviderError};

/// A non-2xx answer.
#[derive(Debug)]
pub(super) enum Failure {
    /// 404: the resource does not exist.
    NotFound(String),
    /// Anything else, already mapped.
    Other {
        /// The canonical status name (`FAILED_PRECONDITION`, ...), if Google sent one.
        status: String,
        /// The mapped error.
        error: ProviderError,
    },
}

impl Failure {
    /// Upstream's `isErrSecretDestroyedOrDisabled`: a version that cannot be accessed because
    /// of its state.
    pub(super) fn is_disabled_or_destroyed(&self) -> bool {
        match self {
            Failure::Other { status, error } => {
                status == "FAILED_PRECONDITION"
                    && (error.message().contains("DESTROYED state")
                        || error.message().contains("DISABLED state"))
            }
            Failure::NotFound(_) => false,
        }
    }

    /// The failure as a provider error, a missing resource being `NotFound`.
    pub(super) fn into_error(self) -> ProviderError {
        match self {
            Failure::NotFound(message) => ProviderError::not_found(message),
            Failure::Other { error, .. } => error,
        }
    }
}

#[derive(Deserialize, Default)]
struct Body {
    #[serde(default)]
    error: Detail,
}

#[derive(Deserialize, Default)]
struct Detail {
    #[serde(default)]
    message: String,
    #[serde(default)]
    status: String,
}

/// Maps a non-2xx answer of `action` (a bounded description such as "access secret version").
pub(super) fn failure(action: &str, status: StatusCode, body: &[u8]) -> Failure {
    let detail = serde_json::from_slice::<Body>(body)
        .unwrap_or_default()
        .error;
    let message = if detail.message.is_empty() {
        format!("{action}: {status}")
    } else {
        format!("{action}: {}", detail.message)
    };
    let kind = match status {
        StatusCode::NOT_FOUND => return Failure::NotFound(message),
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ErrorKind::PermissionDenied,
        StatusCode::TOO_MANY_REQUESTS => ErrorKind::RateLimited,
        StatusCode::CONFLICT => ErrorKind::AlreadyExists,
        status if status.is_server_error() => ErrorKind::Unavailable,
        _ => ErrorKind::InvalidRequest,
    };
    Failure::Other {
        status: detail.status,
        error: ProviderError::new(kind, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(status: &str, message: &str) -> Vec<u8> {
        serde_json::json!({"error": {"code": 0, "status": status, "message": message}})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn statuses_map_to_kinds() {
        let missing = failure(
            "get secret",
            StatusCode::NOT_FOUND,
            &body("NOT_FOUND", "gone"),
        );
        assert!(matches!(missing, Failure::NotFound(ref m) if m == "get secret: gone"));
        for (status, kind, temporary) in [
            (StatusCode::FORBIDDEN, ErrorKind::PermissionDenied, false),
            (StatusCode::UNAUTHORIZED, ErrorKind::PermissionDenied, false),
            (StatusCode::TOO_MANY_REQUESTS, ErrorKind::RateLimited, true),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorKind::Unavailable,
                true,
            ),
            (StatusCode::BAD_REQUEST, ErrorKind::InvalidRequest, false),
        ] {
            let error = failure("x", status, b"not json").into_error();
            assert_eq!((error.kind(), error.is_temporary()), (kind, temporary));
        }
    }

    #[test]
    fn disabled_versions_are_recognised() {
        let disabled = failure(
            "access",
            StatusCode::BAD_REQUEST,
            &body(
                "FAILED_PRECONDITION",
                "Secret Version [x] is in DISABLED state.",
            ),
        );
        assert!(disabled.is_disabled_or_destroyed());
        let other = failure(
            "access",
            StatusCode::BAD_REQUEST,
            &body("INVALID_ARGUMENT", "bad"),
        );
        assert!(!other.is_disabled_or_destroyed());
    }
}
