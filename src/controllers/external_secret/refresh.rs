//! When an ExternalSecret must be fetched again, decided from its spec and status alone, so a
//! restarted controller neither calls providers nor writes Secrets for ExternalSecrets that are
//! not due (upstream's `shouldRefresh` and `getRequeueResult`).

use std::time::Duration;

use external_secrets_crds::v1::{ExternalSecret, ExternalSecretRefreshPolicy};
use external_secrets_providers::duration::parse_go_duration;
use k8s_openapi::jiff::Timestamp;

use super::error::Error;
use crate::controllers::metadata::synced_resource_version;

/// The refresh interval, `spec.refreshInterval`; zero means "sync once".
pub fn interval(es: &ExternalSecret) -> Result<Duration, Error> {
    parse_go_duration(&es.spec.refresh_interval).map_err(Error::RefreshInterval)
}

/// When the provider was last read, if ever.
pub fn last_refresh(es: &ExternalSecret) -> Option<Timestamp> {
    es.status.as_ref()?.refresh_time.as_ref().map(|t| t.0)
}

/// Whether the provider must be read now: never synced, changed since the last sync, or (for
/// `Periodic`) the interval has passed since `status.refreshTime`. `Periodic` with a zero
/// interval syncs once and never again, not even on a spec change (upstream's
/// `shouldRefreshPeriodic`).
pub fn should_refresh(es: &ExternalSecret, interval: Duration, now: Timestamp) -> bool {
    let status = es.status.as_ref();
    let synced = status.and_then(|s| s.synced_resource_version.as_deref());
    let refreshed = status.and_then(|s| s.refresh_time.as_ref()).map(|t| t.0);
    let policy = es
        .spec
        .refresh_policy
        .unwrap_or(ExternalSecretRefreshPolicy::Periodic);
    if policy == ExternalSecretRefreshPolicy::Periodic
        && interval.is_zero()
        && synced.is_some_and(|synced| !synced.is_empty())
    {
        return false;
    }
    let (Some(synced), Some(refreshed)) = (synced, refreshed) else {
        return true;
    };
    match policy {
        ExternalSecretRefreshPolicy::CreatedOnce => false,
        ExternalSecretRefreshPolicy::OnChange => synced != synced_resource_version(&es.metadata),
        ExternalSecretRefreshPolicy::Periodic => {
            if synced != synced_resource_version(&es.metadata) {
                return true;
            }
            !interval.is_zero()
                && elapsed(refreshed, now) >= interval
                && super::sync_window::allows_refresh(es.spec.sync_windows.as_ref(), now)
        }
    }
}

/// How long until the next refresh is due, counted from `refreshed` (plus up to 5% jitter so
/// refreshes spread out), or `None` when the ExternalSecret only syncs on change.
pub fn next_refresh(
    es: &ExternalSecret,
    interval: Duration,
    refreshed: Timestamp,
    now: Timestamp,
    random_fraction: f64,
) -> Option<Duration> {
    let periodic = matches!(
        es.spec.refresh_policy,
        None | Some(ExternalSecretRefreshPolicy::Periodic)
    );
    if !periodic || interval.is_zero() {
        return None;
    }
    let remaining = interval.saturating_sub(elapsed(refreshed, now));
    let windows = es.spec.sync_windows.as_ref();
    let wait = if remaining.is_zero() && !super::sync_window::allows_refresh(windows, now) {
        super::sync_window::next_allowed(windows, now)
    } else {
        remaining.max(Duration::from_secs(1))
    };
    let jitter = interval.mul_f64(0.05 * random_fraction.clamp(0.0, 1.0));
    Some(wait + jitter)
}

fn elapsed(since: Timestamp, now: Timestamp) -> Duration {
    let seconds = now.as_second() - since.as_second();
    Duration::from_secs(u64::try_from(seconds).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::v1::ExternalSecretStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn es(policy: Option<ExternalSecretRefreshPolicy>) -> ExternalSecret {
        let mut es: ExternalSecret = serde_json::from_value(serde_json::json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "ExternalSecret",
            "metadata": {"name": "a", "namespace": "n", "generation": 3},
            "spec": {"refreshInterval": "1h", "secretStoreRef": {"name": "s"}},
        }))
        .unwrap();
        es.spec.refresh_policy = policy;
        es
    }

    fn synced_at(es: &mut ExternalSecret, at: Timestamp) {
        es.status = Some(ExternalSecretStatus {
            refresh_time: Some(Time(at)),
            synced_resource_version: Some(synced_resource_version(&es.metadata)),
            ..ExternalSecretStatus::default()
        });
    }

    #[test]
    fn periodic_refreshes_when_never_synced_changed_or_due() {
        let t0 = Timestamp::from_second(1_700_000_000).unwrap();
        let hour = Duration::from_secs(3600);
        let mut es = es(None);
        assert!(should_refresh(&es, hour, t0));
        synced_at(&mut es, t0);
        assert!(!should_refresh(&es, hour, t0));
        let later = Timestamp::from_second(1_700_003_599).unwrap();
        assert!(!should_refresh(&es, hour, later));
        let due = Timestamp::from_second(1_700_003_600).unwrap();
        assert!(should_refresh(&es, hour, due));
        es.metadata.annotations = Some([("force-sync".into(), "1".into())].into());
        assert!(should_refresh(&es, hour, t0), "a metadata change syncs");
    }

    /// Upstream `shouldRefresh` tests (externalsecret_controller_test.go, "should skip refresh
    /// when refreshInterval is 0" and RefreshPolicy=Periodic "should not refresh when
    /// refreshInterval is 0 and already synced"), and `shouldRefreshPeriodic`, which returns
    /// false for a zero interval once `syncedResourceVersion` is set, whatever changed since.
    #[test]
    fn a_zero_interval_syncs_once_and_never_again() {
        let t0 = Timestamp::from_second(1_700_000_000).unwrap();
        let much_later = Timestamp::from_second(1_800_000_000).unwrap();
        let mut es = es(None);
        assert!(should_refresh(&es, Duration::ZERO, t0), "never synced");
        synced_at(&mut es, t0);
        assert!(!should_refresh(&es, Duration::ZERO, much_later));
        es.metadata.generation = Some(4);
        es.metadata.annotations = Some([("force-sync".into(), "1".into())].into());
        assert!(
            !should_refresh(&es, Duration::ZERO, much_later),
            "spec change"
        );
        // Only the synced version counts, as upstream: no refresh time is no reason either.
        es.status.as_mut().unwrap().refresh_time = None;
        assert!(!should_refresh(&es, Duration::ZERO, much_later));
        let mut periodic = es.clone();
        periodic.spec.refresh_policy = Some(ExternalSecretRefreshPolicy::Periodic);
        assert!(!should_refresh(&periodic, Duration::ZERO, much_later));
        // OnChange keeps syncing on change whatever the interval.
        let mut on_change = es.clone();
        on_change.spec.refresh_policy = Some(ExternalSecretRefreshPolicy::OnChange);
        synced_at(&mut on_change, t0);
        on_change.metadata.generation = Some(5);
        assert!(should_refresh(&on_change, Duration::ZERO, much_later));
    }

    #[test]
    fn created_once_and_on_change() {
        let t0 = Timestamp::from_second(1_700_000_000).unwrap();
        let much_later = Timestamp::from_second(1_800_000_000).unwrap();
        let hour = Duration::from_secs(3600);
        let mut once = es(Some(ExternalSecretRefreshPolicy::CreatedOnce));
        synced_at(&mut once, t0);
        once.metadata.generation = Some(4);
        assert!(!should_refresh(&once, hour, much_later));
        let mut on_change = es(Some(ExternalSecretRefreshPolicy::OnChange));
        synced_at(&mut on_change, t0);
        assert!(!should_refresh(&on_change, hour, much_later));
        on_change.metadata.generation = Some(4);
        assert!(should_refresh(&on_change, hour, t0));
        assert_eq!(next_refresh(&on_change, hour, t0, t0, 0.5), None);
    }

    #[test]
    fn next_refresh_counts_from_the_last_refresh() {
        let t0 = Timestamp::from_second(1_700_000_000).unwrap();
        let hour = Duration::from_secs(3600);
        let mut es = es(None);
        synced_at(&mut es, t0);
        let now = Timestamp::from_second(1_700_000_600).unwrap();
        assert_eq!(
            next_refresh(&es, hour, t0, now, 0.0),
            Some(Duration::from_secs(3000))
        );
        assert_eq!(
            next_refresh(&es, hour, t0, now, 1.0),
            Some(Duration::from_secs(3000 + 180))
        );
        assert_eq!(next_refresh(&es, Duration::ZERO, t0, now, 0.0), None);
        assert_eq!(last_refresh(&es), Some(t0));
        assert_eq!(
            interval(&es).unwrap(),
            hour,
            "spec.refreshInterval parses as a Go duration"
        );
    }

    #[test]
    fn a_deny_window_postpones_a_due_refresh_until_it_closes() {
        let t0 = Timestamp::from_second(1_795_392_000).unwrap(); // Monday 00:00 UTC
        let hour = Duration::from_secs(3600);
        let mut es = es(None);
        synced_at(&mut es, t0);
        es.spec.sync_windows = serde_json::from_value(serde_json::json!(
            {"kind": "deny", "windows": [{"schedule": "0 1 * * *", "duration": "2h"}]}
        ))
        .unwrap();
        let due_in_window = Timestamp::from_second(1_795_392_000 + 2 * 3600).unwrap();
        assert!(!should_refresh(&es, hour, due_in_window));
        // The window closes at 03:00; the next allowed minute is 03:01.
        assert_eq!(
            next_refresh(&es, hour, t0, due_in_window, 0.0),
            Some(Duration::from_secs(3600 + 60))
        );
        // A spec change still syncs inside the window.
        es.metadata.generation = Some(4);
        assert!(should_refresh(&es, hour, due_in_window));
    }
}
