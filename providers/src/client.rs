//! The trait every backend implements: upstream's `SecretsClient`, plus its capabilities.
//!
//! A client is built once per store (and auth identity) by the registry, kept by the client cache
//! and shared by every controller through an [`SharedClient`], so it is `Send + Sync` and
//! object-safe (`async_trait` boxes the futures).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

use crate::error::{ProviderError, Result};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// A client as the cache holds it and controllers use it.
pub type SharedClient = Arc<dyn SecretsClient>;

/// What a store can do: upstream's `SecretStoreCapabilities`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capabilities {
    /// Reads only: ExternalSecrets, no PushSecrets.
    ReadOnly,
    /// Writes only: PushSecrets, no ExternalSecrets.
    WriteOnly,
    /// Both.
    ReadWrite,
}

impl Capabilities {
    /// Whether ExternalSecrets may read from the store.
    pub fn can_read(self) -> bool {
        matches!(self, Capabilities::ReadOnly | Capabilities::ReadWrite)
    }

    /// Whether PushSecrets may write to the store.
    pub fn can_write(self) -> bool {
        matches!(self, Capabilities::WriteOnly | Capabilities::ReadWrite)
    }

    /// The value of the store's `status.capabilities`.
    pub fn as_str(self) -> &'static str {
        match self {
            Capabilities::ReadOnly => "ReadOnly",
            Capabilities::WriteOnly => "WriteOnly",
            Capabilities::ReadWrite => "ReadWrite",
        }
    }
}

impl fmt::Display for Capabilities {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The outcome of [`SecretsClient::validate`] when it did not fail: upstream's
/// `ValidationResultReady` and `ValidationResultUnknown` (with or without an error).
/// Upstream's `ValidationResultError` is the `Err` side of the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidationResult {
    /// The client is configured correctly and can be used.
    Ready,
    /// The client can be used but cannot be validated (information is missing, e.g. referent
    /// auth); upstream's `ValidationResultUnknown` without an error counts as valid.
    Unknown,
    /// The validation itself failed, so the client's state is unknown (upstream's
    /// `ValidationResultUnknown` returned with an error): the store stays Ready with reason
    /// `ValidationUnknown` and a Warning event carrying this secret-free message.
    Undetermined(String),
}

impl ValidationResult {
    /// Upstream's name for the result.
    pub fn as_str(&self) -> &'static str {
        match self {
            ValidationResult::Ready => "Ready",
            ValidationResult::Unknown | ValidationResult::Undetermined(_) => "Unknown",
        }
    }
}

/// Access to the secrets of one store, authenticated once.
///
/// Errors follow [`ProviderError`]'s rules: `NotFound` when the secret (version, property) does
/// not exist, temporary errors only where a retry may help.
#[async_trait]
pub trait SecretsClient: Send + Sync {
    /// One value; `NotFound` drives the ExternalSecret's `deletionPolicy`.
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue>;

    /// A structured value as key/value pairs (`dataFrom.extract`).
    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap>;

    /// Every secret matching `find`, keyed by converted name (`dataFrom.find`).
    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap>;

    /// Writes one value (PushSecret).
    async fn push_secret(&self, request: &PushRequest) -> Result<()>;

    /// Deletes a pushed value; deleting something already gone succeeds.
    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()>;

    /// Whether something exists at the push location (PushSecret's `updatePolicy: IfNotExists`).
    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool>;

    /// Checks the client can reach the provider with its configuration (store status).
    async fn validate(&self) -> Result<ValidationResult>;

    /// What the store can do.
    fn capabilities(&self) -> Capabilities;

    /// Releases sessions or connections; called by the cache when the client is retired.
    async fn close(&self) -> Result<()>;
}

/// The error of an operation a backend does not offer, with upstream's meaning ("not implemented")
/// and a message naming the backend.
pub fn not_implemented(provider: &str, operation: &str) -> ProviderError {
    ProviderError::unsupported(format!(
        "{operation} is not implemented by the {provider} provider"
    ))
}
