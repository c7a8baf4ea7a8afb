//! Per-store rate limiting of calls toward a provider.
//!
//! Every store gets one token bucket ([`StoreRateLimiter`]) shared by all controllers and all
//! clients built for that store, so a burst of reconciles (an operator restart, a store change
//! fanning out to thousands of ExternalSecrets) cannot exceed what the provider tolerates. Calls
//! wait for a token rather than fail. The default, 50 calls per second with bursts of 100, is
//! roughly upstream's default Kubernetes client limits and far below cloud API quotas.

use std::num::NonZeroU32;
use std::sync::Arc;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

/// Calls per second and burst size toward one store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RateLimit {
    /// Sustained calls per second.
    pub per_second: NonZeroU32,
    /// Calls allowed at once after a quiet period.
    pub burst: NonZeroU32,
}

impl RateLimit {
    /// The default sustained rate.
    pub const DEFAULT_PER_SECOND: NonZeroU32 = NonZeroU32::new(50).unwrap();
    /// The default burst.
    pub const DEFAULT_BURST: NonZeroU32 = NonZeroU32::new(100).unwrap();

    /// A limit of `per_second` calls per second with bursts of `burst`; `None` if either is 0.
    pub fn new(per_second: u32, burst: u32) -> Option<Self> {
        Some(Self {
            per_second: NonZeroU32::new(per_second)?,
            burst: NonZeroU32::new(burst)?,
        })
    }
}

impl Default for RateLimit {
    fn default() -> Self {
        Self {
            per_second: Self::DEFAULT_PER_SECOND,
            burst: Self::DEFAULT_BURST,
        }
    }
}

/// The token bucket of one store; clones share the bucket.
#[derive(Clone)]
pub struct StoreRateLimiter {
    limiter: Arc<DefaultDirectRateLimiter>,
    limit: RateLimit,
}

impl StoreRateLimiter {
    /// A fresh, full bucket.
    pub fn new(limit: RateLimit) -> Self {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        Self {
            limiter: Arc::new(RateLimiter::direct(quota)),
            limit,
        }
    }

    /// The limit this bucket enforces.
    pub fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Waits until a call may be made.
    pub async fn acquire(&self) {
        self.limiter.until_ready().await;
    }
}

impl std::fmt::Debug for StoreRateLimiter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("StoreRateLimiter")
            .field("limit", &self.limit)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn zero_is_not_a_limit() {
        assert_eq!(RateLimit::new(0, 1), None);
        assert_eq!(RateLimit::new(1, 0), None);
        assert_eq!(RateLimit::default(), RateLimit::new(50, 100).unwrap());
    }

    #[tokio::test]
    async fn burst_passes_at_once_then_calls_are_spaced() {
        let limiter = StoreRateLimiter::new(RateLimit::new(20, 3).unwrap());
        let started = Instant::now();
        for _ in 0..3 {
            limiter.acquire().await;
        }
        assert!(started.elapsed() < Duration::from_millis(40));
        // Two more calls need two fresh tokens: at least ~100 ms at 20 per second.
        limiter.acquire().await;
        limiter.clone().acquire().await;
        assert!(
            started.elapsed() >= Duration::from_millis(90),
            "{:?}",
            started.elapsed()
        );
    }
}
