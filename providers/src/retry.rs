//! Bounded retries of temporary provider errors, with jittered exponential backoff.
//!
//! A store's `spec.retrySettings` sets the policy: `maxRetries` is how many times a failed call
//! is tried again (0 disables retrying) and `retryInterval` (a Go duration) is the delay before
//! the first retry. Each further retry doubles the delay, up to the larger of 30 s and the
//! interval, and every delay is "equal jitter": half of it fixed, half random, so many
//! reconciles failing together do not retry in lockstep. Without settings: 3 retries from 250 ms.
//!
//! Only temporary errors of the provider itself are retried here (`Unavailable`, `RateLimited`
//! with [`ProviderError::is_temporary`]): `NotFound`, bad configuration and the like fail at
//! once, and so do temporary errors that only time can fix (a referenced Secret that does not
//! exist yet): those are the controllers' per-object backoff. Retrying here covers short blips
//! inside one reconcile.

use std::future::Future;
use std::time::Duration;

use crate::duration::parse_go_duration;
use crate::error::{ErrorKind, ProviderError, Result};

/// Retries when the store does not say.
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// First delay when the store does not say.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(250);
/// Longest delay between two tries unless the store's interval is longer still.
pub const DEFAULT_MAX_INTERVAL: Duration = Duration::from_secs(30);
/// Most retries a store may ask for: each retry holds a reconcile worker, so a store written
/// with `maxRetries: 2147483647` must not hold one for ever (upstream has no bound).
pub const MAX_RETRIES: u32 = 10;
/// Longest interval a store may ask for, for the same reason.
pub const MAX_INTERVAL: Duration = Duration::from_secs(300);

/// How often and how patiently a failed call is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first try (so `max_retries + 1` tries at most).
    pub max_retries: u32,
    /// Delay before the first retry, before jitter.
    pub interval: Duration,
    /// Cap on any delay, before jitter.
    pub max_interval: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: DEFAULT_MAX_RETRIES,
            interval: DEFAULT_INTERVAL,
            max_interval: DEFAULT_MAX_INTERVAL,
        }
    }
}

impl RetryPolicy {
    /// A policy that tries once.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The policy of a store's `retrySettings` (`maxRetries`, `retryInterval`), defaults for
    /// what is unset.
    pub fn from_settings(max_retries: Option<i32>, retry_interval: Option<&str>) -> Result<Self> {
        let mut policy = Self::default();
        if let Some(max_retries) = max_retries {
            policy.max_retries = u32::try_from(max_retries)
                .map_err(|_| {
                    ProviderError::invalid_config(format!(
                        "retrySettings.maxRetries must not be negative, got {max_retries}"
                    ))
                })?
                .min(MAX_RETRIES);
        }
        if let Some(interval) = retry_interval {
            policy.interval = parse_go_duration(interval)
                .map_err(|error| {
                    ProviderError::invalid_config(format!("retrySettings.retryInterval: {error}"))
                })?
                .min(MAX_INTERVAL);
            policy.max_interval = policy.max_interval.max(policy.interval);
        }
        Ok(policy)
    }

    /// The delay before retry number `retry` (0-based), before jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(31));
        self.interval.saturating_mul(factor).min(self.max_interval)
    }

    /// The delay before retry number `retry`: between half of [`Self::backoff`] and all of it.
    pub fn jittered_backoff(&self, retry: u32) -> Duration {
        let backoff = self.backoff(retry);
        let half = backoff / 2;
        let spread = u64::try_from((backoff - half).as_nanos()).unwrap_or(u64::MAX);
        half + Duration::from_nanos(fastrand::u64(0..=spread))
    }

    /// Runs `operation` until it succeeds, fails permanently, or the retries are used up; the
    /// last error is returned as it is.
    pub async fn run<T, Operation, Attempt>(&self, mut operation: Operation) -> Result<T>
    where
        Operation: FnMut() -> Attempt,
        Attempt: Future<Output = Result<T>>,
    {
        let mut retry = 0;
        loop {
            match operation().await {
                Ok(value) => return Ok(value),
                Err(error) if retries_now(&error) && retry < self.max_retries => {
                    let delay = self.jittered_backoff(retry);
                    tracing::debug!(
                        retry = retry + 1,
                        max_retries = self.max_retries,
                        delay_ms = delay.as_millis() as u64,
                        reason = error.reason(),
                        error = %error,
                        "temporary provider error, retrying"
                    );
                    tokio::time::sleep(delay).await;
                    retry += 1;
                }
                Err(error) => return Err(error),
            }
        }
    }
}

/// Whether an error is a provider blip worth retrying within the same call.
pub fn retries_now(error: &ProviderError) -> bool {
    error.is_temporary()
        && matches!(
            error.kind(),
            ErrorKind::Unavailable | ErrorKind::RateLimited
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn settings_override_defaults() {
        assert_eq!(
            RetryPolicy::from_settings(None, None).unwrap(),
            RetryPolicy::default()
        );
        let policy = RetryPolicy::from_settings(Some(5), Some("1m")).unwrap();
        assert_eq!(policy.max_retries, 5);
        assert_eq!(policy.interval, Duration::from_secs(60));
        assert_eq!(policy.max_interval, Duration::from_secs(60));
        assert!(RetryPolicy::from_settings(Some(-1), None).is_err());
        // Issue 23: a store cannot hold a worker for ever with huge retry settings.
        let greedy = RetryPolicy::from_settings(Some(i32::MAX), Some("100000h")).unwrap();
        assert_eq!(greedy.max_retries, MAX_RETRIES);
        assert_eq!(greedy.interval, MAX_INTERVAL);
        assert_eq!(greedy.backoff(u32::MAX), MAX_INTERVAL);
        let error = RetryPolicy::from_settings(None, Some("soon")).unwrap_err();
        assert_eq!(error.reason(), "InvalidConfig");
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_and_jitter_stays_within_half() {
        let policy = RetryPolicy::from_settings(Some(10), Some("1s")).unwrap();
        let delays: Vec<_> = (0..7)
            .map(|retry| policy.backoff(retry).as_secs())
            .collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(policy.backoff(u32::MAX), Duration::from_secs(30));
        for retry in 0..7 {
            let jittered = policy.jittered_backoff(retry);
            assert!(jittered >= policy.backoff(retry) / 2 && jittered <= policy.backoff(retry));
        }
    }

    fn failing(calls: &AtomicU32, failures: u32, error: ProviderError) -> Result<u32> {
        let call = calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call <= failures {
            Err(error)
        } else {
            Ok(call)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn temporary_errors_are_retried_with_backoff() {
        let policy = RetryPolicy::from_settings(Some(3), Some("100ms")).unwrap();
        let calls = AtomicU32::new(0);
        let started = tokio::time::Instant::now();
        let result = policy
            .run(|| async { failing(&calls, 2, ProviderError::unavailable("down")) })
            .await;
        assert_eq!(result.unwrap(), 3);
        let waited = started.elapsed();
        // Two retries: 100ms and 200ms, each at least halved by jitter.
        assert!(waited >= Duration::from_millis(150), "{waited:?}");
        assert!(waited <= Duration::from_millis(300), "{waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn retries_are_bounded() {
        let policy = RetryPolicy::from_settings(Some(2), Some("10ms")).unwrap();
        let calls = AtomicU32::new(0);
        let error = policy
            .run(|| async { failing(&calls, 10, ProviderError::unavailable("down")) })
            .await
            .unwrap_err();
        assert_eq!(error.message(), "down");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn permanent_errors_fail_at_once() {
        let policy = RetryPolicy::default();
        let calls = AtomicU32::new(0);
        let error = policy
            .run(|| async { failing(&calls, 10, ProviderError::not_found("gone")) })
            .await
            .unwrap_err();
        assert!(error.is_not_found());
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        // Temporary, but only time (not a quick retry) can fix it.
        let calls = AtomicU32::new(0);
        let missing = ProviderError::invalid_config("secret not found").with_temporary(true);
        policy
            .run(|| async { failing(&calls, 10, missing.clone()) })
            .await
            .unwrap_err();
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let no_retries = RetryPolicy::none();
        let calls = AtomicU32::new(0);
        no_retries
            .run(|| async { failing(&calls, 10, ProviderError::unavailable("down")) })
            .await
            .unwrap_err();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
