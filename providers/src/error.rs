//! The one error type every provider returns.
//!
//! Controllers make two decisions from a provider error, and both are encoded here rather than in
//! message text: whether the secret is gone ([`ErrorKind::NotFound`] drives `deletionPolicy`), and
//! whether trying again can help ([`ProviderError::is_temporary`] drives backoff and retries).
//! [`ProviderError::reason`] is a bounded PascalCase word for status conditions and metric labels.
//!
//! Messages are lowercase, carry no trailing dot and never contain a secret value: a backend maps
//! its SDK or HTTP errors in one place and keeps only what is safe to show in a status condition.

use std::fmt;
use std::sync::Arc;

/// Shorthand for results of provider operations.
pub type Result<T, E = ProviderError> = std::result::Result<T, E>;

/// What went wrong, in terms a controller can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The secret (or version, or property) does not exist: drives `deletionPolicy`.
    NotFound,
    /// The remote value did not change since the last read (the webhook's HTTP 304): keep the
    /// current target as it is.
    NotModified,
    /// The provider refused the credentials or the operation.
    PermissionDenied,
    /// The store's provider configuration is wrong or incomplete; fixing the store is the only cure.
    InvalidConfig,
    /// The request (remote ref, find, push data) cannot be served as asked.
    InvalidRequest,
    /// The provider answered with data that could not be interpreted.
    InvalidData,
    /// A write would overwrite something the provider does not let us overwrite.
    AlreadyExists,
    /// The provider (or our own limiter) asked us to slow down.
    RateLimited,
    /// The provider could not be reached or failed on its side.
    Unavailable,
    /// The operation or the provider itself is not supported by this build or this backend.
    Unsupported,
}

impl ErrorKind {
    /// The PascalCase name of the kind: bounded, so safe as a metric label or condition reason.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "NotFound",
            ErrorKind::NotModified => "NotModified",
            ErrorKind::PermissionDenied => "PermissionDenied",
            ErrorKind::InvalidConfig => "InvalidConfig",
            ErrorKind::InvalidRequest => "InvalidRequest",
            ErrorKind::InvalidData => "InvalidData",
            ErrorKind::AlreadyExists => "AlreadyExists",
            ErrorKind::RateLimited => "RateLimited",
            ErrorKind::Unavailable => "Unavailable",
            ErrorKind::Unsupported => "Unsupported",
        }
    }

    /// The kind of an HTTP error answer as the vendors' SDKs sort them: 401 and 403 refused
    /// credentials, 429 throttling, 5xx the service's own failure, 404 `not_found` (a missing
    /// secret for most APIs; a wrong project or URL where the callers handle absent secrets
    /// themselves), anything else a request the service will not serve.
    pub fn of_http_status(code: u16, not_found: ErrorKind) -> ErrorKind {
        match code {
            401 | 403 => ErrorKind::PermissionDenied,
            404 => not_found,
            429 => ErrorKind::RateLimited,
            500..=599 => ErrorKind::Unavailable,
            _ => ErrorKind::InvalidRequest,
        }
    }

    /// Whether errors of this kind are usually worth retrying (each error may override it).
    pub fn is_temporary_by_default(self) -> bool {
        matches!(self, ErrorKind::RateLimited | ErrorKind::Unavailable)
    }
}

/// The start of an error answer's body, at most `kept` bytes (with `...` when cut), for SDKs
/// that quote it: error bodies name what failed, and the bound keeps a long answer (an HTML
/// error page) out of statuses and logs.
pub fn body_excerpt(body: &[u8], kept: usize) -> String {
    let mut text = String::from_utf8_lossy(&body[..body.len().min(kept)]).into_owned();
    if body.len() > kept {
        text.push_str("...");
    }
    text
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// An error from a provider operation: a kind, a safe message, and whether it is temporary.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    kind: ErrorKind,
    message: String,
    temporary: bool,
    #[source]
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl ProviderError {
    /// An error of `kind` whose temporariness is the kind's default.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            temporary: kind.is_temporary_by_default(),
            source: None,
        }
    }

    /// The secret does not exist (drives `deletionPolicy`).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// The store configuration is wrong: permanent until the store changes.
    pub fn invalid_config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidConfig, message)
    }

    /// The request cannot be served as asked: permanent until the request changes.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidRequest, message)
    }

    /// The provider returned data we cannot interpret.
    pub fn invalid_data(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidData, message)
    }

    /// The credentials or the operation were refused.
    pub fn permission_denied(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::PermissionDenied, message)
    }

    /// The provider is unreachable or failing: temporary.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, message)
    }

    /// The operation or provider is not supported: permanent.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, message)
    }

    /// Overrides whether the error is temporary.
    #[must_use]
    pub fn with_temporary(mut self, temporary: bool) -> Self {
        self.temporary = temporary;
        self
    }

    /// Attaches the underlying error. Its `Display` must not contain secret values or URLs that
    /// may carry templated credentials.
    #[must_use]
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// Prefixes the message with what was being done, keeping kind and temporariness.
    #[must_use]
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable, secret-free message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether trying again later may succeed (drives retries and backoff).
    pub fn is_temporary(&self) -> bool {
        self.temporary
    }

    /// Whether the secret does not exist.
    pub fn is_not_found(&self) -> bool {
        self.kind == ErrorKind::NotFound
    }

    /// A bounded PascalCase reason for status conditions and metric labels.
    pub fn reason(&self) -> &'static str {
        self.kind.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporariness_follows_the_kind_unless_overridden() {
        assert!(ProviderError::unavailable("down").is_temporary());
        assert!(ProviderError::new(ErrorKind::RateLimited, "slow down").is_temporary());
        assert!(!ProviderError::not_found("gone").is_temporary());
        assert!(!ProviderError::invalid_config("bad").is_temporary());
        assert!(
            ProviderError::permission_denied("token expired")
                .with_temporary(true)
                .is_temporary()
        );
        assert!(
            !ProviderError::unavailable("bad gateway")
                .with_temporary(false)
                .is_temporary()
        );
    }

    #[test]
    fn display_is_the_message_and_reason_is_the_kind() {
        let error = ProviderError::not_found(r#"secret "db" does not exist"#).context("get secret");
        assert_eq!(
            error.to_string(),
            r#"get secret: secret "db" does not exist"#
        );
        assert_eq!(error.reason(), "NotFound");
        assert!(error.is_not_found());
    }

    #[test]
    fn source_is_exposed_through_the_error_trait() {
        let io = std::io::Error::other("connection reset");
        let error = ProviderError::unavailable("failed to call endpoint").with_source(io);
        let source = std::error::Error::source(&error).expect("source kept");
        assert_eq!(source.to_string(), "connection reset");
    }
}
