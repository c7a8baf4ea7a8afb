//! Unit tests of the metrics.
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::Metrics;

/// An object's metadata: `name` in `namespace` with `labels`.
pub fn meta(name: &str, namespace: &str, labels: &[(&str, &str)]) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
        labels: Some(
            labels
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        ),
        ..ObjectMeta::default()
    }
}

#[test]
fn exports_upstream_names_with_help() {
    let metrics = Metrics::default();
    metrics.set_store_condition(false, &meta("vault", "team-a", &[]), "Ready", "True");
    metrics.set_store_condition(true, &meta("global", "", &[]), "Ready", "False");
    metrics.reconcile_finished("secretstore", "error");
    drop(metrics.reconcile_started("secretstore"));
    let db = meta(
        "db",
        "team-a",
        &[("app.kubernetes.io/name", "ignored-by-default")],
    );
    metrics.record_sync(&db, std::time::Duration::from_millis(1), true);
    metrics.set_external_secret_condition(&db, "False");
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
        // Go's process collector, as controller-runtime registers it.
        "# HELP process_cpu_seconds Total user and system CPU time spent in seconds.",
        "\nprocess_cpu_seconds_total ",
        "\nprocess_resident_memory_bytes ",
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
        let object = meta(name, "team-a", &[]);
        metrics.record_sync(&object, std::time::Duration::from_millis(1), true);
        metrics.set_external_secret_condition(&object, "True");
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

/// controller-runtime v0.22's controller and workqueue families (names, labels, help from its
/// `pkg/internal/controller/metrics/metrics.go` and `pkg/metrics/workqueue.go`).
#[test]
fn a_started_controller_exports_controller_runtime_and_workqueue_series() {
    let metrics = Metrics::default();
    metrics.controller_started("externalsecret", 4);
    let text = metrics.encode();
    for expected in [
        "# HELP controller_runtime_max_concurrent_reconciles Maximum number of concurrent reconciles per controller.",
        "controller_runtime_max_concurrent_reconciles{controller=\"externalsecret\"} 4",
        "controller_runtime_active_workers{controller=\"externalsecret\"} 0",
        "controller_runtime_reconcile_total{controller=\"externalsecret\",result=\"requeue\"} 0",
        "controller_runtime_reconcile_total{controller=\"externalsecret\",result=\"success\"} 0",
        "controller_runtime_terminal_reconcile_errors_total{controller=\"externalsecret\"} 0",
        "controller_runtime_reconcile_panics_total{controller=\"externalsecret\"} 0",
        "# HELP workqueue_depth Current depth of workqueue by workqueue and priority.",
        "workqueue_depth{controller=\"externalsecret\",name=\"externalsecret\",priority=\"\"} 0",
        "# HELP workqueue_adds Total number of adds handled by workqueue.",
        "workqueue_adds_total{controller=\"externalsecret\",name=\"externalsecret\"} 0",
        "workqueue_retries_total{controller=\"externalsecret\",name=\"externalsecret\"} 0",
        "workqueue_queue_duration_seconds_bucket{le=\"1e-8\",controller=\"externalsecret\",name=\"externalsecret\"} 0",
        "# HELP workqueue_work_duration_seconds How long in seconds processing an item from workqueue takes.\n",
        "workqueue_work_duration_seconds_count{controller=\"externalsecret\",name=\"externalsecret\"} 0",
        "workqueue_unfinished_work_seconds{controller=\"externalsecret\",name=\"externalsecret\"} 0",
        "workqueue_longest_running_processor_seconds{controller=\"externalsecret\",name=\"externalsecret\"} 0",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
}

#[test]
fn reconciles_feed_work_duration_unfinished_work_and_retries() {
    let metrics = Metrics::default();
    metrics.controller_started("pushsecret", 1);
    let series = |text: &str, prefix: &str| -> f64 {
        text.lines()
            .find(|line| line.starts_with(prefix))
            .and_then(|line| line.rsplit(' ').next())
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
    };
    let unfinished = "workqueue_unfinished_work_seconds{controller=\"pushsecret\"";
    let work = "workqueue_work_duration_seconds_count{controller=\"pushsecret\"";
    let timer = metrics.reconcile_started("pushsecret");
    std::thread::sleep(std::time::Duration::from_millis(2));
    let running = metrics.encode();
    // While the reconcile runs its age is unfinished work, and it is the longest running one.
    assert!(series(&running, unfinished) > 0.0, "{running}");
    assert_eq!(
        series(&running, unfinished),
        series(
            &running,
            "workqueue_longest_running_processor_seconds{controller=\"pushsecret\""
        )
    );
    assert_eq!(series(&running, work), 0.0);
    drop(timer);
    metrics.reconcile_finished("pushsecret", "success");
    metrics.reconcile_finished("pushsecret", "requeue_after");
    metrics.reconcile_finished("pushsecret", "error");
    let done = metrics.encode();
    assert_eq!(series(&done, unfinished), 0.0, "{done}");
    assert_eq!(series(&done, work), 1.0);
    // controller-runtime's reconcile time buckets: 40 of them, the last finite one 60 s.
    let buckets = done
        .lines()
        .filter(|line| line.starts_with("controller_runtime_reconcile_time_seconds_bucket{"))
        .count();
    assert_eq!(buckets, 41, "40 bounds and +Inf\n{done}");
    assert_eq!(
        series(
            &done,
            "controller_runtime_reconcile_time_seconds_bucket{le=\"60.0\",controller=\"pushsecret\"}"
        ),
        1.0
    );
    // A requeue and an error put the request back (client-go's AddAfter counts a retry);
    // a success does not.
    assert_eq!(
        series(&done, "workqueue_retries_total{controller=\"pushsecret\""),
        2.0
    );
}

/// Upstream's `--enable-extended-metric-labels` (pkg/controllers/metrics/labels.go
/// `SetUpLabelNames`/`RefineLabels`): the six `app.kubernetes.io/*` labels, non-alphanumerics
/// as `_`, empty when the object lacks one; stale series go when the labels change
/// (esmetrics.go deletes partial matches) and when the object is deleted.
#[test]
fn extended_labels_follow_the_objects_recommended_labels() {
    let metrics = Metrics::new(true);
    let first = meta(
        "db",
        "team-a",
        &[("app.kubernetes.io/name", "billing"), ("team", "a")],
    );
    metrics.record_sync(&first, std::time::Duration::from_millis(1), false);
    metrics.set_external_secret_condition(&first, "True");
    let text = metrics.encode();
    let expected = "externalsecret_status_condition{name=\"db\",namespace=\"team-a\",condition=\"Ready\",status=\"True\",app_kubernetes_io_name=\"billing\",app_kubernetes_io_instance=\"\",app_kubernetes_io_version=\"\",app_kubernetes_io_component=\"\",app_kubernetes_io_part_of=\"\",app_kubernetes_io_managed_by=\"\"} 1";
    assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    assert!(
        !text.contains("team=\""),
        "only recommended labels:\n{text}"
    );

    let relabelled = meta("db", "team-a", &[("app.kubernetes.io/name", "payments")]);
    metrics.set_external_secret_condition(&relabelled, "True");
    let text = metrics.encode();
    assert!(!text.contains("\"billing\""), "old series left:\n{text}");
    assert!(
        text.contains("app_kubernetes_io_name=\"payments\""),
        "{text}"
    );

    metrics.remove_external_secret("db", "team-a");
    let text = metrics.encode();
    let left: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("externalsecret_") && line.contains("name=\"db\""))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Every per-object family loses a deleted object's series, under whatever recommended labels it
/// last had, and its remembered labels go too (they would otherwise grow with every object
/// ever created).
#[test]
fn every_deleted_object_leaves_no_series_and_no_remembered_labels() {
    let metrics = Metrics::new(true);
    let took = std::time::Duration::from_millis(1);
    let labelled = |name, namespace| meta(name, namespace, &[("app.kubernetes.io/name", "x")]);
    let objects = [
        labelled("store", "team-a"),
        labelled("global", ""),
        labelled("es", "team-a"),
        labelled("push", "team-a"),
        labelled("ces", ""),
        labelled("cps", ""),
    ];
    let [store, global, es, push, ces, cps] = &objects;
    metrics.set_store_condition(false, store, "Ready", "True");
    metrics.set_store_duration(false, store, took);
    metrics.set_store_condition(true, global, "Ready", "True");
    metrics.set_store_duration(true, global, took);
    metrics.record_sync(es, took, true);
    metrics.set_external_secret_condition(es, "True");
    metrics.set_push_secret(push, "True", took);
    metrics.set_cluster_external_secret(ces, "True", took);
    metrics.set_cluster_push_secret(cps, "True", took);
    assert_eq!(metrics.remembered(), 6);
    let named = |text: &str| {
        text.lines()
            .filter(|line| !line.starts_with('#') && line.contains("name=\""))
            .filter(|line| {
                !line.starts_with("controller_runtime") && !line.starts_with("workqueue")
            })
            .count()
    };
    assert_eq!(named(&metrics.encode()), 20, "{}", metrics.encode());

    metrics.remove_store(false, "store", "team-a");
    metrics.remove_store(true, "global", "");
    metrics.remove_external_secret("es", "team-a");
    metrics.remove_push_secret("push", "team-a");
    metrics.remove_cluster_external_secret("ces");
    metrics.remove_cluster_push_secret("cps");
    let text = metrics.encode();
    assert_eq!(named(&text), 0, "series left:\n{text}");
    assert_eq!(metrics.remembered(), 0);
}
