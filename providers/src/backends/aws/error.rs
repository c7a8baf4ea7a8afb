//! AWS SDK errors as provider errors, in one place.
//!
//! A service error is classified by its error code (and the HTTP status when the code says
//! nothing): not found (`ResourceNotFoundException`, `ParameterNotFound`, ...) is `NotFound`;
//! throttling is a temporary `RateLimited`; access denied and refused credentials are a permanent
//! `PermissionDenied`; server-side failures and transport errors are a temporary `Unavailable`;
//! anything else the request itself got wrong is a permanent `InvalidRequest`.
//!
//! A failure to obtain credentials (an AssumeRole refused, a Secret missing) reaches the SDK
//! caller wrapped in a dispatch failure; when its source is one of our own [`ProviderError`]s,
//! that error's kind and temporariness are kept.
//!
//! Messages carry the operation, the error code and AWS's message: no secret values (AWS never
//! echoes them), no request ids and no signatures.

use std::error::Error as StdError;
use std::fmt::Display;

use aws_credential_types::provider::error::CredentialsError;
use aws_sdk_secretsmanager::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};

use crate::error::{ErrorKind, ProviderError};

/// Codes of a missing secret, parameter, version or resource.
const NOT_FOUND: &[&str] = &[
    "ResourceNotFoundException",
    "ParameterNotFound",
    "ParameterVersionNotFound",
    "InvalidResourceId",
];

/// Codes asking the caller to slow down.
const THROTTLED: &[&str] = &[
    "ThrottlingException",
    "Throttling",
    "TooManyRequestsException",
    "RequestLimitExceeded",
    "ThrottledException",
    "TooManyUpdates",
    "SlowDown",
];

/// Codes of refused credentials or operations.
const DENIED: &[&str] = &[
    "AccessDeniedException",
    "AccessDenied",
    "UnrecognizedClientException",
    "InvalidClientTokenId",
    "InvalidSignatureException",
    "SignatureDoesNotMatch",
    "IncompleteSignature",
    "MissingAuthenticationToken",
    "ExpiredToken",
    "ExpiredTokenException",
    "NotAuthorized",
];

/// Codes of a write that would replace something that exists.
const EXISTS: &[&str] = &["ResourceExistsException", "ParameterAlreadyExists"];

/// Codes of failures on AWS's side.
const UNAVAILABLE: &[&str] = &[
    "InternalServiceError",
    "InternalServiceErrorException",
    "InternalFailure",
    "InternalServerError",
    "InternalServerException",
    "ServiceUnavailable",
    "ServiceUnavailableException",
];

/// The kind of a service error with `code` and HTTP `status`.
pub(super) fn classify(code: Option<&str>, status: u16) -> ErrorKind {
    let listed = |codes: &[&str]| code.is_some_and(|code| codes.contains(&code));
    if listed(NOT_FOUND) {
        ErrorKind::NotFound
    } else if listed(THROTTLED) || status == 429 {
        ErrorKind::RateLimited
    } else if listed(DENIED) || status == 401 || status == 403 {
        ErrorKind::PermissionDenied
    } else if listed(EXISTS) {
        ErrorKind::AlreadyExists
    } else if listed(UNAVAILABLE) || status >= 500 {
        ErrorKind::Unavailable
    } else {
        ErrorKind::InvalidRequest
    }
}

/// Maps an SDK error of the operation described by `action` (e.g. `cannot get secret "db"`).
pub(super) fn map_sdk_error<E>(error: SdkError<E>, action: impl Display) -> ProviderError
where
    E: ProvideErrorMetadata + StdError + Send + Sync + 'static,
{
    if let SdkError::ServiceError(context) = &error {
        let service_error = context.err();
        let code = service_error.code();
        let status = context.raw().status().as_u16();
        let kind = classify(code, status);
        let message = match (code, service_error.message()) {
            (Some(code), Some(message)) => format!("{action}: {code}: {message}"),
            (Some(code), None) => format!("{action}: {code}"),
            (None, _) => format!("{action}: HTTP status {status}"),
        };
        return ProviderError::new(kind, message);
    }
    if let Some(own) = own_error(&error) {
        return own.context(action);
    }
    let detail = DisplayErrorContext(&error);
    let kind = match &error {
        SdkError::ConstructionFailure(_) => ErrorKind::InvalidRequest,
        _ => ErrorKind::Unavailable,
    };
    ProviderError::new(kind, format!("{action}: {detail}"))
}

/// Maps a failure to obtain credentials: our own error when one of this module's providers
/// failed, otherwise the SDK's (a default chain without credentials, an unreachable metadata
/// service).
pub(super) fn map_credentials_error(error: &CredentialsError) -> ProviderError {
    if let Some(own) = own_error(error) {
        return own;
    }
    let detail = DisplayErrorContext(error);
    let message = format!("cannot obtain AWS credentials: {detail}");
    match error {
        CredentialsError::ProviderTimedOut(_) => ProviderError::unavailable(message),
        CredentialsError::CredentialsNotLoaded(_) => {
            ProviderError::invalid_config(message).with_temporary(true)
        }
        _ => ProviderError::permission_denied(message),
    }
}

/// Our own error somewhere in the source chain (a credentials provider of this module failed).
fn own_error(error: &(dyn StdError + 'static)) -> Option<ProviderError> {
    let mut current = error.source();
    while let Some(source) = current {
        if let Some(own) = source.downcast_ref::<ProviderError>() {
            return Some(own.clone());
        }
        current = source.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_decide_the_kind_and_statuses_fill_in() {
        let kind = |code: &str, status| classify(Some(code), status);
        assert_eq!(kind("ResourceNotFoundException", 400), ErrorKind::NotFound);
        assert_eq!(kind("ParameterNotFound", 400), ErrorKind::NotFound);
        assert_eq!(kind("ParameterVersionNotFound", 400), ErrorKind::NotFound);
        assert_eq!(kind("ThrottlingException", 400), ErrorKind::RateLimited);
        assert_eq!(kind("Throttling", 400), ErrorKind::RateLimited);
        assert_eq!(
            kind("AccessDeniedException", 400),
            ErrorKind::PermissionDenied
        );
        assert_eq!(
            kind("UnrecognizedClientException", 400),
            ErrorKind::PermissionDenied
        );
        assert_eq!(
            kind("ResourceExistsException", 400),
            ErrorKind::AlreadyExists
        );
        assert_eq!(kind("InternalServiceError", 500), ErrorKind::Unavailable);
        assert_eq!(
            kind("InvalidParameterException", 400),
            ErrorKind::InvalidRequest
        );
        assert_eq!(classify(None, 429), ErrorKind::RateLimited);
        assert_eq!(classify(None, 403), ErrorKind::PermissionDenied);
        assert_eq!(classify(None, 503), ErrorKind::Unavailable);
        assert_eq!(classify(None, 400), ErrorKind::InvalidRequest);
    }

    #[test]
    fn only_throttling_and_outages_are_temporary() {
        let temporary =
            |code: &str| ProviderError::new(classify(Some(code), 400), "x").is_temporary();
        assert!(temporary("ThrottlingException"));
        assert!(temporary("InternalServiceError"));
        assert!(!temporary("AccessDeniedException"));
        assert!(!temporary("ResourceNotFoundException"));
        assert!(!temporary("ValidationException"));
    }

    #[test]
    fn our_own_errors_are_found_in_the_source_chain() {
        #[derive(Debug)]
        struct Wrapper(ProviderError);
        impl Display for Wrapper {
            fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("credentials failed")
            }
        }
        impl StdError for Wrapper {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(&self.0)
            }
        }
        #[derive(Debug)]
        struct Outer(Wrapper);
        impl Display for Outer {
            fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("dispatch failure")
            }
        }
        impl StdError for Outer {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(&self.0)
            }
        }
        let denied = ProviderError::permission_denied("cannot assume role");
        let found = own_error(&Outer(Wrapper(denied))).unwrap();
        assert_eq!(found.kind(), ErrorKind::PermissionDenied);
        assert_eq!(found.message(), "cannot assume role");
    }
}
