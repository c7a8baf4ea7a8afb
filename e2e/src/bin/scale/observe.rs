//! Watching the controller work: its metrics page (how many ExternalSecrets it reports Ready,
//! its syncs and provider calls), the ExternalSecrets' status through the API, and which of
//! them are due for a refresh.

use std::time::{Duration, Instant};

use e2e::bench::metric_sum;
use e2e::harness::ControllerProcess;
use external_secrets_crds::v1::ExternalSecret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams};

/// Provider calls the controller counted (`externalsecret_provider_api_calls_count`).
pub fn provider_calls(page: &str) -> f64 {
    metric_sum(page, "externalsecret_provider_api_calls_count", &[])
}

/// ExternalSecret reconciles the controller counted (`externalsecret_sync_calls_total`).
pub fn syncs(page: &str) -> f64 {
    metric_sum(page, "externalsecret_sync_calls_total", &[])
}

/// ExternalSecrets the controller reports Ready (`externalsecret_status_condition`).
fn ready(page: &str) -> f64 {
    metric_sum(
        page,
        "externalsecret_status_condition",
        &["status=\"True\""],
    )
}

/// Scrapes the controller's metrics every `poll` until `done` holds for the page, failing
/// at `deadline` with `what`. Returns the last page.
pub async fn poll_until(
    controller: &ControllerProcess,
    poll: Duration,
    deadline: Instant,
    what: &str,
    mut done: impl FnMut(&str) -> bool,
) -> anyhow::Result<String> {
    loop {
        let page = controller.metrics().await?;
        if done(&page) {
            return Ok(page);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "timed out waiting for {what} (controller log: {})",
            controller.log_path.display()
        );
        tokio::time::sleep(poll).await;
    }
}

/// Waits until the controller reports `count` ExternalSecrets Ready; returns the page.
pub async fn all_ready(
    controller: &ControllerProcess,
    count: usize,
    poll: Duration,
    deadline: Instant,
) -> anyhow::Result<String> {
    let what = format!("{count} ExternalSecrets Ready");
    poll_until(controller, poll, deadline, &what, |page| {
        ready(page) >= count as f64
    })
    .await
}

/// Whether an ExternalSecret's Ready condition is True.
fn is_ready(es: &ExternalSecret) -> bool {
    es.status
        .iter()
        .flat_map(|status| &status.conditions)
        .any(|condition| condition.status == "True")
}

/// Every ExternalSecret in the namespace, read in pages.
pub async fn list_all(api: &Api<ExternalSecret>) -> anyhow::Result<Vec<ExternalSecret>> {
    let mut all = Vec::new();
    let mut params = ListParams::default().limit(500);
    loop {
        let page = api.list(&params).await?;
        all.extend(page.items);
        match page.metadata.continue_.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(all),
        }
    }
}

/// Confirms through the API that all `count` are Ready (the controller sets its metric just
/// before its status write lands), waiting until `deadline` if needed.
pub async fn confirm_ready(
    api: &Api<ExternalSecret>,
    count: usize,
    deadline: Instant,
) -> anyhow::Result<Vec<ExternalSecret>> {
    loop {
        let all = list_all(api).await?;
        let ready = all.iter().filter(|es| is_ready(es)).count();
        if ready >= count {
            return Ok(all);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the controller reports {count} Ready, the API only {ready}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Polls one ExternalSecret until it is Ready.
pub async fn one_ready(
    api: &Api<ExternalSecret>,
    name: &str,
    deadline: Instant,
) -> anyhow::Result<()> {
    loop {
        if api.get_opt(name).await?.as_ref().is_some_and(is_ready) {
            return Ok(());
        }
        anyhow::ensure!(Instant::now() < deadline, "{name} not Ready in time");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// When the last of `external_secrets` is due for its next refresh, and how many are due
/// by `until`: `status.refreshTime` plus `interval` (the controller adds up to 5% jitter,
/// so this counts every one that may be due).
pub fn due(
    external_secrets: &[ExternalSecret],
    interval: Duration,
    until: Timestamp,
) -> (usize, Option<Timestamp>) {
    let due_times: Vec<Timestamp> = external_secrets
        .iter()
        .filter_map(|es| es.status.as_ref()?.refresh_time.as_ref())
        .filter_map(|time| time.0.checked_add(interval).ok())
        .collect();
    let due = due_times.iter().filter(|time| **time <= until).count();
    (due, due_times.into_iter().max())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_counts_refresh_times_plus_the_interval() {
        let es = |refreshed: Option<&str>| -> ExternalSecret {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "external-secrets.io/v1",
                "kind": "ExternalSecret",
                "metadata": {"name": "a"},
                "spec": {"secretStoreRef": {"name": "s"}},
                "status": refreshed.map(|time| serde_json::json!({"refreshTime": time})),
            }))
            .unwrap()
        };
        let all = [
            es(Some("2030-01-01T00:00:00Z")),
            es(Some("2030-01-01T00:00:30Z")),
            es(None),
        ];
        let minute = Duration::from_secs(60);
        let until: Timestamp = "2030-01-01T00:01:10Z".parse().unwrap();
        let (count, last) = due(&all, minute, until);
        assert_eq!(count, 1);
        assert_eq!(last, Some("2030-01-01T00:01:30Z".parse().unwrap()));
    }

    #[test]
    fn metrics_name_ready_syncs_and_provider_calls() {
        let page = "externalsecret_status_condition{name=\"a\",namespace=\"n\",condition=\"Ready\",status=\"True\"} 1\n\
                    externalsecret_status_condition{name=\"b\",namespace=\"n\",condition=\"Ready\",status=\"True\"} 0\n\
                    externalsecret_sync_calls_total{name=\"a\",namespace=\"n\"} 3\n\
                    externalsecret_provider_api_calls_count{provider=\"fake\",call=\"GetSecret\",status=\"success\"} 5\n";
        assert_eq!(
            (ready(page), syncs(page), provider_calls(page)),
            (1.0, 3.0, 5.0)
        );
    }
}
