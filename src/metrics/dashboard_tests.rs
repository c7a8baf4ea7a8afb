//! The chart's Grafana dashboard queries only metrics this operator exports: every metric
//! named in a panel's query or a variable's query must be a sample name of the controller's
//! or the webhook's `/metrics` page.

use std::collections::BTreeSet;
use std::time::Duration;

use super::Metrics;
use crate::webhook::metrics::WebhookMetrics;

const DASHBOARD: &str =
    include_str!("../../charts/external-secrets/monitoring/grafana-dashboard.json");

/// PromQL functions and keywords that look like metric names (they hold an underscore).
const FUNCTIONS: [&str; 2] = ["histogram_quantile", "label_values"];

/// Every query of the dashboard: panel targets (rows nest their panels) and variables.
fn queries(dashboard: &serde_json::Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut panels: Vec<&serde_json::Value> = dashboard["panels"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    while let Some(panel) = panels.pop() {
        panels.extend(panel["panels"].as_array().into_iter().flatten());
        for target in panel["targets"].as_array().into_iter().flatten() {
            found.extend(target["expr"].as_str().map(str::to_owned));
        }
    }
    for variable in dashboard["templating"]["list"]
        .as_array()
        .into_iter()
        .flatten()
    {
        found.extend(variable["query"]["query"].as_str().map(str::to_owned));
    }
    found
}

/// The metric names of a PromQL query: identifiers with an underscore outside label matchers
/// (`{...}`), range selectors (`[...]`) and strings.
fn metric_names(query: &str) -> BTreeSet<String> {
    let outside = regex::Regex::new(r#"\{[^}]*\}|\[[^\]]*\]|"[^"]*""#).unwrap();
    let identifier = regex::Regex::new(r"[a-zA-Z_:][a-zA-Z0-9_:]*").unwrap();
    let bare = outside.replace_all(query, " ");
    identifier
        .find_iter(&bare)
        .map(|name| name.as_str().to_owned())
        .filter(|name| name.contains('_') && !FUNCTIONS.contains(&name.as_str()))
        .collect()
}

/// The sample names of a metrics page.
fn sample_names(page: &str) -> BTreeSet<String> {
    page.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split(['{', ' ']).next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_metric_the_dashboard_queries_is_exported() {
    let metrics = Metrics::default();
    for controller in ["secretstore", "externalsecret", "pushsecret"] {
        metrics.controller_started(controller, 1);
        drop(metrics.reconcile_started(controller));
    }
    let db = super::tests::meta("db", "team-a", &[]);
    metrics.record_sync(&db, Duration::from_millis(1), true);
    metrics.set_external_secret_condition(&db, "False");
    metrics.count_provider_call("HashiCorp/Vault", "ReadSecretData", false);
    let webhook = WebhookMetrics::default();
    let path = "/validate-external-secrets-io-v1-externalsecret";
    drop(webhook.start(path));
    webhook.finished(path, 200, Duration::from_millis(1));
    let exported: BTreeSet<String> = sample_names(&metrics.encode())
        .into_iter()
        .chain(sample_names(&webhook.encode()))
        .collect();

    let dashboard: serde_json::Value = serde_json::from_str(DASHBOARD).unwrap();
    let queries = queries(&dashboard);
    assert!(queries.len() > 20, "{} queries found", queries.len());
    let queried: BTreeSet<String> = queries
        .iter()
        .flat_map(|query| metric_names(query))
        .collect();
    // The panels of upstream's dashboard (deploy/charts/external-secrets/templates/monitoring/
    // grafana-dashboard.json) use exactly these metrics; ours shows each of them.
    for upstream in [
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "controller_runtime_max_concurrent_reconciles",
        "controller_runtime_active_workers",
        "controller_runtime_webhook_requests_total",
        "controller_runtime_webhook_requests_in_flight",
        "controller_runtime_webhook_latency_seconds_bucket",
        "workqueue_depth",
        "externalsecret_provider_api_calls_count",
        "externalsecret_status_condition",
        "externalsecret_sync_calls_error",
    ] {
        assert!(
            queried.contains(upstream),
            "the dashboard does not show {upstream}"
        );
    }
    let missing: Vec<&String> = queried.difference(&exported).collect();
    assert!(missing.is_empty(), "queried but not exported: {missing:?}");
}

#[test]
fn metric_names_skip_labels_ranges_strings_and_functions() {
    assert_eq!(
        metric_names(
            "histogram_quantile(0.99, sum(rate(a_bucket{service=~\"x_y\",le=\"1\"}[$__rate_interval])) by (le)) / b_total"
        ),
        BTreeSet::from(["a_bucket".to_owned(), "b_total".to_owned()])
    );
}
