//! Prometheus metrics under upstream ESO's names and help texts: the store status condition and
//! reconcile duration gauges (`secretstore_status_condition`, `secretstore_reconcile_duration`
//! and their `clustersecretstore_` twins), the ExternalSecret metrics
//! (`externalsecret_status_condition`, `externalsecret_sync_calls_total`,
//! `externalsecret_sync_calls_error`, `externalsecret_reconcile_duration`,
//! `externalsecret_provider_api_calls_count`), and what controller-runtime registers for every
//! upstream controller: the `controller_runtime_*` reconcile metrics (including
//! `controller_runtime_max_concurrent_reconciles`), the `workqueue_*` families and Go's
//! `process_*` metrics.
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

mod controller_runtime;
#[cfg(test)]
mod dashboard_tests;
mod labels;
mod objects;
#[cfg(test)]
mod objects_tests;
mod process;
mod request_kind;
#[cfg(test)]
mod tests;
mod workqueue;

pub use request_kind::{ResourceRequestLabels, classify as classify_request};

use objects::{Column, ObjectTable};

pub use labels::{
    ConditionLabels, ControllerLabels, KubeLabels, ProviderCallLabels, RequestLabels, ResultLabels,
    StoreLabels,
};

type DurationGauge = Family<StoreLabels, Gauge<f64, AtomicU64>>;

type HistogramFamily = Family<ControllerLabels, Histogram, fn() -> Histogram>;

/// Counters whose upstream names lack the `_total` suffix prometheus-client adds to counters
/// are exported as gauges that only ever increase, so dashboards find the exact names.
type CountingGauge<L> = Family<L, Gauge>;

/// Every metric the operator exports, and the registry that encodes them.
pub struct Metrics {
    registry: Registry,
    /// Stores are few and report any condition type they are given, so theirs stay a
    /// `Family` per metric; the kinds that come in thousands live in `ObjectTable`s.
    secret_store_condition: Family<ConditionLabels, Gauge>,
    cluster_secret_store_condition: Family<ConditionLabels, Gauge>,
    secret_store_duration: DurationGauge,
    cluster_secret_store_duration: DurationGauge,
    reconcile_total: Family<ResultLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    terminal_errors: Family<ControllerLabels, Counter>,
    reconcile_panics: Family<ControllerLabels, Counter>,
    reconcile_time: HistogramFamily,
    max_concurrent: Family<ControllerLabels, Gauge>,
    active_workers: Family<ControllerLabels, Gauge>,
    workqueue: workqueue::Workqueue,
    /// Every ExternalSecret's status condition, reconcile duration and sync call series.
    external_secrets: Arc<ObjectTable>,
    provider_calls: CountingGauge<ProviderCallLabels>,
    api_requests: Family<RequestLabels, Counter>,
    api_requests_by_resource: Family<ResourceRequestLabels, Counter>,
    events_dropped: Counter,
    /// The length of the last page encoded, to size the next.
    page_size: AtomicUsize,
    cluster_external_secrets: Arc<ObjectTable>,
    cluster_push_secrets: Arc<ObjectTable>,
    push_secrets: Arc<ObjectTable>,
    /// `--enable-extended-metric-labels`: per-object series carry the object's recommended
    /// labels. A store's are remembered here so a label change or deletion drops its old
    /// series; the other kinds' tables keep them with the object's values.
    extended: Option<Mutex<HashMap<StoreKey, KubeLabels>>>,
}

/// A store's scope (`true` for a ClusterSecretStore), name and namespace.
type StoreKey = (bool, String, String);

/// The object's name, namespace and labels.
fn identity(meta: &ObjectMeta) -> (&str, &str, &BTreeMap<String, String>) {
    static NONE: BTreeMap<String, String> = BTreeMap::new();
    (
        meta.name.as_deref().unwrap_or_default(),
        meta.namespace.as_deref().unwrap_or_default(),
        meta.labels.as_ref().unwrap_or(&NONE),
    )
}

/// A kind's table with its `<kind>_status_condition` and `<kind>_reconcile_duration` gauges
/// registered under upstream's names.
fn object_gauges(registry: &mut Registry, kind: &str, title: &str) -> Arc<ObjectTable> {
    let table = Arc::new(ObjectTable::default());
    table.register(
        registry,
        format!("{kind}_status_condition"),
        format!("The status condition of a specific {title}"),
        Column::Condition,
    );
    table.register(
        registry,
        format!("{kind}_reconcile_duration"),
        format!("The duration time to reconcile the {title}"),
        Column::Duration,
    );
    table
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new(false)
    }
}

impl Metrics {
    /// Every metric, registered; `extended_labels` is `--enable-extended-metric-labels`.
    pub fn new(extended_labels: bool) -> Self {
        let mut registry = Registry::default();
        let secret_store_condition = Family::<ConditionLabels, Gauge>::default();
        registry.register(
            "secretstore_status_condition",
            "The status condition of a specific Secret Store",
            secret_store_condition.clone(),
        );
        let cluster_secret_store_condition = Family::<ConditionLabels, Gauge>::default();
        registry.register(
            "clustersecretstore_status_condition",
            "The status condition of a specific Cluster Secret Store",
            cluster_secret_store_condition.clone(),
        );
        let secret_store_duration = DurationGauge::default();
        registry.register(
            "secretstore_reconcile_duration",
            "The duration time to reconcile the Secret Store",
            secret_store_duration.clone(),
        );
        let cluster_secret_store_duration = DurationGauge::default();
        registry.register(
            "clustersecretstore_reconcile_duration",
            "The duration time to reconcile the Cluster Secret Store",
            cluster_secret_store_duration.clone(),
        );
        let reconcile_total = Family::<ResultLabels, Counter>::default();
        // prometheus-client appends `_total` to counters.
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            reconcile_total.clone(),
        );
        let reconcile_errors = Family::<ControllerLabels, Counter>::default();
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            reconcile_errors.clone(),
        );
        let terminal_errors = Family::<ControllerLabels, Counter>::default();
        registry.register(
            "controller_runtime_terminal_reconcile_errors",
            "Total number of terminal reconciliation errors per controller",
            terminal_errors.clone(),
        );
        let reconcile_panics = Family::<ControllerLabels, Counter>::default();
        registry.register(
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            reconcile_panics.clone(),
        );
        let reconcile_time: HistogramFamily = Family::new_with_constructor(|| {
            Histogram::new(controller_runtime::RECONCILE_TIME_BUCKETS.iter().copied())
        });
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            reconcile_time.clone(),
        );
        let max_concurrent = Family::<ControllerLabels, Gauge>::default();
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            max_concurrent.clone(),
        );
        let active_workers = Family::<ControllerLabels, Gauge>::default();
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            active_workers.clone(),
        );
        let workqueue = workqueue::Workqueue::register(&mut registry);
        registry.register_collector(Box::new(process::ProcessCollector));
        let external_secrets = Arc::new(ObjectTable::default());
        for (name, help, column) in [
            (
                "externalsecret_status_condition",
                "The status condition of a specific External Secret",
                Column::Condition,
            ),
            (
                "externalsecret_reconcile_duration",
                "The duration time to reconcile the External Secret",
                Column::Duration,
            ),
            (
                // prometheus-client appends `_total` to counters.
                "externalsecret_sync_calls",
                "Total number of the External Secret sync calls",
                Column::SyncCalls,
            ),
            (
                "externalsecret_sync_calls_error",
                "Total number of the External Secret sync errors",
                Column::SyncErrors,
            ),
        ] {
            external_secrets.register(&mut registry, name.to_owned(), help.to_owned(), column);
        }
        let provider_calls = CountingGauge::<ProviderCallLabels>::default();
        registry.register(
            "externalsecret_provider_api_calls_count",
            "Number of API calls towards the secret provider",
            provider_calls.clone(),
        );
        let api_requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host",
            api_requests.clone(),
        );
        let api_requests_by_resource = Family::<ResourceRequestLabels, Counter>::default();
        registry.register(
            "rest_client_requests_by_resource",
            "Number of Kubernetes API requests, partitioned by verb, resource and status code \
             (not an upstream metric)",
            api_requests_by_resource.clone(),
        );
        let events_dropped = Counter::default();
        registry.register(
            "events_dropped",
            "Events not sent because the event queue was full (not an upstream metric)",
            events_dropped.clone(),
        );
        let cluster_external_secrets = object_gauges(
            &mut registry,
            "clusterexternalsecret",
            "Cluster External Secret",
        );
        let cluster_push_secrets =
            object_gauges(&mut registry, "clusterpushsecret", "Cluster Push Secret");
        let push_secrets = object_gauges(&mut registry, "pushsecret", "Push Secret");
        Self {
            registry,
            api_requests,
            api_requests_by_resource,
            events_dropped,
            page_size: AtomicUsize::new(0),
            cluster_external_secrets,
            cluster_push_secrets,
            push_secrets,
            external_secrets,
            provider_calls,
            secret_store_condition,
            cluster_secret_store_condition,
            secret_store_duration,
            cluster_secret_store_duration,
            reconcile_total,
            reconcile_errors,
            terminal_errors,
            reconcile_panics,
            reconcile_time,
            max_concurrent,
            active_workers,
            workqueue,
            extended: extended_labels.then(Mutex::default),
        }
    }

    /// The recommended labels the series of an object labelled `labels` carry: none without
    /// extended labels.
    fn kube_labels(&self, labels: &BTreeMap<String, String>) -> KubeLabels {
        match &self.extended {
            Some(_) => KubeLabels::of(labels),
            None => KubeLabels::default(),
        }
    }

    /// The recommended labels the series of store `namespace/name` carry now. With extended
    /// labels, the series under the store's previous labels are dropped when they changed (as
    /// upstream deletes partial matches), so one store never has two live series.
    fn store_labels_now(
        &self,
        cluster: bool,
        name: &str,
        namespace: &str,
        labels: &BTreeMap<String, String>,
    ) -> KubeLabels {
        let Some(remembered) = &self.extended else {
            return KubeLabels::default();
        };
        let current = KubeLabels::of(labels);
        let key = (cluster, name.to_owned(), namespace.to_owned());
        let previous = remembered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, current.clone());
        if let Some(previous) = previous
            && previous != current
        {
            self.drop_store_series(cluster, name, namespace, &previous);
        }
        current
    }

    /// Drops every series of a deleted store, under whatever labels it last had.
    fn forget_store(&self, cluster: bool, name: &str, namespace: &str) {
        let kube = match &self.extended {
            None => KubeLabels::default(),
            Some(remembered) => remembered
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .remove(&(cluster, name.to_owned(), namespace.to_owned()))
                .unwrap_or_default(),
        };
        self.drop_store_series(cluster, name, namespace, &kube);
    }

    fn drop_store_series(&self, cluster: bool, name: &str, namespace: &str, kube: &KubeLabels) {
        self.duration_family(cluster).remove(&StoreLabels {
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            kube: kube.clone(),
        });
        let family = self.condition_family(cluster);
        remove_condition(family, name, namespace, kube, "Ready");
    }

    /// Sets the `Ready` condition and reconcile duration of an object of a table's kind.
    fn set_object(&self, table: &ObjectTable, meta: &ObjectMeta, status: &str, took: Duration) {
        let (name, namespace, labels) = identity(meta);
        table.update(name, namespace, self.kube_labels(labels), |series| {
            series.set_ready(status);
            series.set_duration(took);
        });
    }
}

impl Metrics {
    /// Counts one request to the Kubernetes API (client-go's `rest_client_requests_total`).
    pub fn count_api_request(&self, labels: RequestLabels) {
        self.api_requests.get_or_create(&labels).inc();
    }

    /// Counts one request to the Kubernetes API by verb and resource
    /// (`rest_client_requests_by_resource_total`).
    pub fn count_api_request_by_resource(&self, labels: ResourceRequestLabels) {
        self.api_requests_by_resource.get_or_create(&labels).inc();
    }

    /// Counts one Event dropped by the full event queue.
    pub fn event_dropped(&self) {
        self.events_dropped.inc();
    }

    /// The text exposition of every metric. The page is sized from the previous one: at
    /// 10,000 ExternalSecrets it is megabytes, and growing it by doubling copied it over and
    /// over (the memmoves of issue 24's CPU profile).
    pub fn encode(&self) -> String {
        let last = self.page_size.load(Ordering::Relaxed);
        let mut text = String::with_capacity(last.saturating_add(last / 8));
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String cannot fail");
        self.page_size.store(text.len(), Ordering::Relaxed);
        text
    }

    /// Sets a store's condition gauge as upstream does: 1 for the current status, 0 for the
    /// opposite one.
    pub fn set_store_condition(
        &self,
        cluster: bool,
        store: &ObjectMeta,
        condition: &str,
        status: &str,
    ) {
        let (name, namespace, labels) = identity(store);
        let kube = self.store_labels_now(cluster, name, namespace, labels);
        let family = self.condition_family(cluster);
        set_condition(family, name, namespace, &kube, condition, status);
    }

    /// Sets a ClusterExternalSecret's `Ready` gauge and reconcile duration (nanoseconds).
    pub fn set_cluster_external_secret(&self, template: &ObjectMeta, status: &str, took: Duration) {
        self.set_object(&self.cluster_external_secrets, template, status, took);
    }

    /// Forgets the gauges of a deleted ClusterExternalSecret.
    pub fn remove_cluster_external_secret(&self, name: &str) {
        self.cluster_external_secrets.remove(name, "");
    }

    /// Sets a ClusterPushSecret's `Ready` gauge and reconcile duration (nanoseconds).
    pub fn set_cluster_push_secret(&self, template: &ObjectMeta, status: &str, took: Duration) {
        self.set_object(&self.cluster_push_secrets, template, status, took);
    }

    /// Forgets the gauges of a deleted ClusterPushSecret.
    pub fn remove_cluster_push_secret(&self, name: &str) {
        self.cluster_push_secrets.remove(name, "");
    }

    /// Sets a PushSecret's `Ready` gauge and reconcile duration (nanoseconds).
    pub fn set_push_secret(&self, push_secret: &ObjectMeta, status: &str, took: Duration) {
        self.set_object(&self.push_secrets, push_secret, status, took);
    }

    /// Drops every series of a deleted PushSecret (and, with extended labels, the labels
    /// remembered for it), so a deleted object neither stays on dashboards nor grows the
    /// page and the label memory forever.
    pub fn remove_push_secret(&self, name: &str, namespace: &str) {
        self.push_secrets.remove(name, namespace);
    }

    /// How many objects' extended labels are remembered (0 without extended labels): each
    /// live object at most once, none for a deleted one.
    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.extended.as_ref().map_or(0, |remembered| {
            let stores = remembered
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .len();
            let tables = [
                &self.external_secrets,
                &self.push_secrets,
                &self.cluster_external_secrets,
                &self.cluster_push_secrets,
            ];
            stores + tables.iter().map(|table| table.len()).sum::<usize>()
        })
    }

    /// Sets a store's reconcile duration gauge; like upstream (`float64(time.Duration)`) the
    /// value is in nanoseconds.
    pub fn set_store_duration(&self, cluster: bool, store: &ObjectMeta, took: Duration) {
        let (name, namespace, labels) = identity(store);
        let kube = self.store_labels_now(cluster, name, namespace, labels);
        let labels = StoreLabels {
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            kube,
        };
        self.duration_family(cluster)
            .get_or_create(&labels)
            .set(took.as_nanos() as f64);
    }

    fn duration_family(&self, cluster: bool) -> &DurationGauge {
        if cluster {
            &self.cluster_secret_store_duration
        } else {
            &self.secret_store_duration
        }
    }

    /// Forgets the gauges of a deleted store.
    pub fn remove_store(&self, cluster: bool, name: &str, namespace: &str) {
        self.forget_store(cluster, name, namespace);
    }

    fn condition_family(&self, cluster: bool) -> &Family<ConditionLabels, Gauge> {
        if cluster {
            &self.cluster_secret_store_condition
        } else {
            &self.secret_store_condition
        }
    }

    /// Records one ExternalSecret sync: its duration (nanoseconds, as upstream), the call
    /// counter and, when it failed, the error counter.
    pub fn record_sync(&self, external_secret: &ObjectMeta, took: Duration, failed: bool) {
        let (name, namespace, labels) = identity(external_secret);
        let kube = self.kube_labels(labels);
        self.external_secrets
            .update(name, namespace, kube, |series| {
                series.set_duration(took);
                series.count_sync(failed);
            });
    }

    /// Drops every series of a deleted ExternalSecret, as upstream does, so dashboards and alerts
    /// do not keep reporting objects that no longer exist.
    pub fn remove_external_secret(&self, name: &str, namespace: &str) {
        self.external_secrets.remove(name, namespace);
    }

    /// Sets an ExternalSecret's condition gauge (1 for the current status, 0 for the other).
    pub fn set_external_secret_condition(&self, external_secret: &ObjectMeta, status: &str) {
        let (name, namespace, labels) = identity(external_secret);
        let kube = self.kube_labels(labels);
        self.external_secrets
            .update(name, namespace, kube, |series| {
                series.set_ready(status);
            });
    }

    /// Counts one call to a provider.
    pub fn count_provider_call(&self, provider: &str, call: &str, succeeded: bool) {
        self.provider_calls
            .get_or_create(&ProviderCallLabels {
                provider: provider.to_owned(),
                call: call.to_owned(),
                status: if succeeded { "success" } else { "error" }.to_owned(),
            })
            .inc();
    }
}

/// Upstream's condition gauges: 1 for the current status, 0 for the opposite one.
fn set_condition(
    family: &Family<ConditionLabels, Gauge>,
    name: &str,
    namespace: &str,
    kube: &KubeLabels,
    condition: &str,
    status: &str,
) {
    for candidate in ["True", "False"] {
        let labels = ConditionLabels {
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            condition: condition.to_owned(),
            status: candidate.to_owned(),
            kube: kube.clone(),
        };
        family
            .get_or_create(&labels)
            .set(i64::from(candidate == status));
    }
}

/// Drops both series of a condition gauge.
fn remove_condition(
    family: &Family<ConditionLabels, Gauge>,
    name: &str,
    namespace: &str,
    kube: &KubeLabels,
    condition: &str,
) {
    for status in ["True", "False"] {
        family.remove(&ConditionLabels {
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            condition: condition.to_owned(),
            status: status.to_owned(),
            kube: kube.clone(),
        });
    }
}
