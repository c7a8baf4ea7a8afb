//! A client decorator applying the store's rate limit and retry policy to every call.
//!
//! The registry wraps each backend client in a [`ResilientClient`] before the cache hands it out,
//! so no backend implements throttling or retries itself and every provider behaves alike.
//! Each try (not each call) takes a token from the store's bucket, so retries are throttled too.
//! A call with its retries ends within [`CALL_DEADLINE`], so one slow or hanging backend cannot
//! hold a reconcile worker for longer, whatever its `retrySettings` and timeouts say.

use std::time::Duration;

use async_trait::async_trait;

use crate::client::{Capabilities, SecretsClient, SharedClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::rate_limit::StoreRateLimiter;
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::retry::RetryPolicy;
use crate::value::{SecretMap, SecretValue};

/// The longest a call may take with its retries and rate-limit waits: twice the longest request
/// timeout a store may set (webhook `timeout`, 5 minutes). Upstream has no bound.
pub const CALL_DEADLINE: Duration = Duration::from_secs(600);

/// A client whose calls wait for the store's rate limiter and retry temporary errors.
pub struct ResilientClient {
    inner: SharedClient,
    limiter: StoreRateLimiter,
    retry: RetryPolicy,
}

impl ResilientClient {
    /// Wraps `inner`.
    pub fn new(inner: SharedClient, limiter: StoreRateLimiter, retry: RetryPolicy) -> Self {
        Self {
            inner,
            limiter,
            retry,
        }
    }

    /// The retry policy in force.
    pub fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }
}

/// Runs one client call under the limiter and the retry policy.
macro_rules! guarded {
    ($self:ident, $client:ident => $call:expr) => {
        within_deadline($self.retry.run(|| async {
            $self.limiter.acquire().await;
            let $client = &$self.inner;
            $call.await
        }))
        .await
    };
}

/// `call`'s result, or a temporary error once [`CALL_DEADLINE`] has passed.
async fn within_deadline<T>(call: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::time::timeout(CALL_DEADLINE, call)
        .await
        .unwrap_or_else(|_| {
            Err(ProviderError::unavailable(format!(
                "provider call did not finish within {}s",
                CALL_DEADLINE.as_secs()
            )))
        })
}

#[async_trait]
impl SecretsClient for ResilientClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        guarded!(self, client => client.get_secret(remote_ref))
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        guarded!(self, client => client.get_secret_map(remote_ref))
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        guarded!(self, client => client.get_all_secrets(find))
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        guarded!(self, client => client.push_secret(request))
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        guarded!(self, client => client.delete_secret(remote_ref))
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        guarded!(self, client => client.secret_exists(remote_ref))
    }

    async fn validate(&self) -> Result<ValidationResult> {
        guarded!(self, client => client.validate())
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn close(&self) -> Result<()> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate_limit::RateLimit;
    use crate::test_support::ScriptedClient;
    use std::sync::Arc;

    #[tokio::test(start_paused = true)]
    async fn temporary_failures_are_retried_and_permanent_ones_are_not() {
        let inner = Arc::new(ScriptedClient::failing_first(
            2,
            ProviderError::unavailable("flaky"),
        ));
        let client = ResilientClient::new(
            inner.clone(),
            StoreRateLimiter::new(RateLimit::default()),
            RetryPolicy::from_settings(Some(3), Some("10ms")).unwrap(),
        );
        let value = client.get_secret(&RemoteRef::new("key")).await.unwrap();
        assert_eq!(value.expose(), b"value");
        assert_eq!(inner.calls(), 3);

        let inner = Arc::new(ScriptedClient::failing_first(
            2,
            ProviderError::not_found("gone"),
        ));
        let client = ResilientClient::new(
            inner.clone(),
            StoreRateLimiter::new(RateLimit::default()),
            RetryPolicy::default(),
        );
        let error = client.get_secret(&RemoteRef::new("key")).await.unwrap_err();
        assert!(error.is_not_found());
        assert_eq!(inner.calls(), 1);
        assert_eq!(client.capabilities(), Capabilities::ReadWrite);
    }

    #[tokio::test(start_paused = true)]
    async fn retries_end_at_the_call_deadline() {
        let inner = Arc::new(ScriptedClient::failing_first(
            u32::MAX,
            ProviderError::unavailable("down"),
        ));
        let client = ResilientClient::new(
            inner.clone(),
            StoreRateLimiter::new(RateLimit::default()),
            RetryPolicy::from_settings(Some(10), Some("5m")).unwrap(),
        );
        let started = tokio::time::Instant::now();
        let error = client.get_secret(&RemoteRef::new("key")).await.unwrap_err();
        assert_eq!(started.elapsed(), CALL_DEADLINE);
        assert!(error.is_temporary());
        assert_eq!(error.message(), "provider call did not finish within 600s");
        assert!(inner.calls() < 11, "{}", inner.calls());
    }
}
