//! The label sets of the metrics, as upstream names them.

use std::collections::BTreeMap;

use prometheus_client::encoding::{EncodeLabel, EncodeLabelSet, LabelSetEncoder};

/// The Kubernetes recommended labels upstream's `--enable-extended-metric-labels` adds to the
/// per-object metrics, under its label names (`app.kubernetes.io/name` becomes
/// `app_kubernetes_io_name`).
const RECOMMENDED: [(&str, &str); 6] = [
    ("app.kubernetes.io/name", "app_kubernetes_io_name"),
    ("app.kubernetes.io/instance", "app_kubernetes_io_instance"),
    ("app.kubernetes.io/version", "app_kubernetes_io_version"),
    ("app.kubernetes.io/component", "app_kubernetes_io_component"),
    ("app.kubernetes.io/part-of", "app_kubernetes_io_part_of"),
    (
        "app.kubernetes.io/managed-by",
        "app_kubernetes_io_managed_by",
    ),
];

/// An object's recommended labels as metric labels: none without
/// `--enable-extended-metric-labels`, all six with it (empty when the object lacks one, as
/// upstream). Values are the object's own labels, never anything read from a provider. One
/// pointer wide, and without extended labels it allocates nothing: it sits in every
/// per-object series.
#[derive(Debug, Clone, Hash, PartialEq, Eq, Default)]
pub struct KubeLabels(Option<Box<[String; 6]>>);

impl KubeLabels {
    /// The six labels of an object whose labels are `labels`.
    pub fn of(labels: &BTreeMap<String, String>) -> Self {
        Self(Some(Box::new(RECOMMENDED.map(|(key, _)| {
            labels.get(key).cloned().unwrap_or_default()
        }))))
    }
}

impl EncodeLabelSet for KubeLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), std::fmt::Error> {
        let Some(values) = &self.0 else {
            return Ok(());
        };
        for ((_, name), value) in RECOMMENDED.iter().zip(values.iter()) {
            (*name, value.as_str()).encode(encoder.encode_label())?;
        }
        Ok(())
    }
}

/// Labels of a status condition gauge (upstream: name, namespace, condition, status).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ConditionLabels {
    /// The store's name.
    pub name: String,
    /// The store's namespace (empty for cluster stores).
    pub namespace: String,
    /// The condition type, e.g. `Ready`.
    pub condition: String,
    /// `True` or `False`.
    pub status: String,
    /// The object's recommended labels, with `--enable-extended-metric-labels`.
    #[prometheus(flatten)]
    pub kube: KubeLabels,
}

/// Labels of a per-object gauge or counter without condition (upstream: name, namespace).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StoreLabels {
    /// The store's name.
    pub name: String,
    /// The store's namespace (empty for cluster stores).
    pub namespace: String,
    /// The object's recommended labels, with `--enable-extended-metric-labels`.
    #[prometheus(flatten)]
    pub kube: KubeLabels,
}

/// Labels of the controller-runtime metrics.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ControllerLabels {
    /// The controller's name, e.g. `secretstore`.
    pub controller: String,
}

/// Labels of `controller_runtime_reconcile_total`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    /// The controller's name.
    pub controller: String,
    /// `success`, `error` or `requeue_after`, as controller-runtime reports them.
    pub result: String,
}

/// Labels of `externalsecret_provider_api_calls_count` (upstream: provider, call, status).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ProviderCallLabels {
    /// Upstream's provider label, e.g. `AWS/SecretsManager` (see `stores::api_calls`).
    pub provider: String,
    /// Upstream's call label, e.g. `GetSecretValue`.
    pub call: String,
    /// `success` or `error`.
    pub status: String,
}

/// Labels of `rest_client_requests_total` (client-go's: code, host, method).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The HTTP status code, or `<error>` when no response came.
    pub code: String,
    /// The API server's host and port.
    pub host: String,
    /// The HTTP method.
    pub method: String,
}
