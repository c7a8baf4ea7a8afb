//! The per-object series of the kinds that come in thousands (ExternalSecret, PushSecret,
//! ClusterExternalSecret, ClusterPushSecret): one table entry per object holds every value of
//! all its series, and each of the kind's metric families is a view that encodes its column of
//! the table. A `Family` per metric kept a label set per series (four `String`s, a label `Vec`
//! and an `Arc`ed atomic each, in a hash table per family): about 860 heap bytes per
//! ExternalSecret, where one entry here takes about a seventh of that. The page is the same:
//! names, label names, values and order, `# HELP`/`# TYPE` lines, and a family without any
//! series is left out as a `Family` is.

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::{Arc, PoisonError, RwLock};

use prometheus_client::encoding::{
    EncodeLabelSet, EncodeMetric, LabelSetEncoder, MetricEncoder, NoLabelSet,
};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::KubeLabels;

/// Every object of one kind, keyed by `<namespace>/<name>` (`/<name>` for cluster-scoped
/// kinds). The API server rejects `/` in namespaces and names, so the first `/` splits the key
/// back into both.
#[derive(Debug, Default)]
pub(super) struct ObjectTable(RwLock<HashMap<Box<str>, Series>>);

/// The condition status an object's `Ready` gauge pair reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// No condition series yet.
    Unset,
    True,
    False,
    /// Neither `True` nor `False`: both series are 0, as upstream sets them.
    Other,
}

/// The values of one object's series; a series whose value is `None` is not on the page. Laid
/// out to fit 40 bytes: counters start at 1 when their series is created, so a zero niche
/// marks a missing one.
#[derive(Debug)]
pub(super) struct Series {
    /// The recommended labels every series of the object carries.
    kube: KubeLabels,
    /// The last reconcile's duration in nanoseconds, as upstream's `float64(time.Duration)`;
    /// meaningful when `timed`.
    duration: f64,
    /// Sync calls; the counter is created with the first one.
    calls: Option<NonZeroU64>,
    /// Failed sync calls; the gauge is created with the first failure.
    errors: Option<NonZeroU64>,
    ready: Status,
    /// Whether the duration gauge exists.
    timed: bool,
}

impl Series {
    fn new(kube: KubeLabels) -> Self {
        Self {
            kube,
            duration: 0.0,
            calls: None,
            errors: None,
            ready: Status::Unset,
            timed: false,
        }
    }

    /// Sets the `Ready` condition to `status` (upstream's `True`/`False`).
    pub(super) fn set_ready(&mut self, status: &str) {
        self.ready = match status {
            "True" => Status::True,
            "False" => Status::False,
            _ => Status::Other,
        };
    }

    /// Sets the reconcile duration gauge.
    pub(super) fn set_duration(&mut self, took: std::time::Duration) {
        self.duration = took.as_nanos() as f64;
        self.timed = true;
    }

    /// Counts one sync call and, when it `failed`, one sync error.
    pub(super) fn count_sync(&mut self, failed: bool) {
        self.calls = Some(counted(self.calls));
        if failed {
            self.errors = Some(counted(self.errors));
        }
    }
}

/// A counter after one more count: 1 when it did not exist yet.
fn counted(count: Option<NonZeroU64>) -> NonZeroU64 {
    count.map_or(NonZeroU64::MIN, |count| count.saturating_add(1))
}

/// The lookup key of `namespace/name`.
fn key(name: &str, namespace: &str) -> String {
    let mut key = String::with_capacity(namespace.len() + 1 + name.len());
    key.push_str(namespace);
    key.push('/');
    key.push_str(name);
    key
}

impl ObjectTable {
    /// Updates the series of `namespace/name`, whose recommended labels are now `kube`. When
    /// they changed, the series under the old labels go (as upstream deletes partial matches):
    /// one object never has two live series of a metric.
    pub(super) fn update(
        &self,
        name: &str,
        namespace: &str,
        kube: KubeLabels,
        change: impl FnOnce(&mut Series),
    ) {
        let key = key(name, namespace);
        let mut objects = self.0.write().unwrap_or_else(PoisonError::into_inner);
        let series = match objects.get_mut(key.as_str()) {
            Some(series) => {
                if series.kube != kube {
                    *series = Series::new(kube);
                }
                series
            }
            None => objects
                .entry(key.into_boxed_str())
                .or_insert_with(|| Series::new(kube)),
        };
        change(series);
    }

    /// Drops every series of a deleted object.
    pub(super) fn remove(&self, name: &str, namespace: &str) {
        self.0
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key(name, namespace).as_str());
    }

    /// How many objects have series.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Registers the view of `column` under `name` and `help`.
    pub(super) fn register(
        self: &Arc<Self>,
        registry: &mut Registry,
        name: String,
        help: String,
        column: Column,
    ) {
        let view = View {
            table: Arc::clone(self),
            column,
        };
        registry.register(name, help, view);
    }
}

/// Which of an object's series a view encodes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Column {
    /// `<kind>_status_condition`: a gauge pair, status `True` and `False`.
    Condition,
    /// `<kind>_reconcile_duration`: a gauge.
    Duration,
    /// `externalsecret_sync_calls_total`: a counter.
    SyncCalls,
    /// `externalsecret_sync_calls_error`: a gauge that only grows.
    SyncErrors,
}

/// One metric family: a column of a table.
#[derive(Debug)]
struct View {
    table: Arc<ObjectTable>,
    column: Column,
}

/// The labels of one series: the fixed ones, then the object's recommended labels, as the
/// `#[prometheus(flatten)]` label sets encoded them.
struct Labels<'a, const N: usize> {
    fixed: [(&'static str, &'a str); N],
    kube: &'a KubeLabels,
}

impl<const N: usize> EncodeLabelSet for Labels<'_, N> {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), std::fmt::Error> {
        self.fixed.encode(encoder)?;
        self.kube.encode(encoder)
    }
}

impl View {
    /// Whether the object has a series in this family.
    fn has(&self, series: &Series) -> bool {
        match self.column {
            Column::Condition => series.ready != Status::Unset,
            Column::Duration => series.timed,
            Column::SyncCalls => series.calls.is_some(),
            Column::SyncErrors => series.errors.is_some(),
        }
    }

    /// Encodes the series of the object `key` in this family.
    fn encode_object(
        &self,
        encoder: &mut MetricEncoder,
        key: &str,
        series: &Series,
    ) -> Result<(), std::fmt::Error> {
        let (namespace, name) = key.split_once('/').unwrap_or(("", key));
        let kube = &series.kube;
        let object = Labels {
            fixed: [("name", name), ("namespace", namespace)],
            kube,
        };
        match self.column {
            Column::Condition => {
                if series.ready == Status::Unset {
                    return Ok(());
                }
                for (status, current) in [("True", Status::True), ("False", Status::False)] {
                    let labels = Labels {
                        fixed: [
                            ("name", name),
                            ("namespace", namespace),
                            ("condition", "Ready"),
                            ("status", status),
                        ],
                        kube,
                    };
                    let value = i64::from(series.ready == current);
                    encoder.encode_family(&labels)?.encode_gauge(&value)?;
                }
                Ok(())
            }
            Column::Duration if series.timed => encoder
                .encode_family(&object)?
                .encode_gauge(&series.duration),
            Column::SyncCalls => match series.calls {
                Some(calls) => encoder
                    .encode_family(&object)?
                    .encode_counter::<NoLabelSet, _, u64>(&calls.get(), None),
                None => Ok(()),
            },
            // A `Gauge`'s value, an i64.
            Column::SyncErrors => match series.errors {
                Some(errors) => {
                    let errors = i64::try_from(errors.get()).unwrap_or(i64::MAX);
                    encoder.encode_family(&object)?.encode_gauge(&errors)
                }
                None => Ok(()),
            },
            Column::Duration => Ok(()),
        }
    }
}

impl EncodeMetric for View {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let objects = self.table.0.read().unwrap_or_else(PoisonError::into_inner);
        for (key, series) in objects.iter() {
            self.encode_object(&mut encoder, key, series)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        match self.column {
            Column::SyncCalls => MetricType::Counter,
            Column::Condition | Column::Duration | Column::SyncErrors => MetricType::Gauge,
        }
    }

    /// A family without series has no `# HELP`/`# TYPE` lines, as an empty `Family`.
    fn is_empty(&self) -> bool {
        let objects = self.table.0.read().unwrap_or_else(PoisonError::into_inner);
        !objects.values().any(|series| self.has(series))
    }
}
