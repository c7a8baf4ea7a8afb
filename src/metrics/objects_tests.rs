//! The per-object tables encode exactly what a prometheus-client `Family` per metric encoded for
//! the same objects: the same `# HELP`/`# TYPE` lines in the same order, and the same series
//! lines, byte for byte (a `Family` lists its series in hash order, so series are compared as
//! sets).

use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Metric, Registry};

use super::Metrics;
use super::tests::meta;

/// A series' labels in the order the old label structs encoded them.
type Labels = Vec<(&'static str, String)>;

/// The six recommended label names and the values of an object labelled only
/// `app.kubernetes.io/name: billing`, as `--enable-extended-metric-labels` adds them.
fn extended_pairs() -> Labels {
    [
        ("app_kubernetes_io_name", "billing"),
        ("app_kubernetes_io_instance", ""),
        ("app_kubernetes_io_version", ""),
        ("app_kubernetes_io_component", ""),
        ("app_kubernetes_io_part_of", ""),
        ("app_kubernetes_io_managed_by", ""),
    ]
    .map(|(name, value)| (name, value.to_owned()))
    .to_vec()
}

/// A new metric registered under `name` with `help`.
fn registered<M: Metric + Clone + Default>(registry: &mut Registry, name: &str, help: &str) -> M {
    let metric = M::default();
    registry.register(name, help, metric.clone());
    metric
}

/// The families of the old layout, registered in the order `Metrics::new` registers them.
struct Oracle {
    registry: Registry,
    es_condition: Family<Labels, Gauge>,
    es_duration: Family<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    sync_calls: Family<Labels, Counter>,
    sync_errors: Family<Labels, Gauge>,
    push_condition: Family<Labels, Gauge>,
    push_duration: Family<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    kube: Labels,
}

impl Oracle {
    fn new(extended: bool) -> Self {
        let mut registry = Registry::default();
        Self {
            es_condition: registered(
                &mut registry,
                "externalsecret_status_condition",
                "The status condition of a specific External Secret",
            ),
            es_duration: registered(
                &mut registry,
                "externalsecret_reconcile_duration",
                "The duration time to reconcile the External Secret",
            ),
            sync_calls: registered(
                &mut registry,
                "externalsecret_sync_calls",
                "Total number of the External Secret sync calls",
            ),
            sync_errors: registered(
                &mut registry,
                "externalsecret_sync_calls_error",
                "Total number of the External Secret sync errors",
            ),
            push_condition: registered(
                &mut registry,
                "pushsecret_status_condition",
                "The status condition of a specific Push Secret",
            ),
            push_duration: registered(
                &mut registry,
                "pushsecret_reconcile_duration",
                "The duration time to reconcile the Push Secret",
            ),
            kube: if extended {
                extended_pairs()
            } else {
                Vec::new()
            },
            registry,
        }
    }

    fn object(&self, name: &str, namespace: &str) -> Labels {
        let mut labels = vec![
            ("name", name.to_owned()),
            ("namespace", namespace.to_owned()),
        ];
        labels.extend(self.kube.iter().cloned());
        labels
    }

    fn condition(&self, family: &Family<Labels, Gauge>, name: &str, status: &str) {
        for candidate in ["True", "False"] {
            let mut labels = vec![
                ("name", name.to_owned()),
                ("namespace", "team-a".to_owned()),
                ("condition", "Ready".to_owned()),
                ("status", candidate.to_owned()),
            ];
            labels.extend(self.kube.iter().cloned());
            family
                .get_or_create(&labels)
                .set(i64::from(candidate == status));
        }
    }

    fn encode(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry).unwrap();
        text
    }
}

/// The `# HELP`/`# TYPE` lines in order and the sorted series lines of the per-object
/// ExternalSecret and PushSecret families of a page.
fn object_families(page: &str) -> (Vec<&str>, Vec<&str>) {
    let ours = |line: &&str| {
        let name = line
            .trim_start_matches("# HELP ")
            .trim_start_matches("# TYPE ");
        (name.starts_with("externalsecret_") || name.starts_with("pushsecret_"))
            && !name.starts_with("externalsecret_provider_api_calls_count")
    };
    let (mut descriptors, mut series): (Vec<&str>, Vec<&str>) = page
        .lines()
        .filter(ours)
        .partition(|line| line.starts_with('#'));
    descriptors.dedup();
    series.sort_unstable();
    (descriptors, series)
}

fn compare(extended: bool) {
    let metrics = Metrics::new(extended);
    let oracle = Oracle::new(extended);
    let labels: &[(&str, &str)] = if extended {
        &[("app.kubernetes.io/name", "billing"), ("team", "a")]
    } else {
        &[]
    };
    let object = |name| meta(name, "team-a", labels);
    let took = Duration::from_micros(1_234_567);
    let nanos = took.as_nanos() as f64;

    // Ready and synced once.
    metrics.record_sync(&object("db"), took, false);
    metrics.set_external_secret_condition(&object("db"), "True");
    oracle
        .es_duration
        .get_or_create(&oracle.object("db", "team-a"))
        .set(nanos);
    oracle
        .sync_calls
        .get_or_create(&oracle.object("db", "team-a"))
        .inc();
    oracle.condition(&oracle.es_condition, "db", "True");
    // Failed twice, after one success.
    for failed in [false, true, true] {
        metrics.record_sync(&object("api"), took, failed);
        let labels = oracle.object("api", "team-a");
        oracle.es_duration.get_or_create(&labels).set(nanos);
        oracle.sync_calls.get_or_create(&labels).inc();
        if failed {
            oracle.sync_errors.get_or_create(&labels).inc();
        }
    }
    metrics.set_external_secret_condition(&object("api"), "False");
    oracle.condition(&oracle.es_condition, "api", "False");
    // A status neither True nor False, and no sync yet.
    metrics.set_external_secret_condition(&object("new"), "Unknown");
    oracle.condition(&oracle.es_condition, "new", "Unknown");
    // A PushSecret pushed in no time.
    metrics.set_push_secret(&object("push"), "False", Duration::ZERO);
    oracle.condition(&oracle.push_condition, "push", "False");
    oracle
        .push_duration
        .get_or_create(&oracle.object("push", "team-a"))
        .set(0.0);

    let ours = metrics.encode();
    let expected = oracle.encode();
    assert_eq!(object_families(&ours), object_families(&expected), "{ours}");
    assert_eq!(object_families(&expected).1.len(), 14, "{expected}");
}

#[test]
fn object_series_encode_as_a_family_per_metric_did() {
    compare(false);
}

#[test]
fn object_series_with_extended_labels_encode_as_a_family_per_metric_did() {
    compare(true);
}

/// A family none of whose objects has a series is left out entirely, as an empty `Family`
/// was: no sync error yet means no `externalsecret_sync_calls_error` lines at all.
#[test]
fn a_family_without_series_has_no_help_or_type() {
    let metrics = Metrics::default();
    metrics.set_external_secret_condition(&meta("db", "team-a", &[]), "True");
    let text = metrics.encode();
    assert!(
        text.contains("# TYPE externalsecret_status_condition gauge"),
        "{text}"
    );
    for absent in [
        "externalsecret_reconcile_duration",
        "externalsecret_sync_calls",
        "pushsecret_status_condition",
    ] {
        assert!(!text.contains(absent), "{absent} in\n{text}");
    }
}
