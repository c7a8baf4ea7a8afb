//! Kubernetes API errors as provider errors, in one place.
//!
//! The status code decides the kind: 404 `NotFound` (drives deletionPolicy), 401 and 403
//! `PermissionDenied`, 429 `RateLimited`, 409 (a concurrent write) a temporary `AlreadyExists`,
//! 400 and 422 `InvalidRequest`, 5xx `Unavailable`. Connection failures are temporary
//! `Unavailable`; TLS, kubeconfig and client-auth setup failures are `InvalidConfig`.
//!
//! Messages name the object and carry the API server's message, which names objects but never
//! their data.

use crate::error::{ErrorKind, ProviderError};

/// Maps a kube-rs error from doing `action` (e.g. `get secret "db" from namespace "remote"`).
pub(crate) fn map_error(error: kube::Error, action: &str) -> ProviderError {
    match &error {
        kube::Error::Api(status) => {
            let kind = kind_of_status(status.code);
            let detail = if status.message.is_empty() {
                status.reason.clone()
            } else {
                status.message.clone()
            };
            let mapped = ProviderError::new(kind, format!("{action}: {detail}"));
            if status.code == 409 {
                // A concurrent write: reading again and retrying resolves it.
                mapped.with_temporary(true)
            } else {
                mapped
            }
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_) => {
            ProviderError::unavailable(format!("{action}: {}", with_causes(&error)))
        }
        kube::Error::SerdeError(_) | kube::Error::FromUtf8(_) => {
            ProviderError::invalid_data(format!("{action}: {error}"))
        }
        kube::Error::BuildRequest(_) | kube::Error::HttpError(_) => {
            ProviderError::invalid_request(format!("{action}: {error}"))
        }
        kube::Error::RustlsTls(_)
        | kube::Error::TlsRequired
        | kube::Error::Auth(_)
        | kube::Error::InferKubeconfig(_)
        | kube::Error::ProxyProtocolUnsupported { .. }
        | kube::Error::ProxyProtocolDisabled { .. } => {
            ProviderError::invalid_config(format!("{action}: {error}"))
        }
        _ => ProviderError::unavailable(format!("{action}: {error}")),
    }
}

/// An error with its chain of causes (connection errors say little at the top: "client error
/// (Connect)"; the cause says "connection refused" or which certificate was not trusted).
fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(current) = cause {
        let next = current.to_string();
        if !text.ends_with(&next) {
            text = format!("{text}: {next}");
        }
        cause = current.source();
    }
    text
}

/// The kind of an API error status code.
fn kind_of_status(code: u16) -> ErrorKind {
    match code {
        404 => ErrorKind::NotFound,
        401 | 403 => ErrorKind::PermissionDenied,
        429 => ErrorKind::RateLimited,
        409 => ErrorKind::AlreadyExists,
        400 | 422 => ErrorKind::InvalidRequest,
        _ => ErrorKind::Unavailable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16, message: &str) -> kube::Error {
        let mut status = kube::core::Status::failure(message, "Reason");
        status.code = code;
        kube::Error::Api(status.boxed())
    }

    #[test]
    fn status_codes_decide_kind_and_temporariness() {
        let cases = [
            (404, ErrorKind::NotFound, false),
            (401, ErrorKind::PermissionDenied, false),
            (403, ErrorKind::PermissionDenied, false),
            (429, ErrorKind::RateLimited, true),
            (409, ErrorKind::AlreadyExists, true),
            (422, ErrorKind::InvalidRequest, false),
            (500, ErrorKind::Unavailable, true),
            (503, ErrorKind::Unavailable, true),
        ];
        for (code, kind, temporary) in cases {
            let error = map_error(api_error(code, "boom"), "get secret \"db\"");
            assert_eq!(error.kind(), kind, "{code}");
            assert_eq!(error.is_temporary(), temporary, "{code}");
            assert_eq!(error.message(), "get secret \"db\": boom");
        }
    }

    #[test]
    fn an_empty_status_message_falls_back_to_the_reason() {
        let error = map_error(api_error(403, ""), "list secrets");
        assert_eq!(error.message(), "list secrets: Reason");
    }
}
