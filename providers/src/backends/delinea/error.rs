//! Every failure of the Delinea DevOps Secrets Vault backend, mapped to [`ProviderError`] kinds
//! in one place.
//!
//! DSV answers errors with `{"code": N, "message": "..."}`; as upstream's SDK, the error keeps
//! the status and the start of the body (64 bytes: DSV's messages name what failed, never a
//! value). 401/403 are `PermissionDenied`, 404 of a secret `NotFound`, 429 `RateLimited`, 5xx
//! `Unavailable`.

use reqwest::StatusCode;

use crate::error::{ErrorKind, ProviderError, body_excerpt};

/// How much of an error body is kept (upstream's SDK truncates to the same length).
const KEPT_BODY_BYTES: usize = 64;

/// A DSV error answer to `action`.
pub fn status(action: &str, status: StatusCode, body: &[u8]) -> ProviderError {
    let kind = ErrorKind::of_http_status(status.as_u16(), ErrorKind::NotFound);
    let text = body_excerpt(body, KEPT_BODY_BYTES);
    ProviderError::new(kind, format!("{action}: {status}: {text}"))
}

/// An answer that is not the JSON DSV documents.
pub fn bad_body(action: &str, failure: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_data(format!("{action}: unexpected response: {failure}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_and_bodies_are_truncated() {
        let kind = |code: u16| status("x", StatusCode::from_u16(code).unwrap(), b"").kind();
        assert_eq!(kind(401), ErrorKind::PermissionDenied);
        assert_eq!(kind(404), ErrorKind::NotFound);
        assert_eq!(kind(429), ErrorKind::RateLimited);
        assert_eq!(kind(503), ErrorKind::Unavailable);
        assert_eq!(kind(400), ErrorKind::InvalidRequest);
        let long = [b'a'; 100];
        let message = status("get", StatusCode::NOT_FOUND, &long)
            .message()
            .to_owned();
        assert_eq!(
            message,
            format!("get: 404 Not Found: {}...", "a".repeat(64))
        );
    }
}
