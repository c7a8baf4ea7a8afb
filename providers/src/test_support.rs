//! Test doubles shared by the unit tests of this crate.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;

use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// A client that fails its first calls with a given error, then answers `"value"`, and counts
/// calls and closes.
pub struct ScriptedClient {
    failures: u32,
    error: Mutex<Option<ProviderError>>,
    calls: AtomicU32,
    closes: AtomicU32,
}

impl ScriptedClient {
    /// A client that always succeeds.
    pub fn healthy() -> Self {
        Self::failing_first(0, ProviderError::unavailable("unused"))
    }

    /// A client whose first `failures` calls return `error`.
    pub fn failing_first(failures: u32, error: ProviderError) -> Self {
        Self {
            failures,
            error: Mutex::new(Some(error)),
            calls: AtomicU32::new(0),
            closes: AtomicU32::new(0),
        }
    }

    /// Calls made so far (close excluded).
    pub fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }

    /// Times `close` was called.
    pub fn closes(&self) -> u32 {
        self.closes.load(Ordering::SeqCst)
    }

    fn answer<T>(&self, value: T) -> Result<T> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call <= self.failures {
            let error = self.error.lock().unwrap().clone();
            return Err(error.expect("error set"));
        }
        Ok(value)
    }
}

#[async_trait]
impl SecretsClient for ScriptedClient {
    async fn get_secret(&self, _remote_ref: &RemoteRef) -> Result<SecretValue> {
        self.answer(SecretValue::from("value"))
    }

    async fn get_secret_map(&self, _remote_ref: &RemoteRef) -> Result<SecretMap> {
        self.answer(SecretMap::new())
    }

    async fn get_all_secrets(&self, _find: &Find) -> Result<SecretMap> {
        self.answer(SecretMap::new())
    }

    async fn push_secret(&self, _request: &PushRequest) -> Result<()> {
        self.answer(())
    }

    async fn delete_secret(&self, _remote_ref: &PushRemoteRef) -> Result<()> {
        self.answer(())
    }

    async fn secret_exists(&self, _remote_ref: &PushRemoteRef) -> Result<bool> {
        self.answer(true)
    }

    async fn validate(&self) -> Result<ValidationResult> {
        self.answer(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        self.closes.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}
