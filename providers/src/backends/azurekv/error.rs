//! Key Vault and Entra ID answers mapped to provider errors, in one place.
//!
//! Key Vault: 404 is left to the caller ([`super::http::Reply::Missing`]: only a missing
//! secret, key or certificate is `NotFound`); 401/403 `PermissionDenied` (a disabled secret is
//! a 403 too, as upstream reports it); 409 a temporary conflict; 429 `RateLimited`; 5xx
//! `Unavailable`; other 4xx `InvalidRequest`. Entra ID: `invalid_client` and
//! `unauthorized_client` are `PermissionDenied`, 5xx and 429 temporary, the rest
//! `InvalidConfig`. Messages carry the services' error codes and descriptions, which never
//! contain secret values; request bodies are never quoted.

use reqwest::StatusCode;
use serde::Deserialize;

use crate::error::{ErrorKind, ProviderError, Result};
use crate::transport;

/// Longest answer read (Key Vault values are at most 25 KiB; pages and bundles stay small).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Longest service message carried into an error.
const MAX_MESSAGE: usize = 300;

/// Reads a body, refusing more than [`MAX_BODY_BYTES`].
pub(super) async fn read_body(response: reqwest::Response) -> Result<Vec<u8>> {
    transport::read_body(response, MAX_BODY_BYTES, "failed to read the Azure answer").await
}

fn bounded(text: &str) -> String {
    text.chars().take(MAX_MESSAGE).collect()
}

#[derive(Deserialize, Default)]
struct KeyVaultBody {
    #[serde(default)]
    error: KeyVaultError,
}

#[derive(Deserialize, Default)]
struct KeyVaultError {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    innererror: Option<Box<KeyVaultError>>,
}

/// A Key Vault error answer: its code (the inner code when there is one, as
/// `ObjectIsDeletedButRecoverable`) and the error.
pub(super) fn key_vault_error(
    action: &str,
    status: StatusCode,
    body: &[u8],
) -> (String, ProviderError) {
    let parsed: KeyVaultBody = serde_json::from_slice(body).unwrap_or_default();
    let error = parsed.error;
    let inner = error
        .innererror
        .as_ref()
        .map(|inner| inner.code.clone())
        .filter(|code| !code.is_empty());
    let code = inner.unwrap_or_else(|| error.code.clone());
    let message = format!(
        "{action}: {} {}: {}",
        status.as_u16(),
        bounded(&code),
        bounded(&error.message)
    );
    let kind = match status.as_u16() {
        401 | 403 => ErrorKind::PermissionDenied,
        409 => ErrorKind::Unavailable,
        429 => ErrorKind::RateLimited,
        500..=599 => ErrorKind::Unavailable,
        _ => ErrorKind::InvalidRequest,
    };
    (code, ProviderError::new(kind, message))
}

#[derive(Deserialize, Default)]
struct OauthBody {
    #[serde(default)]
    error: String,
    #[serde(default)]
    error_description: String,
}

/// An Entra ID or IMDS error answer.
pub(super) fn oauth_error(status: StatusCode, body: &[u8]) -> ProviderError {
    let parsed: OauthBody = serde_json::from_slice(body).unwrap_or_default();
    let description = parsed.error_description.lines().next().unwrap_or_default();
    let message = format!(
        "failed to get an Azure access token: {} {}: {}",
        status.as_u16(),
        bounded(&parsed.error),
        bounded(description)
    );
    let kind = match (status.as_u16(), parsed.error.as_str()) {
        (429, _) => ErrorKind::RateLimited,
        (500..=599, _) => ErrorKind::Unavailable,
        (_, "invalid_client" | "unauthorized_client") | (401 | 403, _) => {
            ErrorKind::PermissionDenied
        }
        _ => ErrorKind::InvalidConfig,
    };
    ProviderError::new(kind, message)
}
