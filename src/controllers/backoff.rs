//! Per-object retry delays after failed reconciles: an object that keeps failing (a provider
//! outage, a missing source Secret) is retried less and less often, while one failure of another
//! object does not slow it down. Upstream gets this from controller-runtime's per-item
//! exponential rate limiter; kube-rs leaves the delay to the `error_policy`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use kube::Resource;

/// The longest wait between retries of one object.
const MAX_DELAY: Duration = Duration::from_secs(300);

/// The delay after `failures` consecutive failures: 1 s doubling up to 5 minutes.
pub fn delay(failures: u32) -> Duration {
    let seconds = 1u64 << failures.saturating_sub(1).min(9);
    Duration::from_secs(seconds).min(MAX_DELAY)
}

/// Consecutive failures per object, keyed by uid, forgotten on the next success.
#[derive(Debug, Default)]
pub struct FailureBackoff {
    failures: Mutex<HashMap<String, u32>>,
}

impl FailureBackoff {
    /// Counts a failure of `object` and returns how long to wait before retrying it: the
    /// exponential delay plus up to 10 % jitter, so objects failing together spread out.
    pub fn failed<K: Resource>(&self, object: &K) -> Duration {
        let failures = {
            let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
            let count = failures.entry(key(object)).or_insert(0);
            *count = count.saturating_add(1);
            *count
        };
        let base = delay(failures);
        base + base.mul_f64(0.1 * fastrand::f64())
    }

    /// Forgets the failures of `object`, after a successful reconcile or its deletion.
    pub fn forget<K: Resource>(&self, object: &K) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if !failures.is_empty() {
            failures.remove(&key(object));
        }
    }
}

/// The uid identifies one incarnation of an object: a recreated object starts afresh.
fn key<K: Resource>(object: &K) -> String {
    let meta = object.meta();
    meta.uid.clone().unwrap_or_else(|| {
        format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Secret;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn object(uid: &str) -> Secret {
        Secret {
            metadata: ObjectMeta {
                uid: Some(uid.to_owned()),
                ..ObjectMeta::default()
            },
            ..Secret::default()
        }
    }

    #[test]
    fn delay_doubles_up_to_five_minutes() {
        assert_eq!(delay(1), Duration::from_secs(1));
        assert_eq!(delay(2), Duration::from_secs(2));
        assert_eq!(delay(5), Duration::from_secs(16));
        assert_eq!(delay(50), MAX_DELAY);
    }

    #[test]
    fn failures_grow_per_object_and_reset_on_success() {
        let backoff = FailureBackoff::default();
        let (a, b) = (object("a"), object("b"));
        let within = |wait: Duration, base: u64| {
            wait >= Duration::from_secs(base) && wait <= Duration::from_secs(base).mul_f64(1.1)
        };
        assert!(within(backoff.failed(&a), 1));
        assert!(within(backoff.failed(&a), 2));
        assert!(within(backoff.failed(&a), 4));
        assert!(
            within(backoff.failed(&b), 1),
            "another object starts afresh"
        );
        backoff.forget(&a);
        assert!(within(backoff.failed(&a), 1), "a success resets the count");
    }
}
