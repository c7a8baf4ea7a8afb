//! Every failure of the 1Password backend, mapped to [`ProviderError`] kinds in one place.
//!
//! Connect answers errors with `{"status": N, "message": "..."}`; the message is kept (it names
//! what was missing, never a value). 401/403 are `PermissionDenied`, 429 `RateLimited`, 5xx
//! `Unavailable`. A 404 of a vault is a configuration error (the store names a vault that does
//! not exist), never `NotFound`: only a missing item, field or file is.

use crate::error::{ErrorKind, ProviderError};

/// Upstream's message for a key found in none of the store's vaults.
pub const KEY_NOT_FOUND: &str = "key not found in 1Password Vaults";

/// Upstream's message for a label carried by more than one field.
pub const EXPECTED_ONE_FIELD: &str = "expected one 1Password ItemField matching";

/// A Connect error answer: status and Connect's message.
pub fn status(action: &str, status: u16, message: &str) -> ProviderError {
    let kind = ErrorKind::of_http_status(status, ErrorKind::InvalidConfig);
    ProviderError::new(kind, format!("{action}: status {status}: {message}"))
}

/// The key is in none of the vaults (drives `deletionPolicy`).
pub fn key_not_found(key: &str, vaults: &[String]) -> ProviderError {
    ProviderError::not_found(format!("{KEY_NOT_FOUND}: {key} in: {vaults:?}"))
}

/// A label is carried by `count` fields of item `title` (zero: the field does not exist).
pub fn field_count(label: &str, title: &str, count: usize) -> ProviderError {
    let message = format!("{EXPECTED_ONE_FIELD}: '{label}' in '{title}', got {count}");
    if count == 0 {
        ProviderError::not_found(message)
    } else {
        ProviderError::invalid_data(message)
    }
}

/// The item has no file of that name.
pub fn document_not_found(title: &str, name: &str) -> ProviderError {
    ProviderError::not_found(format!(
        "error finding 1Password Document: '{title}', '{name}'"
    ))
}

/// An answer that is not the JSON Connect documents.
pub fn bad_body(action: &str, error: &serde_json::Error) -> ProviderError {
    ProviderError::invalid_data(format!("{action}: unexpected response: {error}"))
}
