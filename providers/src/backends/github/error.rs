//! Every failure of the GitHub backend, mapped to [`ProviderError`] kinds in one place.
//!
//! GitHub answers errors with `{"message": "...", "documentation_url": "..."}`; the message is
//! kept, bounded (it names what was refused, never a value). 401 is `PermissionDenied`; 403 is
//! `RateLimited` when GitHub says the rate limit is exhausted (`x-ratelimit-remaining: 0` or a
//! `retry-after`, its primary and secondary limits) and `PermissionDenied` otherwise; 429 is
//! `RateLimited`; 5xx `Unavailable`. A 404 is a configuration error here (an organization,
//! repository or environment the installation cannot see): the callers that read one secret
//! turn a 404 into "absent" themselves.

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use crate::error::{ErrorKind, ProviderError};

/// The message upstream gives for every read of this write-only provider.
pub const WRITE_ONLY: &str = "not implemented - this provider supports write-only operations";

/// Longest part of GitHub's error message kept.
const MAX_MESSAGE_CHARS: usize = 256;

/// A GitHub error answer to `action`.
pub fn status(action: &str, status: StatusCode, headers: &HeaderMap, body: &[u8]) -> ProviderError {
    let throttled = headers
        .get("x-ratelimit-remaining")
        .is_some_and(|remaining| remaining.as_bytes() == b"0")
        || headers.contains_key("retry-after");
    let kind = match status.as_u16() {
        403 if throttled => ErrorKind::RateLimited,
        code => ErrorKind::of_http_status(code, ErrorKind::InvalidConfig),
    };
    ProviderError::new(kind, format!("{action}: {}", message(status, body)))
}

/// An answer that is not the JSON GitHub documents.
pub fn bad_body(action: &str, failure: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_data(format!("{action}: unexpected response: {failure}"))
}

/// A read of this write-only provider (upstream's message, permanent).
pub fn write_only() -> ProviderError {
    ProviderError::unsupported(WRITE_ONLY)
}

/// GitHub's status line and message (`404 Not Found: ...`), bounded.
fn message(status: StatusCode, body: &[u8]) -> String {
    let line = format!(
        "{} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("error")
    );
    let text = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|value| value.get("message")?.as_str().map(str::to_owned));
    match text {
        Some(text) => format!(
            "{line} {}",
            text.chars().take(MAX_MESSAGE_CHARS).collect::<String>()
        ),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(code: u16, headers: &[(&'static str, &'static str)]) -> ErrorKind {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, value.parse().unwrap());
        }
        status("x", StatusCode::from_u16(code).unwrap(), &map, b"{}").kind()
    }

    #[test]
    fn statuses_map_to_kinds() {
        assert_eq!(kind(401, &[]), ErrorKind::PermissionDenied);
        assert_eq!(kind(403, &[]), ErrorKind::PermissionDenied);
        assert_eq!(
            kind(403, &[("x-ratelimit-remaining", "0")]),
            ErrorKind::RateLimited
        );
        assert_eq!(kind(403, &[("retry-after", "30")]), ErrorKind::RateLimited);
        assert_eq!(kind(404, &[]), ErrorKind::InvalidConfig);
        assert_eq!(kind(422, &[]), ErrorKind::InvalidRequest);
        assert_eq!(kind(429, &[]), ErrorKind::RateLimited);
        assert_eq!(kind(502, &[]), ErrorKind::Unavailable);
    }

    #[test]
    fn messages_keep_githubs_words_bounded() {
        let error = status(
            "error fetching public key",
            StatusCode::NOT_FOUND,
            &HeaderMap::new(),
            br#"{"message":"Not Found","documentation_url":"https://docs.github.com"}"#,
        );
        assert_eq!(
            error.message(),
            "error fetching public key: 404 Not Found Not Found"
        );
        let long = format!(r#"{{"message":"{}"}}"#, "m".repeat(10_000));
        let error = status(
            "x",
            StatusCode::BAD_REQUEST,
            &HeaderMap::new(),
            long.as_bytes(),
        );
        assert!(error.message().len() < 300);
        assert_eq!(
            status("x", StatusCode::BAD_GATEWAY, &HeaderMap::new(), b"<html>").message(),
            "x: 502 Bad Gateway"
        );
    }
}
