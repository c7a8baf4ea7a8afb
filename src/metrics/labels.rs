//! The label sets of the metrics, as upstream names them.

use prometheus_client::encoding::EncodeLabelSet;

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
}

/// Labels of a per-store gauge without condition (upstream: name, namespace).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StoreLabels {
    /// The store's name.
    pub name: String,
    /// The store's namespace (empty for cluster stores).
    pub namespace: String,
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
