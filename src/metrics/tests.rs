//! Unit tests of the metrics.
use super::Metrics;

#[test]
fn exports_upstream_names_with_help() {
    let metrics = Metrics::default();
    metrics.set_store_condition(false, "vault", "team-a", "Ready", "True");
    metrics.set_store_condition(true, "global", "", "Ready", "False");
    metrics.reconcile_finished("secretstore", "error");
    drop(metrics.reconcile_started("secretstore"));
    metrics.record_sync("db", "team-a", std::time::Duration::from_millis(1), true);
    metrics.set_external_secret_condition("db", "team-a", "False");
    metrics.count_provider_call("fake", "GetSecret", true);
    let text = metrics.encode();
    for expected in [
        "# HELP secretstore_status_condition ",
        "secretstore_status_condition{name=\"vault\",namespace=\"team-a\",condition=\"Ready\",status=\"True\"} 1",
        "secretstore_status_condition{name=\"vault\",namespace=\"team-a\",condition=\"Ready\",status=\"False\"} 0",
        "clustersecretstore_status_condition{name=\"global\",namespace=\"\",condition=\"Ready\",status=\"False\"} 1",
        "controller_runtime_reconcile_total{controller=\"secretstore\",result=\"error\"} 1",
        "controller_runtime_reconcile_errors_total{controller=\"secretstore\"} 1",
        "controller_runtime_reconcile_time_seconds_count{controller=\"secretstore\"} 1",
        "externalsecret_sync_calls_total{name=\"db\",namespace=\"team-a\"} 1",
        "externalsecret_sync_calls_error{name=\"db\",namespace=\"team-a\"} 1",
        "externalsecret_status_condition{name=\"db\",namespace=\"team-a\",condition=\"Ready\",status=\"False\"} 1",
        "externalsecret_reconcile_duration{name=\"db\",namespace=\"team-a\"} 1000000",
        "externalsecret_provider_api_calls_count{provider=\"fake\",call=\"GetSecret\",status=\"success\"} 1",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    for line in text.lines().filter(|line| line.starts_with("# TYPE")) {
        let name = line.split_whitespace().nth(2).unwrap();
        assert!(
            text.contains(&format!("# HELP {name} ")),
            "no help for {name}"
        );
    }
}

#[test]
fn a_deleted_external_secret_leaves_no_series() {
    let metrics = Metrics::default();
    for name in ["db", "api"] {
        metrics.record_sync(name, "team-a", std::time::Duration::from_millis(1), true);
        metrics.set_external_secret_condition(name, "team-a", "True");
    }
    metrics.remove_external_secret("db", "team-a");
    let text = metrics.encode();
    let series = |name: &str| {
        text.lines()
            .filter(|line| line.starts_with("externalsecret_"))
            .filter(|line| line.contains(&format!("name=\"{name}\"")))
            .count()
    };
    assert_eq!(series("db"), 0, "in\n{text}");
    assert_eq!(
        series("api"),
        5,
        "the other ExternalSecret keeps its series\n{text}"
    );
}
